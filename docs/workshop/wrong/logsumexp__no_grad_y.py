"""Returns dy/dx, the softmax, and forgets to multiply by the upstream gradient."""


def backward(grad_y, x):
    return (x.softmax(dim=-1),)
