"""Averages grad_weight and grad_bias over the batch instead of summing."""
from snippets.workshop.batchnorm import backward as reference


def backward(grad_y, x, weight, bias):
    grad_x, grad_weight, grad_bias = reference(grad_y, x, weight, bias)
    return grad_x, grad_weight / x.shape[0], grad_bias / x.shape[0]
