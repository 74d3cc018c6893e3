"""Forgets that the loss is a mean over the N rows: N times too large."""
import torch.nn.functional as F


def backward(grad_loss, logits, target):
    p = (logits - logits.max(dim=1, keepdim=True).values).softmax(dim=1)
    return ((p - F.one_hot(target, logits.shape[1]).to(logits.dtype)) * grad_loss,)
