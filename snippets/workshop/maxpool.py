"""1-D max-pooling, window 2, stride 2, where values may tie.

    x          (N, C, L)    float32 or float64, L even
    y          (N, C, L/2)  y[..., i] = max(x[..., 2i], x[..., 2i + 1])

    backward(grad_y (N, C, L/2), x) -> (grad_x (N, C, L),)

Each window passes its upstream gradient to one entry, its maximum. On a tie torch's
max_pool1d picks the first entry of the window, and so does the forward below (max over a
dimension returns the index of the first maximal value, and its gradient goes there);
torch.maximum(a, b) would split a tie's gradient half and half instead. The task is to match
the forward.
"""

import torch
import torch.nn.functional as F


# --8<-- [start:forward]
def forward(x):
    N, C, L = x.shape
    pairs = x.reshape(N, C, L // 2, 2)                       # (N, C, L/2, 2), one window per pair
    return pairs.max(dim=-1).values                          # (N, C, L/2); a tie goes to the first
# --8<-- [end:forward]


# --8<-- [start:backward]
def backward(grad_y, x):
    N, C, L = x.shape
    pairs = x.reshape(N, C, L // 2, 2)                       # (N, C, L/2, 2)
    first = (pairs[..., 0] >= pairs[..., 1]).to(x.dtype)     # (N, C, L/2): 1 where the first wins, ties too
    grad = torch.stack([grad_y * first, grad_y * (1 - first)], dim=-1)  # (N, C, L/2, 2), one winner each
    return (grad.reshape(N, C, L),)
# --8<-- [end:backward]


# ------------------------------------------------------------------ what the checker needs
NAME = "maxpool"
TITLE = "max-pool 1-D (window 2, stride 2) with ties"
SIGNATURE_FORWARD = "forward(x) -> y"
SIGNATURE_BACKWARD = "backward(grad_y, x) -> (grad_x,)"
GRADS = ("grad_x",)
DIFF = (0,)
TWICE = True
SHAPES = {"x (2, 3, 6), no ties": (2, 3, 6), "batch 1: x (1, 1, 4)": (1, 1, 4),
          "x (2, 2, 8) with ties": (2, 2, 8)}
CASES = tuple(SHAPES)
STABLE = ()


def inputs(label, dtype):
    gen = torch.Generator().manual_seed(list(SHAPES).index(label))
    if "ties" in label and "no ties" not in label:
        return (torch.randint(0, 3, SHAPES[label], generator=gen).to(dtype),)  # small integers: many ties
    return (torch.randn(SHAPES[label], generator=gen, dtype=dtype),)


def torch_forward(x):
    return F.max_pool1d(x, kernel_size=2, stride=2)


HINTS = {
    "forward": "each output is the larger of a pair: x reshaped to (N, C, L/2, 2), max over the last dimension",
    "backward:grad_x": "each window sends grad_y to exactly one entry, its maximum; on a tie torch picks "
                       "the first entry of the window, not every tied entry and not the last",
}
