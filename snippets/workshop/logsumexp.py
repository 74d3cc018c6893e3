"""logsumexp over the last dimension, stable.

    x          (..., D)  float32 or float64
    y          (...)     y = log(sum_j exp(x[..., j]))

    backward(grad_y (...), x) -> (grad_x (..., D),)

Stable: finite for entries of any size, large positive (exp overflows to inf) or large
negative (every exp underflows to 0, and log 0 = -inf).
"""

import torch


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
    e = (x - m).exp()                                     # (..., D), at most 1
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
TWICE = True
SHAPES = {"x (4, 5)": (4, 5), "batch 1: x (1, 7)": (1, 7), "x (2, 3, 4)": (2, 3, 4),
          "x (3, 4) of size 1e3, one row near -3000": (3, 4)}
CASES = tuple(SHAPES)[:3]
STABLE = tuple(SHAPES)[3:]


def inputs(label, dtype):
    gen = torch.Generator().manual_seed(list(SHAPES).index(label))
    x = torch.randn(SHAPES[label], generator=gen, dtype=dtype)
    if label in STABLE:
        x = 1000 * x
        x[1] -= 3000                                      # every exp of this row underflows
    return (x,)


def torch_forward(x):
    return torch.logsumexp(x, dim=-1)


HINTS = {
    "forward": "y = m + log(sum(exp(x - m))) with m the max of the row",
    "backward": "dy/dx is softmax(x) along the last dimension; multiply it by grad_y[..., None], "
                "the upstream gradient of each row",
    "backward:raised": "grad_y has shape (...) and softmax (..., D): multiply by grad_y[..., None] "
                       "so each row is scaled by its own grad_y",
    "stability": "subtract the row maximum m before exp and add it back after log: exp(1000) is inf, "
                 "and exp(-3000) is 0, whose log is -inf",
}
