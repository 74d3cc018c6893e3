"""Returns grad_weight per row, (N, D), without summing over the rows it was broadcast to."""
from snippets.workshop.layernorm import backward as reference


def backward(grad_y, x, weight, bias):
    grad_x, _, grad_bias = reference(grad_y, x, weight, bias)
    mu = x.mean(dim=-1, keepdim=True)
    xhat = (x - mu) / (((x - mu) ** 2).mean(dim=-1, keepdim=True) + 1e-5).sqrt()
    return grad_x, grad_y * xhat, grad_bias
