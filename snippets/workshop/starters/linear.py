"""Your backward of a matmul plus a broadcast bias (task linear).

x (..., D_in) float, W (D_in, D_out), b (D_out,); y = x @ W + b, (..., D_out).
Return (grad_x (..., D_in), grad_W (D_in, D_out), grad_b (D_out,)), given grad_y (..., D_out).
"""
import torch


def backward(grad_y, x, W, b):
    grad_x = torch.zeros_like(x)  # (..., D_in): replace with your derivation
    grad_W = torch.zeros_like(W)  # (D_in, D_out)
    grad_b = torch.zeros_like(b)  # (D_out,)
    return grad_x, grad_W, grad_b
