"""Shifts each row by its target's logit, from the loss written as log sum exp(z_j - z_t): exp
overflows where another logit is 89 above the target's (the stability check)."""
import torch.nn.functional as F


def backward(grad_loss, logits, target):
    N, C = logits.shape
    e = (logits - logits.gather(1, target[:, None])).exp()
    p = e / e.sum(dim=1, keepdim=True)
    return ((p - F.one_hot(target, C).to(logits.dtype)) / N * grad_loss,)
