"""Log-sum-exp and softmax cross-entropy as custom autograd Functions.

``StableLogSumExp.apply(x)``: x (N, C) float -> (N,), log sum_c exp(x[n, c]), reduced over the
last dimension (any leading dimensions are kept: (..., C) -> (...)). The forward subtracts the
row maximum first, so it is finite wherever the result is. It saves x and its own output and
recomputes the softmax in backward: dL/dx = g * exp(x - out).

``SoftmaxCrossEntropy.apply(logits, target)``: logits (N, C) float, target (N,) int64 class
indices in [0, C) -> a 0-d mean loss. It saves logits and target and recomputes the softmax in
backward: dL/dlogits = g * (softmax(logits) - onehot(target)) / N; None for target.

Invariant: both backwards are built from differentiable torch operations on inputs and outputs
of forward, so both Functions pass gradcheck and gradgradcheck in float64.

``StoredSoftmaxCrossEntropy`` is the other choice, kept for comparison: it saves the softmax
computed in forward (an intermediate, one (N, C) tensor) instead of recomputing it. Autograd
cannot differentiate through a tensor made inside forward, so it supports one derivative only
and is marked ``once_differentiable``.
"""

# --8<-- [start:logsumexp]
import torch
from torch.autograd.function import once_differentiable


def _check_scores(x, name):
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        got = x.dtype if isinstance(x, torch.Tensor) else type(x).__name__
        raise TypeError(f"{name} must be a floating-point tensor, got {got}; convert real scores with .float() "
                        "or .double() (complex scores are not supported)")
    if x.dim() < 1 or x.shape[-1] == 0:
        raise ValueError(f"{name} must have a non-empty last dimension to reduce over, got shape {tuple(x.shape)}")


def _max_shifted_logsumexp(x):
    """log sum exp over the last dim of x (..., C) -> (...), without overflow."""
    m = x.amax(dim=-1, keepdim=True)  # (..., 1): the largest score of each row
    m = m.masked_fill(~torch.isfinite(m), 0.0)  # a row of all -inf (or an inf) needs no shift
    return m.squeeze(-1) + torch.log(torch.exp(x - m).sum(dim=-1))  # every exp(.) is <= 1


def _log_softmax(x):
    """log softmax over the last dim of x (..., C), from the row shifted by its maximum, as
    torch computes it: lse(x) - x[c] would lose a tie's log 2 at 1e17 (float64's spacing there
    is 16). An infinite maximum is not replaced, as torch does not: such a row is NaN."""
    s = x - x.amax(dim=-1, keepdim=True)  # (..., C), every entry <= 0
    return s - torch.log(torch.exp(s).sum(dim=-1, keepdim=True))


class StableLogSumExp(torch.autograd.Function):
    """x (..., C) float -> out (...): log sum_c exp(x[..., c]). Backward: g * exp(x - out)."""

    @staticmethod
    def forward(ctx, x):
        _check_scores(x, "x")
        out = _max_shifted_logsumexp(x)  # (...)
        ctx.save_for_backward(x, out)  # an input and the output: no new tensor kept
        return out

    @staticmethod
    def backward(ctx, grad_out):  # grad_out (...), the shape of out
        x, out = ctx.saved_tensors
        softmax = torch.exp(x - out.unsqueeze(-1))  # (..., C), recomputed, rows sum to 1
        return grad_out.unsqueeze(-1) * softmax  # (..., C), the shape of x
# --8<-- [end:logsumexp]


# --8<-- [start:cross_entropy]
def _check_logits_target(logits, target):
    _check_scores(logits, "logits")
    if logits.dim() != 2:
        fix = ("for one sample (C,), pass logits.unsqueeze(0)" if logits.dim() == 1 else
               "for (N, C, d...), pass logits.movedim(1, -1).reshape(-1, C) and target.reshape(-1): "
               "the classes are on dim 1")
        raise ValueError(f"logits must be (N, C), got shape {tuple(logits.shape)}; {fix}")
    if not isinstance(target, torch.Tensor):
        raise TypeError(f"target must be an int64 tensor of class indices, got {type(target).__name__}; "
                        "pass torch.tensor(target)")
    if target.dtype != torch.int64:
        fix = ("for one-hot rows, pass target.argmax(dim=1)" if target.is_floating_point() and target.dim() == 2
               else "use target.long()")
        raise TypeError(f"target must be an int64 tensor of class indices, got {target.dtype}; {fix}")
    n, c = logits.shape
    if target.shape != (n,):
        raise ValueError(
            f"target must have shape (N,) = ({n},) to match logits {tuple(logits.shape)}, "
            f"got {tuple(target.shape)}; pass one class index per row"
        )
    if n == 0:
        raise ValueError("an empty batch has no mean loss: pass at least one row")
    bad = target[(target < 0) | (target >= c)]
    if bad.numel():
        raise ValueError(f"target holds {bad.numel()} class index(es) outside [0, {c}), such as "
                         f"{bad[:3].tolist()}: drop the rows to ignore (an ignore_index such as -100) "
                         "before the loss")


class SoftmaxCrossEntropy(torch.autograd.Function):
    """logits (N, C) float, target (N,) int64 -> 0-d mean of lse(logits[n]) - logits[n, target[n]]."""

    @staticmethod
    def forward(ctx, logits, target):
        _check_logits_target(logits, target)
        logp = _log_softmax(logits).gather(1, target.unsqueeze(1)).squeeze(1)  # (N,): the true class
        loss = (-logp).mean()  # (), lse(logits) - logits[target]; negated first, so 0 is +0.0
        ctx.save_for_backward(logits, target)  # the inputs; the softmax is recomputed in backward
        return loss

    @staticmethod
    def backward(ctx, grad_loss):  # grad_loss (), a scalar
        logits, target = ctx.saved_tensors
        n, c = logits.shape
        softmax = torch.softmax(logits, dim=1)  # (N, C), recomputed from the saved input
        onehot = torch.nn.functional.one_hot(target, c).to(logits.dtype)  # (N, C)
        grad_logits = grad_loss * (softmax - onehot) / n  # (N, C), the shape of logits
        return grad_logits, None  # target is an index, it has no gradient
# --8<-- [end:cross_entropy]


# --8<-- [start:stored]
class StoredSoftmaxCrossEntropy(torch.autograd.Function):
    """Same loss and first derivative as SoftmaxCrossEntropy; saves the softmax (N, C) instead."""

    @staticmethod
    def forward(ctx, logits, target):
        _check_logits_target(logits, target)
        logp = _log_softmax(logits)  # (N, C)
        softmax = torch.exp(logp)  # (N, C), made here: a new tensor to keep
        ctx.save_for_backward(softmax, target)
        return (-logp.gather(1, target.unsqueeze(1)).squeeze(1)).mean()

    @staticmethod
    @once_differentiable  # softmax was computed with recording off: no second derivative
    def backward(ctx, grad_loss):
        softmax, target = ctx.saved_tensors
        n, c = softmax.shape
        onehot = torch.nn.functional.one_hot(target, c).to(softmax.dtype)
        return grad_loss * (softmax - onehot) / n, None
# --8<-- [end:stored]
