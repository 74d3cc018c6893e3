"""Your backward of an embedding lookup (task embedding).

indices (...) int64 in [0, V), repeats allowed; weight (V, D) float; y = weight[indices], (..., D).
Return a 1-tuple: grad_weight (V, D), given grad_y (..., D). indices gets no gradient.
"""
import torch


def backward(grad_y, indices, weight):
    grad_weight = torch.zeros_like(weight)  # (V, D): replace with your derivation
    return (grad_weight,)
