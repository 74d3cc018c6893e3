"""Batch normalisation in training mode, over the batch dimension.

    x          (N, C)  float32 or float64, N >= 2
    weight     (C,)    bias (C,)
    y          (N, C)  y = (x - mean) / sqrt(var + eps) * weight + bias, mean and the biased
                       variance of each column taken over the N rows (the batch), eps = 1e-5

    backward(grad_y (N, C), x, weight, bias) -> (grad_x (N, C), grad_weight (C,), grad_bias (C,))

Training mode: the statistics are those of this batch, so every row of x moves them.
(Running averages, which only evaluation mode reads, are not part of the task.)
"""

import torch
import torch.nn.functional as F

from snippets.workshop.check import size

EPS = 1e-5


# --8<-- [start:forward]
def forward(x, weight, bias):
    mu = x.mean(dim=0)                                      # (C,), batch mean
    var = ((x - mu) ** 2).mean(dim=0)                       # (C,), biased batch variance
    return (x - mu) / (var + EPS).sqrt() * weight + bias    # (N, C)
# --8<-- [end:forward]


# --8<-- [start:backward]
def backward(grad_y, x, weight, bias):
    mu = x.mean(dim=0)                                      # (C,)
    rstd = 1 / (((x - mu) ** 2).mean(dim=0) + EPS).sqrt()  # (C,)
    xhat = (x - mu) * rstd                                  # (N, C)
    g = grad_y * weight                                     # (N, C), dL/dxhat
    grad_x = rstd * (g - g.mean(dim=0) - xhat * (g * xhat).mean(dim=0))  # the batch moves mu and var
    return grad_x, (grad_y * xhat).sum(dim=0), grad_y.sum(dim=0)          # (N, C), (C,), (C,)
# --8<-- [end:backward]


# ------------------------------------------------------------------ what the checker needs
NAME = "batchnorm"
TITLE = "batch normalisation, training mode"
SIGNATURE_FORWARD = "forward(x, weight, bias) -> y"
SIGNATURE_BACKWARD = "backward(grad_y, x, weight, bias) -> (grad_x, grad_weight, grad_bias)"
GRADS = ("grad_x", "grad_weight", "grad_bias")
DIFF = (0, 1, 2)


def cases(gen, dtype):
    """The cases of one run in ``dtype``, drawn with ``gen``: [(label, (x, weight, bias))];
    a batch has at least 2 rows (training-mode statistics of one row are undefined)."""
    out = []
    for N, C, what in ((size(gen, 3, 9), size(gen, 2, 5), ""), (2, size(gen, 2, 5), "smallest batch: "),
                       (size(gen, 3, 9), 1, "one channel: ")):
        x = 2 * torch.randn(N, C, generator=gen, dtype=dtype) + 1
        weight, bias = torch.randn(C, generator=gen, dtype=dtype), torch.randn(C, generator=gen, dtype=dtype)
        out.append((f"{what}x ({N}, {C})", (x, weight, bias)))
    return out


def torch_forward(x, weight, bias):
    return F.batch_norm(x, None, None, weight, bias, training=True, eps=EPS)


HINTS = {  # earned in order: where to look, the structure, a check by hand, the formula
    "forward": ["normalise each column over the batch, then scale and shift; which variance?",
                "the biased variance (divide by N, not N - 1), eps = 1e-5 inside the square root",
                "a column [1, 3] gives about (-1, 1); dividing by N - 1 would give about (-0.71, 0.71)",
                "y = (x - mean) / sqrt(var + eps) * weight + bias, mean and biased var over dimension 0"],
    "grad_x": [
        "the batch mean and variance are functions of every row of x: changing one row moves the "
        "statistics every row is normalised with",
        "name g the gradient at xhat (grad_y times weight); the path through the mean subtracts the batch "
        "mean of g, the path through the variance subtracts a term along xhat",
        "each column of grad_x sums to 0 over the batch, and so does each column of grad_x * xhat (eps aside)",
        "grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)), means over the batch (dimension 0)",
    ],
    "grad_weight": ["weight (C,) is used by every row of the batch: a sum or a mean over the rows?",
                    "dy/dweight is xhat, entry by entry, collected over the batch",
                    "grad_y all ones gives the column sums of xhat: 0, up to rounding",
                    "grad_weight = sum over the batch of grad_y * xhat"],
    "grad_bias": ["bias (C,) is added to every row of the batch: a sum or a mean over the rows?",
                  "dy/dbias is 1 for every row: a sum over the batch, not a mean",
                  "grad_y all ones over N rows gives N in every entry",
                  "grad_bias = sum over the batch of grad_y"],
}
