"""A matmul plus a broadcast bias (a linear layer, weight stored (D_in, D_out)).

    x          (..., D_in)  float32 or float64 (any number of leading dimensions)
    W          (D_in, D_out)
    b          (D_out,)     broadcast over every leading dimension of x
    y          (..., D_out) y = x @ W + b

    backward(grad_y (..., D_out), x, W, b) -> (grad_x (..., D_in), grad_W (D_in, D_out), grad_b (D_out,))
"""

import torch
import torch.nn.functional as F


# --8<-- [start:forward]
def forward(x, W, b):
    return x @ W + b                                         # (..., D_out)
# --8<-- [end:forward]


# --8<-- [start:backward]
def backward(grad_y, x, W, b):
    D_in, D_out = W.shape
    grad_x = grad_y @ W.T                                    # (..., D_out) @ (D_out, D_in)
    rows_x = x.reshape(-1, D_in)                             # (M, D_in), M = all leading dims
    rows_g = grad_y.reshape(-1, D_out)                       # (M, D_out)
    grad_W = rows_x.T @ rows_g                               # (D_in, M) @ (M, D_out): sums over rows
    grad_b = rows_g.sum(dim=0)                               # (D_out,): b was broadcast over M rows
    return grad_x, grad_W, grad_b
# --8<-- [end:backward]


# ------------------------------------------------------------------ what the checker needs
NAME = "linear"
TITLE = "matmul + broadcast bias"
SIGNATURE_FORWARD = "forward(x, W, b) -> y"
SIGNATURE_BACKWARD = "backward(grad_y, x, W, b) -> (grad_x, grad_W, grad_b)"
GRADS = ("grad_x", "grad_W", "grad_b")
DIFF = (0, 1, 2)
TWICE = True
SHAPES = {"x (4, 3), W (3, 2)": ((4, 3), 2), "batch 1: x (1, 5), W (5, 5)": ((1, 5), 5),
          "x (2, 3, 4), W (4, 4)": ((2, 3, 4), 4)}
CASES = tuple(SHAPES)
STABLE = ()


def inputs(label, dtype):
    shape, D_out = SHAPES[label]
    gen = torch.Generator().manual_seed(list(SHAPES).index(label))
    x = torch.randn(shape, generator=gen, dtype=dtype)
    W = torch.randn(shape[-1], D_out, generator=gen, dtype=dtype)
    return x, W, torch.randn(D_out, generator=gen, dtype=dtype)


def torch_forward(x, W, b):
    return F.linear(x, W.T, b)


HINTS = {
    "backward:grad_x": "grad_x = grad_y @ W^T: (..., D_out) @ (D_out, D_in)",
    "backward:grad_W": "grad_W = x^T @ grad_y with the leading dimensions of x and grad_y flattened "
                       "into rows: (D_in, M) @ (M, D_out); write the shapes and the product follows",
    "backward:grad_W:shape": "grad_W has W's shape (D_in, D_out): x^T @ grad_y, not grad_y^T @ x, with "
                             "the leading dimensions flattened into rows",
    "backward:grad_b": "b is added to every row, so grad_b is the sum of grad_y over the rows "
                       "(a sum, not a mean)",
    "backward:grad_b:shape": "b (D_out,) was broadcast over every row of x: sum grad_y over all "
                             "dimensions but the last, to shape (D_out,)",
}
