"""Differentiates log-sum-exp only and forgets the -logits[target] term."""


def backward(grad_loss, logits, target):
    p = (logits - logits.max(dim=1, keepdim=True).values).softmax(dim=1)
    return (p / logits.shape[0] * grad_loss,)
