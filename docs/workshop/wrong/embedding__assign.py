"""grad_weight[indices] = grad_y: a repeated row keeps one of its gradients."""
import torch


def backward(grad_y, indices, weight):
    grad_weight = torch.zeros_like(weight)
    grad_weight[indices] = grad_y
    return (grad_weight,)
