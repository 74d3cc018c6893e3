"""Layer normalisation over the last dimension, with a weight and a bias.

    x          (..., D)  float32 or float64
    weight     (D,)      bias (D,)
    y          (..., D)  y = (x - mean) / sqrt(var + eps) * weight + bias, mean and the
                         biased variance taken over the last dimension, eps = 1e-5

    backward(grad_y (..., D), x, weight, bias) -> (grad_x (..., D), grad_weight (D,), grad_bias (D,))
"""

import torch
import torch.nn.functional as F

EPS = 1e-5


# --8<-- [start:forward]
def forward(x, weight, bias):
    mu = x.mean(dim=-1, keepdim=True)                       # (..., 1)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)        # (..., 1), biased
    xhat = (x - mu) / (var + EPS).sqrt()                    # (..., D)
    return xhat * weight + bias                             # (..., D)
# --8<-- [end:forward]


# --8<-- [start:backward]
def backward(grad_y, x, weight, bias):
    D = x.shape[-1]
    mu = x.mean(dim=-1, keepdim=True)                       # (..., 1)
    rstd = 1 / (((x - mu) ** 2).mean(dim=-1, keepdim=True) + EPS).sqrt()  # (..., 1)
    xhat = (x - mu) * rstd                                  # (..., D)
    g = grad_y * weight                                     # (..., D), dL/dxhat
    grad_x = rstd * (g - g.mean(dim=-1, keepdim=True)       # the mean term
                     - xhat * (g * xhat).mean(dim=-1, keepdim=True))  # the variance term
    grad_weight = (grad_y * xhat).reshape(-1, D).sum(dim=0)  # (D,): summed over every row
    grad_bias = grad_y.reshape(-1, D).sum(dim=0)            # (D,)
    return grad_x, grad_weight, grad_bias
# --8<-- [end:backward]


# ------------------------------------------------------------------ what the checker needs
NAME = "layernorm"
TITLE = "layer normalisation over the last dimension"
SIGNATURE_FORWARD = "forward(x, weight, bias) -> y"
SIGNATURE_BACKWARD = "backward(grad_y, x, weight, bias) -> (grad_x, grad_weight, grad_bias)"
GRADS = ("grad_x", "grad_weight", "grad_bias")
DIFF = (0, 1, 2)
TWICE = True
SHAPES = {"x (4, 5)": (4, 5), "batch 1: x (1, 6)": (1, 6), "x (2, 3, 4)": (2, 3, 4)}
CASES = tuple(SHAPES)
STABLE = ()


def inputs(label, dtype):
    shape = SHAPES[label]
    gen = torch.Generator().manual_seed(list(SHAPES).index(label))
    x = 2 * torch.randn(shape, generator=gen, dtype=dtype) + 1
    weight = torch.randn(shape[-1], generator=gen, dtype=dtype)
    bias = torch.randn(shape[-1], generator=gen, dtype=dtype)
    return x, weight, bias


def torch_forward(x, weight, bias):
    return F.layer_norm(x, x.shape[-1:], weight, bias, EPS)


HINTS = {
    "forward": "normalise each row over the last dimension with the biased variance (divide by D) "
               "and eps = 1e-5 inside the square root, then scale by weight and add bias",
    "backward:grad_x": "the mean and the variance are functions of x too: with g = grad_y * weight, "
                       "grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)), means over the last "
                       "dimension; dropping a term is the usual mistake",
    "backward:grad_weight": "grad_weight = sum of grad_y * xhat over every dimension but the last",
    "backward:grad_weight:shape": "weight (D,) was broadcast over every row: sum grad_y * xhat over all "
                                  "dimensions but the last, to shape (D,)",
    "backward:grad_bias": "grad_bias = sum of grad_y over every dimension but the last",
    "backward:grad_bias:shape": "bias (D,) was broadcast over every row: sum grad_y over all dimensions "
                                "but the last, to shape (D,)",
}
