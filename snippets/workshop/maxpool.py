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

from snippets.workshop.check import _fmt, size


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


def cases(gen, dtype):
    """The cases of one run in ``dtype``, drawn with ``gen``: [(label, (x,))]; the last has
    small integers, so many windows tie, and one window of every row ties whatever the draw."""
    out = []
    for shape, what in (((size(gen, 2, 3), size(gen, 1, 3), 2 * size(gen, 1, 4)), ""),
                        ((1, size(gen, 1, 3), 2 * size(gen, 1, 4)), "batch 1: "),
                        ((size(gen, 2, 3), size(gen, 1, 3), 2 * size(gen, 2, 4)), "ties: ")):
        if what.startswith("ties"):
            x = torch.randint(0, 3, shape, generator=gen).to(dtype)
            tie = size(gen, 0, shape[2] // 2 - 1)
            x[..., 2 * tie + 1] = x[..., 2 * tie]                # window `tie` of every row ties
            what = f"ties (window {tie} of every row among them): "
        else:
            x = torch.randn(shape, generator=gen, dtype=dtype)
        out.append((f"{what}x {_fmt(shape)}", (x,)))
    return out


def torch_forward(x):
    return F.max_pool1d(x, kernel_size=2, stride=2)


HINTS = {  # earned in order: where to look, the structure, a check by hand, the formula
    "forward": ["each output is the larger of a pair",
                "x reshaped to (N, C, L/2, 2), a max over the last dimension",
                "x [3, 1, 2, 2] gives [3, 2]",
                "y = x.reshape(N, C, L // 2, 2).max(dim=-1).values"],
    "grad_x": [
        "each window's output is one of its two entries: which entry gets the window's gradient, and "
        "what does the other get?",
        "one entry of each window gets all of the window's gradient and the other 0; on a tie torch sends "
        "it to the first entry of the window",
        "x [3, 1, 2, 2] with grad_y [5, 7] gives [5, 0, 7, 0]",
        "grad_x[..., 2i] = grad_y[..., i] where x[..., 2i] >= x[..., 2i + 1], else grad_x[..., 2i + 1] = grad_y[..., i]",
    ],
}
