"""Differentiates y = x * sigmoid(a * x) as if sigmoid(a * x) were a constant: the product rule
drops the term through the sigmoid, so grad_x is wrong (grad_a is right)."""
import torch


def backward(grad_y, x, a):
    s = torch.sigmoid(a * x)
    ds = s * (1 - s)
    return grad_y * s, (grad_y * x * x * ds).reshape(-1, a.shape[0]).sum(dim=0)
