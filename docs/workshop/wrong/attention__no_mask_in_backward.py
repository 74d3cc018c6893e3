"""Recomputes the attention weights in backward without the causal mask."""
import torch


def backward(grad_out, q, k, v):
    d = q.shape[-1]
    p = (q @ k.transpose(-2, -1) / d ** 0.5).softmax(-1)
    grad_p = grad_out @ v.transpose(-2, -1)
    grad_s = p * (grad_p - (grad_p * p).sum(-1, keepdim=True))
    return grad_s @ k / d ** 0.5, grad_s.transpose(-2, -1) @ q / d ** 0.5, p.transpose(-2, -1) @ grad_out
