"""Layer normalisation over the last dimension, with a weight and a bias.

    x          (..., D)  float32 or float64
    weight     (D,)      bias (D,)
    y          (..., D)  y = (x - mean) / sqrt(var + eps) * weight + bias, mean and the
                         biased variance taken over the last dimension, eps = 1e-5

    backward(grad_y (..., D), x, weight, bias) -> (grad_x (..., D), grad_weight (D,), grad_bias (D,))
"""

import torch
import torch.nn.functional as F

from snippets.workshop.check import _fmt, size

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


def cases(gen, dtype):
    """The cases of one run in ``dtype``, drawn with ``gen``: [(label, (x, weight, bias))]; rows
    of at least 3 entries (with 2, xhat is +-1 and grad_x is rounding noise in float32); the
    batch of one is a 1-D x (sum(dim=()) sums every dimension)."""
    out = []
    for shape in ((size(gen, 2, 7), size(gen, 3, 9)), (size(gen, 3, 9),),
                  (size(gen, 2, 3), size(gen, 2, 4), size(gen, 3, 5))):
        x = 2 * torch.randn(shape, generator=gen, dtype=dtype) + 1
        weight = torch.randn(shape[-1], generator=gen, dtype=dtype)
        bias = torch.randn(shape[-1], generator=gen, dtype=dtype)
        out.append((f"x {_fmt(shape)}", (x, weight, bias)))
    return out


def stable_cases(gen):
    """float32 rows whose mean, 1e3, is large next to their spread, 1: the variance as
    E[x^2] - E[x]^2 keeps at most about one digit there: [(label, (x, weight, bias))]."""
    shape = (size(gen, 2, 5), size(gen, 3, 9))
    x = 1000 + torch.randn(shape, generator=gen)
    weight, bias = torch.randn(shape[-1], generator=gen), torch.randn(shape[-1], generator=gen)
    return [(f"x {_fmt(shape)} of size 1e3, rows of spread 1", (x, weight, bias))]


def torch_forward(x, weight, bias):
    return F.layer_norm(x, x.shape[-1:], weight, bias, EPS)


HINTS = {  # earned in order: where to look, the structure, a check by hand, the formula
    "forward": ["normalise each row over the last dimension, then scale and shift; which variance, "
                "and where does eps go?",
                "the biased variance (divide by D), eps = 1e-5 inside the square root, weight and bias per feature",
                "a row [1, 3] with weight 1 and bias 0 gives about (-1, 1)",
                "y = (x - mean) / sqrt(var + eps) * weight + bias, mean and biased var over the last dimension"],
    "grad_x": [
        "the mean and the variance of a row are functions of every x in that row, not constants: "
        "follow x through all three paths",
        "name g the gradient at xhat (grad_y times weight); the path through the mean subtracts the row mean "
        "of g, the path through the variance subtracts a term along xhat",
        "each row of grad_x sums to 0, and so does each row of grad_x * xhat: shifting or scaling a row of x "
        "leaves y unchanged (eps aside)",
        "grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)), means over the last dimension, "
        "rstd = 1 / sqrt(var + eps)",
    ],
    "stability": ["the variance: which way of computing it keeps its digits when the mean is large next to "
                  "the spread?",
                  "subtract the row mean first, then square: a float32 x of 1e3 squared keeps about one "
                  "digit after the point (its spacing is 1/16), and E[x^2] - E[x]^2 subtracts two such numbers",
                  "x = [10000, 10001, 10002] in float32 has variance 2/3; E[x^2] - E[x]^2 gives 0 there",
                  "var = mean((x - mean) ** 2) over the last dimension, biased, then rstd = 1 / sqrt(var + eps)"],
    "grad_weight": ["weight (D,) is used by every row: its gradient collects from all of them",
                    "dy/dweight is xhat, entry by entry, summed over the rows",
                    "with one row, grad_weight is grad_y * xhat of that row",
                    "grad_weight = sum of grad_y * xhat over every dimension but the last"],
    "grad_bias": ["bias (D,) is added to every row: its gradient collects from all of them",
                  "dy/dbias is 1 for every entry of its feature: a sum over the rows, not a mean",
                  "grad_y all ones over 3 rows gives 3 in every entry",
                  "grad_bias = sum of grad_y over every dimension but the last"],
}
