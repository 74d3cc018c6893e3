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
TWICE = True
SHAPES = {"x (8, 3)": (8, 3), "smallest batch: x (2, 4)": (2, 4), "one channel: x (5, 1)": (5, 1)}
CASES = tuple(SHAPES)
STABLE = ()


def inputs(label, dtype):
    N, C = SHAPES[label]
    gen = torch.Generator().manual_seed(list(SHAPES).index(label))
    x = 2 * torch.randn(N, C, generator=gen, dtype=dtype) + 1
    return x, torch.randn(C, generator=gen, dtype=dtype), torch.randn(C, generator=gen, dtype=dtype)


def torch_forward(x, weight, bias):
    return F.batch_norm(x, None, None, weight, bias, training=True, eps=EPS)


HINTS = {
    "forward": "normalise each column over the batch (dimension 0) with the biased variance "
               "(divide by N, not N - 1) and eps = 1e-5 inside the square root",
    "backward:grad_x": "the batch mean and variance are functions of every row of x, not constants: "
                       "with g = grad_y * weight, grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)), "
                       "means over the batch; rstd * g alone treats the statistics as constants",
    "backward:grad_weight": "grad_weight = sum over the batch of grad_y * xhat: a sum, not a mean, "
                            "since weight is used in every row",
    "backward:grad_bias": "grad_bias = sum over the batch of grad_y: a sum, not a mean",
    "backward:grad_weight:shape": "weight (C,) was broadcast over the N rows: sum over dimension 0",
    "backward:grad_bias:shape": "bias (C,) was broadcast over the N rows: sum over dimension 0",
}
