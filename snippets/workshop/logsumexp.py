"""logsumexp over the last dimension, stable.

    x          (..., D)  float32 or float64
    y          (...)     y = log(sum_j exp(x[..., j]))

    backward(grad_y (...), x) -> (grad_x (..., D),)

Stable: finite for entries of any size, large positive (exp overflows to inf) or large
negative (every exp underflows to 0, and log 0 = -inf).
"""

import torch

from snippets.workshop.check import _fmt, size


# --8<-- [start:forward]
def forward(x):
    m = x.max(dim=-1, keepdim=True).values                # (..., 1)
    m = m.masked_fill(~torch.isfinite(m), 0.0)            # a row of -inf, or holding inf: no shift
    return (x - m).exp().sum(dim=-1).log() + m[..., 0]    # (...)
# --8<-- [end:forward]


# --8<-- [start:backward]
def backward(grad_y, x):
    m = x.max(dim=-1, keepdim=True).values                # (..., 1)
    m = m.masked_fill(~torch.isfinite(m), 0.0)            # as in forward
    e = (x - m).exp()                                     # (..., D), at most 1 if m is finite
    p = e / e.sum(dim=-1, keepdim=True)                   # (..., D), softmax: dy/dx
    return (p * grad_y[..., None],)                       # (..., D): each row scaled by its grad_y
# --8<-- [end:backward]


# ------------------------------------------------------------------ what the checker needs
NAME = "logsumexp"
TITLE = "logsumexp over the last dimension, stable"
SIGNATURE_FORWARD = "forward(x) -> y"
SIGNATURE_BACKWARD = "backward(grad_y, x) -> (grad_x,)"
GRADS = ("grad_x",)
DIFF = (0,)


def cases(gen, dtype):
    """The cases of one run in ``dtype``, drawn with ``gen``: [(label, (x,))]."""
    shapes = [(size(gen, 2, 7), size(gen, 2, 9)), (1, size(gen, 2, 9)),
              (size(gen, 2, 3), size(gen, 2, 4), size(gen, 2, 5))]
    return [(f"x {_fmt(s)}", (torch.randn(s, generator=gen, dtype=dtype),)) for s in shapes]


def stable_cases(gen):
    """float32 x of size 1e3, one row near -3000 (every exp underflows): [(label, (x,))]."""
    shape = (size(gen, 2, 5), size(gen, 2, 7))
    x = 1000 * torch.randn(shape, generator=gen)
    x[1] -= 3000
    return [(f"x {_fmt(shape)} of size 1e3, row 1 near -3000", (x,))]


def torch_forward(x):
    return torch.logsumexp(x, dim=-1)


HINTS = {  # earned in order: where to look, the structure, a check by hand, the formula
    "forward": ["a log of a sum of exponentials over the last dimension",
                "shift each row by its maximum m before exp, and add m back after the log",
                "x [0, 0] gives log 2, about 0.693; x [1000, 1000] gives about 1000.693",
                "y = m + log(sum(exp(x - m))) with m the max of the row"],
    "grad_x": [
        "differentiate log(sum_j exp(x_j)) with respect to one x_k: you have seen the result in another layer",
        "dy/dx_k is a softmax of the row; grad_y has one number per row, and each row's gradient is scaled by its own",
        "each row of grad_x sums to its grad_y; x [0, 0] with grad_y 2 gives (1, 1)",
        "grad_x = softmax(x, dim=-1) * grad_y[..., None]",
    ],
    "stability": ["which exp overflows at 1000, and which log is log(0) for a row near -3000?",
                  "the output and the softmax in the gradient both survive shifting a row by a constant",
                  "x [-3000, -3000] gives y about -2999.307 and grad_x grad_y * (0.5, 0.5)",
                  "subtract the row maximum m before exp and add it back after log"],
}
