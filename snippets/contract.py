"""A custom autograd Function with its contract written as checks.

The Function is a numerically stable softplus, softplus(x) = log(1 + exp(x)), computed as
max(x, 0) + log1p(exp(-|x|)) so that exp never sees a positive argument and cannot overflow.
Its derivative is sigmoid(x), which lies in [0, 1].

Layers of the contract, each a function here:

* schema  -- ``check_input``: type, dtype, shape and finiteness of the input, before forward;
* the op  -- ``StableSoftplus`` (the Function) and ``softplus`` (schema check, then the op);
* metrics -- ``max_grad_error``, ``saved_bytes_per_element``;
* policy  -- ``grads_are_finite``: decide whether an optimizer step may be taken;
* eval gate -- ``eval_gate``: accept or reject new weights by a held-out loss.
"""

# --8<-- [start:function]
import torch


class StableSoftplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)) for a floating tensor x of any shape (*).

    Output: same shape and dtype as x. For finite x the output is finite and
    output >= max(x, 0). Backward: grad_x = grad_out * sigmoid(x), a factor in [0, 1].
    Saves x only (one tensor the size of x) for backward. The backward is built from
    differentiable torch ops, so double backward works too.
    """

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)
# --8<-- [end:function]


# --8<-- [start:schema]
from snippets.views import is_nested


def _shape_text(shape):
    return "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"


def check_input(x, shape=None):
    """Raise unless x meets the input contract of ``softplus``; return None.

    x: a floating-point torch.Tensor, every value finite. shape: optional expected shape,
    a tuple whose None entries match any size of one dimension, e.g. (None, 4) for a batch (N, 4).
    x must be dense (strided) and hold data (not on the meta device).
    Raises TypeError for a wrong type or dtype, ValueError for a wrong shape or a
    non-finite value; each message says what to do.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"x must be a torch.Tensor, got {type(x).__name__}: "
            "convert it with torch.as_tensor(x, dtype=torch.float32)"
        )
    if x.is_complex():
        raise TypeError(f"x must be real floating point, got {x.dtype}: softplus takes real values; "
                        "pass x.real or x.abs(), whichever you mean")
    if not x.is_floating_point():
        raise TypeError(
            f"x must be floating point, got {x.dtype}: convert it with x.float() "
            "(or x.double() for a gradient check)"
        )
    if x.element_size() == 1:   # a float8 dtype: a storage format, with few operations
        raise TypeError(f"x must be float16 or wider, got {x.dtype}: convert it with x.float()")
    if is_nested(x):
        raise TypeError("x is a nested tensor, with no single shape: pass one of its tensors, or "
                        "x.to_padded_tensor(0.0)")
    if x.layout != torch.strided or x.is_meta:
        raise TypeError(f"x must be a dense tensor with values, got layout {x.layout} on {x.device}: "
                        "pass x.to_dense(), or a tensor on a device that holds data")
    if shape is not None:
        if not isinstance(shape, (tuple, list)) or not all(
                s is None or (isinstance(s, int) and not isinstance(s, bool) and s >= 0) for s in shape):
            raise TypeError(f"shape must be a tuple of sizes and None, e.g. (None, 4) for (N, 4); got {shape!r}")
        shape = tuple(shape)
        if len(shape) != x.dim() or any(s is not None and s != n for s, n in zip(shape, x.shape)):
            raise ValueError(
                f"x must have shape {_shape_text(shape)}, got {tuple(x.shape)}: "
                "reshape the batch or fix the code that built it"
            )
    bad = ~torch.isfinite(x)
    if bad.any():
        count = int(bad.sum())
        if x.dim() == 0:
            where = ""
        else:
            rows = bad.reshape(x.shape[0], -1).any(dim=1).nonzero().flatten().tolist()
            where = f" in row(s) {rows}"
        raise ValueError(
            f"x has {count} non-finite value(s) (inf or NaN){where}: "
            "drop or repair those rows before the forward pass"
        )


def softplus(x, shape=None):
    """Check x against the contract (``check_input``), then apply ``StableSoftplus``."""
    check_input(x, shape)
    return StableSoftplus.apply(x)
# --8<-- [end:schema]


# --8<-- [start:metrics]
def max_grad_error(fn, x, eps=1e-6):
    """Largest |autograd gradient - central finite difference| of an elementwise fn at x.

    fn maps a tensor to a tensor of the same shape, elementwise (so its Jacobian is
    diagonal and one perturbation of all of x at once gives every derivative). That is
    checked on values, not only on the shape, at a cost of one evaluation of fn per element:
    moving one element of x must leave every other element of fn's output bitwise unchanged
    (cumsum, softmax or flip are refused: use torch.autograd.gradcheck for them).
    x must be float64: in float32, at eps = 1e-6, the finite difference itself is wrong by 1e-2
    or more.
    Returns a Python float.
    """
    if not isinstance(x, torch.Tensor) or x.dtype != torch.float64:
        fix = "x.double()" if isinstance(x, torch.Tensor) else "torch.tensor(values, dtype=torch.float64)"
        got = x.dtype if isinstance(x, torch.Tensor) else type(x).__name__
        raise TypeError(f"x must be a float64 tensor, got {got}: pass {fix}")
    if not 0 < eps < float("inf"):
        raise ValueError(f"eps must be positive and finite, got {eps}: use about 1e-6 in float64")
    if x.numel() == 0:
        raise ValueError("x is empty: pass at least one point to measure the gradient error at")
    if not torch.isfinite(x).all():
        raise ValueError("x holds NaN or inf: measure the gradient error at finite points")
    x = x.detach().requires_grad_(True)
    y = fn(x)
    if not isinstance(y, torch.Tensor) or y.shape != x.shape:
        raise ValueError("fn must be elementwise: its output must have the shape of x")
    if y.dtype != torch.float64:
        raise TypeError(f"fn returned {y.dtype} for a float64 x: the finite difference would carry that "
                        "dtype's rounding; compute fn in float64")
    if not y.requires_grad:
        raise ValueError("fn's output does not require grad: fn detached it or ran under torch.no_grad(); "
                         "return a result computed from x with grad mode on")
    (analytic,) = torch.autograd.grad(y.sum(), x)
    with torch.no_grad():
        for i in range(x.numel()):  # an elementwise fn changes only the output of the moved element
            moved = torch.zeros(x.numel(), dtype=torch.bool)
            moved[i] = True
            y2 = fn(torch.where(moved.view(x.shape), x + eps, x))
            same = ((y2 == y) | (y2.isnan() & y.isnan())).reshape(-1) | moved
            if not same.all():
                raise ValueError(f"fn is not elementwise: moving x's flat index {i} changed its output at flat "
                                 f"index {int((~same).nonzero()[0])}; max_grad_error needs a diagonal Jacobian: "
                                 "check fn with torch.autograd.gradcheck instead")
        numeric = (fn(x + eps) - fn(x - eps)) / (2 * eps)
    return (analytic - numeric).abs().max().item()


def saved_bytes_per_element(fn, x):
    """Bytes that autograd keeps for backward when fn(x) runs, per element of x.

    Counts every storage the graph saves, once (snippets/saved_bytes.py does the counting,
    with torch.autograd.graph.saved_tensors_hooks), including x itself if it is saved.
    fn(x) must build a graph (x, or fn's parameters, must require grad). Returns a Python float.
    """
    from snippets.saved_bytes import saved_bytes

    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a tensor, got {type(x).__name__}")
    if x.numel() == 0:
        raise ValueError("x is empty: pass at least one element")
    _, nbytes = saved_bytes(fn, x)
    return nbytes / x.numel()
# --8<-- [end:metrics]


# --8<-- [start:controls]
import math
import numbers


def grads_are_finite(parameters):
    """Policy check: True if every parameter's .grad is finite (no inf, no NaN).

    Call it after backward() and before optimizer.step(); skip the step when it is False.
    A parameter with no .grad that does not require grad (frozen) is skipped; one that requires
    grad and has none raises, because a missing gradient is a bug of its own. Every .grad is
    checked, a frozen parameter's too (a step still applies it). A sparse .grad is read by its values.
    """
    if isinstance(parameters, (torch.nn.Module, torch.Tensor)):
        raise TypeError(
            f"parameters must be an iterable of tensors, got a {type(parameters).__name__}: "
            "pass model.parameters() (or [tensor] for one tensor)"
        )
    parameters = list(parameters)
    if not parameters:
        raise ValueError("no parameters given: pass model.parameters() or a list of tensors")
    for i, p in enumerate(parameters):
        if not isinstance(p, torch.Tensor):
            raise TypeError(f"parameter {i} is a {type(p).__name__}: pass model.parameters() or a list of tensors")
    for i, p in enumerate(parameters):
        if p.requires_grad and p.grad is None:
            raise ValueError(f"parameter {i} requires grad and has no .grad: call loss.backward() before "
                             "checking, and pass only parameters the loss reaches")
    held = [p.grad for p in parameters if p.grad is not None]
    grads = [g.coalesce().values() if g.is_sparse else g for g in held]
    return all(bool(torch.isfinite(g).all()) for g in grads)


def eval_gate(candidate_loss, baseline_loss, max_increase=0.1):
    """Eval gate: accept new weights only if their held-out loss is finite and at most
    ``max_increase`` (a fraction) above the baseline's. Returns (accepted, reason)."""
    for name, value in (("candidate_loss", candidate_loss), ("baseline_loss", baseline_loss)):
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, torch.Tensor)):
            raise TypeError(f"{name} must be a number or a one-element tensor, got {type(value).__name__}")
        if isinstance(value, torch.Tensor) and value.dtype == torch.bool:
            raise TypeError(f"{name} must be a number or a one-element tensor, got a bool tensor")
        if isinstance(value, torch.Tensor) and value.numel() != 1:
            raise ValueError(f"{name} must be one number, got shape {tuple(value.shape)}: reduce it, e.g. .mean()")
    candidate_loss, baseline_loss = float(candidate_loss), float(baseline_loss)
    if not (math.isfinite(baseline_loss) and baseline_loss >= 0):
        raise ValueError(
            f"baseline loss is {baseline_loss}: gate against the finite, non-negative held-out "
            "loss of a model known to be good"
        )
    if isinstance(max_increase, torch.Tensor) and max_increase.numel() == 1 and max_increase.dtype != torch.bool:
        max_increase = float(max_increase)   # a one-element tensor, as the losses may be
    if isinstance(max_increase, bool) or not isinstance(max_increase, numbers.Real):
        raise TypeError(f"max_increase must be a number, e.g. 0.1 for 10 %; got {type(max_increase).__name__}")
    if not 0 <= max_increase < math.inf:
        raise ValueError(f"max_increase must be a finite number >= 0, got {max_increase}: e.g. 0.1 for 10 %")
    if not math.isfinite(candidate_loss):
        return False, f"held-out loss is {candidate_loss}"
    if candidate_loss < 0:
        raise ValueError(
            f"candidate_loss is {candidate_loss}: the gate compares non-negative losses (a mean "
            "cross-entropy or squared error); pass the held-out loss itself"
        )
    limit = baseline_loss * (1 + max_increase)
    if candidate_loss > limit:
        return False, f"held-out loss {candidate_loss:.3g} > limit {limit:.3g}"
    return True, f"held-out loss {candidate_loss:.3g} <= limit {limit:.3g}"
# --8<-- [end:controls]
