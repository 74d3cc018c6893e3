"""Your backward of batch normalisation in training mode (task batchnorm).

x (N, C) float, weight (C,), bias (C,); y = (x - mean) / sqrt(var + 1e-5) * weight + bias,
mean and biased variance of each column over the batch (dimension 0).
Return (grad_x (N, C), grad_weight (C,), grad_bias (C,)), given grad_y (N, C).
"""
import torch

EPS = 1e-5


def backward(grad_y, x, weight, bias):
    grad_x = torch.zeros_like(x)            # (N, C): replace with your derivation
    grad_weight = torch.zeros_like(weight)  # (C,)
    grad_bias = torch.zeros_like(bias)      # (C,)
    return grad_x, grad_weight, grad_bias
