"""Your backward of causal scaled dot-product attention (task attention).

q, k, v (B, T, d) float; out = softmax(q @ k^T / sqrt(d), future masked) @ v, (B, T, d).
Return (grad_q, grad_k, grad_v), each (B, T, d), given grad_out (B, T, d).
"""
import torch


def backward(grad_out, q, k, v):
    grad_q = torch.zeros_like(q)  # (B, T, d): replace with your derivation
    grad_k = torch.zeros_like(k)  # (B, T, d)
    grad_v = torch.zeros_like(v)  # (B, T, d)
    return grad_q, grad_k, grad_v
