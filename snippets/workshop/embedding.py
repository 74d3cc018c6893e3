"""An embedding lookup whose indices repeat: a fork, so the gradients of a row add.

    indices    (...)     int64, each in [0, V); the same index may appear many times
    weight     (V, D)    float32 or float64
    y          (..., D)  y = weight[indices]

    backward(grad_y (..., D), indices, weight) -> (grad_weight (V, D),)

indices gets no gradient (it is an integer tensor).
"""

import torch
import torch.nn.functional as F


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
TWICE = True
INDICES = {"distinct indices (4,), weight (6, 3)": [2, 0, 5, 3],
           "repeated indices (2, 5), weight (4, 3)": [[0, 2, 2, 1, 0], [3, 2, 0, 0, 2]],
           "batch 1: indices (1,), weight (3, 2)": [1]}
CASES = tuple(INDICES)
STABLE = ()


def inputs(label, dtype):
    V, D = {0: (6, 3), 1: (4, 3), 2: (3, 2)}[CASES.index(label)]
    gen = torch.Generator().manual_seed(CASES.index(label))
    return torch.tensor(INDICES[label]), torch.randn(V, D, generator=gen, dtype=dtype)


def torch_forward(indices, weight):
    return F.embedding(indices, weight)


HINTS = {
    "backward:grad_weight": "a row used k times gets the sum of its k upstream gradients. Both "
                            "grad_weight[indices] = grad_y and grad_weight[indices] += grad_y keep one "
                            "of the repeats (indexed assignment does not accumulate); use "
                            "grad_weight.index_add_(0, indices.reshape(-1), grad_y.reshape(-1, D))",
    "backward:raised": "index_add_ takes a 1-D index: flatten indices to (M,) and grad_y to (M, D)",
}
