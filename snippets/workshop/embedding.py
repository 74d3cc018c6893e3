"""An embedding lookup whose indices repeat: a fork, so the gradients of a row add.

    indices    (...)     int64, each in [0, V); the same index may appear many times
    weight     (V, D)    float32 or float64
    y          (..., D)  y = weight[indices]

    backward(grad_y (..., D), indices, weight) -> (grad_weight (V, D),)

indices gets no gradient (it is an integer tensor).
"""

import torch
import torch.nn.functional as F

from snippets.workshop.check import _fmt, size


# --8<-- [start:forward]
def forward(indices, weight):
    return weight[indices]                                   # (..., D)
# --8<-- [end:forward]


# --8<-- [start:backward]
def backward(grad_y, indices, weight):
    D = weight.shape[1]
    grad_weight = torch.zeros_like(weight)                   # (V, D); unused rows stay 0
    # row indices[n] gets grad_y[n] added, once per use: repeats accumulate
    grad_weight.index_add_(0, indices.reshape(-1), grad_y.reshape(-1, D))
    return (grad_weight,)
# --8<-- [end:backward]


# ------------------------------------------------------------------ what the checker needs
NAME = "embedding"
TITLE = "embedding lookup with repeated indices"
SIGNATURE_FORWARD = "forward(indices, weight) -> y"
SIGNATURE_BACKWARD = "backward(grad_y, indices, weight) -> (grad_weight,)"
GRADS = ("grad_weight",)
DIFF = (1,)


def cases(gen, dtype):
    """The cases of one run in ``dtype``, drawn with ``gen``: [(label, (indices, weight))]; the
    second has more indices than rows, so some index repeats, and three dimensions; the batch
    of one is a 0-d index."""
    out = []
    for shape, V, what in (((size(gen, 2, 6),), size(gen, 6, 9), ""),
                           ((size(gen, 2, 3), 1, size(gen, 4, 6)), size(gen, 2, 3), "repeated "),
                           ((), size(gen, 2, 5), "batch 1: ")):
        D = size(gen, 2, 5)
        indices = torch.randint(0, V, shape, generator=gen)
        out.append((f"{what}indices {_fmt(shape)}, weight ({V}, {D})",
                    (indices, torch.randn(V, D, generator=gen, dtype=dtype))))
    return out


def torch_forward(indices, weight):
    return F.embedding(indices, weight)


HINTS = {  # earned in order: where to look, the structure, a check by hand, the formula
    "forward": ["each index picks a row of weight",
                "indexing weight with the whole indices tensor gives (..., D)",
                "weight [[1, 2], [3, 4]] with indices [1, 1] gives [[3, 4], [3, 4]]",
                "y = weight[indices]"],
    "grad_weight": [
        "a row of weight used k times is a fork with k branches: what does autograd do with the "
        "gradients of a fork?",
        "each use adds its grad_y row into the row it read, and an unused row gets 0; indexed assignment "
        "(and += through an index) keeps one of the repeats, it does not accumulate",
        "indices [1, 1] with grad_y [[1, 0], [0, 1]] give row 1 (1, 1) and row 0 (0, 0)",
        "grad_weight = zeros_like(weight).index_add_(0, indices.reshape(-1), grad_y.reshape(-1, D))",
    ],
}
