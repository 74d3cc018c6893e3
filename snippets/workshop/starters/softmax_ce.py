"""Your backward of softmax + cross-entropy (task softmax_ce).

logits (N, C) float, target (N,) int64; loss = mean over rows of -log softmax(logits)[n, target[n]].
Return a 1-tuple: grad_logits (N, C), the gradient of the loss times grad_loss (a 0-d tensor).
It must stay finite for logits of size 1000.
"""
import torch


def backward(grad_loss, logits, target):
    grad_logits = torch.zeros_like(logits)  # (N, C): replace with your derivation
    return (grad_logits,)
