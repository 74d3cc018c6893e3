"""Softmax backward as p * (grad_p - rowsum(grad_p)): the row sum is missing its weights p."""
import torch


def backward(grad_out, q, k, v):
    T, d = q.shape[-2:]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    p = (q @ k.transpose(-2, -1) / d ** 0.5).masked_fill(future, float("-inf")).softmax(-1)
    grad_p = grad_out @ v.transpose(-2, -1)
    grad_s = p * (grad_p - grad_p.sum(-1, keepdim=True))
    return grad_s @ k / d ** 0.5, grad_s.transpose(-2, -1) @ q / d ** 0.5, p.transpose(-2, -1) @ grad_out
