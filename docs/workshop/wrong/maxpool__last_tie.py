"""Strict comparison: on a tie the second entry of the window gets the gradient."""
import torch


def backward(grad_y, x):
    N, C, L = x.shape
    pairs = x.reshape(N, C, L // 2, 2)
    first = (pairs[..., 0] > pairs[..., 1]).to(x.dtype)
    return (torch.stack([grad_y * first, grad_y * (1 - first)], dim=-1).reshape(N, C, L),)
