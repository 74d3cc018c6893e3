"""index_add_ with the indices as given: fine for 1-D indices, an error for (B, T)."""
import torch


def backward(grad_y, indices, weight):
    return (torch.zeros_like(weight).index_add_(0, indices, grad_y),)
