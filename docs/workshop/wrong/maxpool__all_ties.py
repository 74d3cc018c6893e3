"""Sends the gradient to every entry equal to the window's maximum: a tie gets it twice."""
import torch


def backward(grad_y, x):
    N, C, L = x.shape
    pairs = x.reshape(N, C, L // 2, 2)
    winner = (pairs == pairs.max(dim=-1, keepdim=True).values).to(x.dtype)
    return ((winner * grad_y[..., None]).reshape(N, C, L),)
