"""On a tie each entry of the window gets half the gradient (what torch.maximum does), not the first all of it."""
import torch


def backward(grad_y, x):
    N, C, L = x.shape
    pairs = x.reshape(N, C, L // 2, 2)                       # (N, C, L/2, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    first = (a > b).to(x.dtype) + 0.5 * (a == b).to(x.dtype)  # a tie split half and half, as torch.maximum does
    grad = torch.stack([grad_y * first, grad_y * (1 - first)], dim=-1)
    return (grad.reshape(N, C, L),)
