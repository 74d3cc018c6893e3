"""A matmul plus a broadcast bias (a linear layer, weight stored (D_in, D_out)).

    x          (..., D_in)  float32 or float64 (any number of leading dimensions)
    W          (D_in, D_out)
    b          (D_out,)     broadcast over every leading dimension of x
    y          (..., D_out) y = x @ W + b

    backward(grad_y (..., D_out), x, W, b) -> (grad_x (..., D_in), grad_W (D_in, D_out), grad_b (D_out,))
"""

import torch
import torch.nn.functional as F

from snippets.workshop.check import _fmt, size


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


def cases(gen, dtype):
    """The cases of one run in ``dtype``, drawn with ``gen``: [(label, (x, W, b))]; D_out differs
    from D_in, so a transposed gradient has the wrong shape; the batch of one is a 1-D x, with no
    leading dimension to sum over (sum(dim=()) sums every dimension)."""
    out = []
    for lead in ((size(gen, 2, 7),), (), (size(gen, 2, 3), size(gen, 2, 4))):
        D_in = size(gen, 2, 6)
        D_out = D_in + size(gen, 1, 3)
        x = torch.randn(*lead, D_in, generator=gen, dtype=dtype)
        W = torch.randn(D_in, D_out, generator=gen, dtype=dtype)
        out.append((f"x {_fmt((*lead, D_in))}, W ({D_in}, {D_out})",
                    (x, W, torch.randn(D_out, generator=gen, dtype=dtype))))
    return out


def torch_forward(x, W, b):
    return F.linear(x, W.T, b)


HINTS = {  # earned in order: where to look, the structure, a check by hand, the formula
    "forward": ["a matmul, then a bias added to every row",
                "x (..., D_in) times W (D_in, D_out), then b broadcast over the leading dimensions",
                "x [[1, 2]], W [[1], [1]], b [3] give [[6]]",
                "y = x @ W + b"],
    "grad_x": ["write the shapes: grad_y (..., D_out), W (D_in, D_out), grad_x (..., D_in)",
               "one product of grad_y with W, transposed so that the shapes fit",
               "with D_out = 1 and W [[2], [3]], each row of grad_x is its grad_y times (2, 3)",
               "grad_x = grad_y @ W^T"],
    "grad_W": ["write the shapes: grad_W is (D_in, D_out); every row of x contributes to it",
               "flatten the leading dimensions of x and grad_y into M rows; a (D_in, M) @ (M, D_out) product",
               "one row x [1, 2] with grad_y [1] gives [[1], [2]]: an outer product per row, summed over the rows",
               "grad_W = x^T @ grad_y, leading dimensions flattened into rows"],
    "grad_b": ["b (D_out,) is added to every row of x: its gradient collects from all of them",
               "dy/db is 1 for every row: a sum over every dimension but the last, not a mean",
               "grad_y all ones over 3 rows gives 3 in every entry",
               "grad_b = grad_y summed over every dimension but the last"],
}
