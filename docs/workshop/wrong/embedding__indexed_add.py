"""grad_weight[indices] += grad_y: reads like accumulation, but indexed += does not add repeats."""
import torch


def backward(grad_y, indices, weight):
    grad_weight = torch.zeros_like(weight)
    grad_weight[indices] += grad_y
    return (grad_weight,)
