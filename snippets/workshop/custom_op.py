"""Swish with a learnable slope, as a custom operator: its autograd is yours to register.

    x          (..., D)  float32 or float64
    a          (D,)      one slope per feature, broadcast over every leading dimension of x
    y          (..., D)  y = x * sigmoid(a * x)

    backward(grad_y (..., D), x, a) -> (grad_x (..., D), grad_a (D,))

This module's forward is the operator ``autograd_book_workshop::swish`` (a notebook defines its
own, under another name), made with ``torch.library.custom_op``: its body runs with autograd off, so autograd knows its gradient
only through ``register_autograd``. ``register(op, backward)`` makes a ``backward(grad_y, x, a)``
the formula of ``op``; the check ``opcheck`` registers yours on a fresh copy of the operator and
runs ``torch.library.opcheck`` on it, which traces your backward through AOTAutograd with fake
tensors and dynamic shapes, as ``torch.compile`` does, and compares it with eager mode.
Stable: finite for ``a * x`` of size 1e3 and more, where ``exp(-a * x)`` overflows.
"""

import warnings

import torch

from snippets.workshop.check import Mismatch, _fmt, size

OP_NAME = "autograd_book_workshop::swish"


# --8<-- [start:forward]
@torch.library.custom_op(OP_NAME, mutates_args=())
def swish(x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(a * x)                 # (..., D); autograd does not see inside


@swish.register_fake
def _(x, a):
    return torch.empty_like(x)                      # x's shape and dtype: what compile traces with


def forward(x, a):
    return swish(x, a)                              # (..., D)
# --8<-- [end:forward]


# --8<-- [start:register]
def setup_context(ctx, inputs, output):
    x, a = inputs
    ctx.save_for_backward(x, a)                     # what backward(grad_y, x, a) needs


def register(op, backward):
    """Make ``backward(grad_y, x, a) -> (grad_x, grad_a)`` the autograd formula of ``op``."""
    op.register_autograd(lambda ctx, grad_y: tuple(backward(grad_y, *ctx.saved_tensors)),
                         setup_context=setup_context)
# --8<-- [end:register]


# --8<-- [start:backward]
def backward(grad_y, x, a):
    D = a.shape[0]
    s = torch.sigmoid(a * x)                        # (..., D), in [0, 1] for any a * x
    xds = x * (s * (1 - s))                         # (..., D), x * d sigmoid(z)/dz: no exp, and
    grad_x = grad_y * (s + a * xds)                 # no a * x or x * x to overflow in float16
    grad_a = (grad_y * x * xds).reshape(-1, D).sum(dim=0)  # (D,): a was broadcast over the rows
    return grad_x, grad_a
# --8<-- [end:backward]


register(swish, backward)


# ------------------------------------------------------------------ what the checker needs
NAME = "custom_op"
TITLE = "a custom op's autograd: Swish with a learnable slope"
SIGNATURE_FORWARD = "forward(x, a) -> y"
SIGNATURE_BACKWARD = "backward(grad_y, x, a) -> (grad_x, grad_a)"
GRADS = ("grad_x", "grad_a")
DIFF = (0, 1)


def cases(gen, dtype):
    """The cases of one run in ``dtype``, drawn with ``gen``: [(label, (x, a))]; slopes of both
    signs, one of them 0 (y = x / 2 there); an x of 0 in each (a y / x is NaN there); a 1-D x
    (sum(dim=()) sums every dimension) and a D of 1 (squeeze() makes grad_a 0-d)."""
    def case(lead, D):
        x = 2 * torch.randn(*lead, D, generator=gen, dtype=dtype)
        x.view(-1)[-1] = 0.0
        a = torch.randn(D, generator=gen, dtype=dtype)
        if D > 1:
            a[0] = 0.0
        return f"x {_fmt((*lead, D))}, a ({D},)", (x, a)

    out = [case(lead, size(gen, 2, 6)) for lead in ((size(gen, 2, 7),), (), (size(gen, 2, 3), size(gen, 2, 4)))]
    return out + [case((size(gen, 2, 4),), 1)]


def stable_cases(gen):
    """float32 x of size 1e3, slopes near 1: a * x reaches +-3000, where exp(-a * x) overflows."""
    shape = (size(gen, 2, 5), size(gen, 2, 6))
    x = 1000 * torch.randn(shape, generator=gen)
    x[0, 0] = -3000.0                               # exp(3000) is inf in float32 and float64
    a = 1 + 0.1 * torch.rand(shape[-1], generator=gen)
    return [(f"x {_fmt(shape)} of size 1e3, a near 1", (x, a))]


def torch_forward(x, a):
    return x * torch.sigmoid(a * x)


_copies = []  # the operators opcheck() made, one per call: an operator's name is defined once
_torch_opcheck = torch.library.opcheck  # bound here, before any reader's code runs


def opcheck(backward):
    """Register ``backward`` on a fresh copy of the operator and run ``torch.library.opcheck`` on
    it, in float64 and float32: the schema, the fake implementation, that autograd reaches the
    registered formula, and the formula compiled (``aot_dispatch_dynamic``) against the formula
    run eagerly. It does not judge the gradient's values: the backward check did."""
    if not callable(backward):
        raise TypeError(f"opcheck(backward): pass your function {SIGNATURE_BACKWARD}")
    def body(x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return torch_forward(x, a)

    op = torch.library.custom_op(f"autograd_book_workshop::swish_{len(_copies)}", body, mutates_args=())
    _copies.append(op)
    op.register_fake(lambda x, a: torch.empty_like(x))
    register(op, backward)
    gen = torch.Generator().manual_seed(0)
    for dtype in (torch.float64, torch.float32):
        x = torch.randn(3, 4, generator=gen, dtype=dtype, requires_grad=True)
        a = torch.randn(4, generator=gen, dtype=dtype, requires_grad=True)
        try:
            with warnings.catch_warnings():  # opcheck runs under anomaly mode, which warns on a failure
                warnings.simplefilter("ignore")
                _torch_opcheck(op, (x, a))
        except Exception as exc:  # noqa: BLE001: opcheck's error, or one of the reader's code it ran
            first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
            first = first.replace(" (scroll up for stack trace)", "")
            raise Mismatch(f"torch.library.opcheck failed with your backward registered, on x (3, 4), "
                           f"a (4,), {str(dtype)[6:]}:\n{first}", "opcheck", "opcheck") from None
    return "torch.library.opcheck passes with your backward registered (float64, float32)"


EXTRA_CHECKS = (("opcheck", opcheck),)

HINTS = {  # earned in order: where to look, the structure, a check by hand, the formula
    "forward": ["the forward is given: call it, or write x times the sigmoid of a * x",
                "a (D,) broadcast over the rows of x, one sigmoid per entry",
                "x 0 gives 0 for any a; a 0 gives x / 2",
                "y = x * sigmoid(a * x), a broadcast over the rows of x"],
    "grad_x": ["x appears twice in the forward, once outside the sigmoid and once inside: the product rule gives two terms",
               "the derivative of the sigmoid is a function of the sigmoid itself, and z = a * x brings a factor a",
               "where a is 0, grad_x is grad_y / 2; at x 0, grad_x is grad_y / 2 for any a",
               "grad_x = grad_y * (s + a * x * s * (1 - s)), s = sigmoid(a * x)"],
    "grad_a": ["a (D,) is used by every row of x: its gradient collects from all of them",
               "per entry, the derivative of y in a is x times the derivative of the sigmoid times x; then a sum over the rows",
               "at x 0 the entry adds nothing; with one row, x 1 and a 0, grad_a is grad_y / 4",
               "grad_a = sum over every dimension but the last of grad_y * x * x * s * (1 - s)"],
    "stability": ["which exp overflows when a * x is -3000, and what is inf / inf?",
                  "write the derivative of the sigmoid with the sigmoid itself, which stays in [0, 1]",
                  "at a * x = -3000 the sigmoid is 0 and its derivative 0: grad_x there is 0, not nan",
                  "ds = s * (1 - s) with s = torch.sigmoid(a * x), never exp(-a * x) itself"],
    "opcheck": ["opcheck traces your backward as torch.compile does, with fake tensors: every step must be a torch "
                "operation on tensors",
                "a fake tensor has a shape and a dtype but no values: no .numpy(), and nothing that needs a "
                "tensor's value in Python (.item(), an if on it) inside backward",
                "the backward check passed, so the formula is right: only how it is computed must change",
                "build grad_x and grad_a from torch operations on grad_y, x and a only"],
}
