"""Your backward of logsumexp over the last dimension (task logsumexp).

x (..., D) float; y (...) = log(sum_j exp(x[..., j])).
Return a 1-tuple: grad_x (..., D), given grad_y (...). It must stay finite for x of size 1000.
"""
import torch


def backward(grad_y, x):
    grad_x = torch.zeros_like(x)  # (..., D): replace with your derivation
    return (grad_x,)
