"""Forward and backward without the max shift: exp(1000) overflows."""


def forward(x):
    return x.exp().sum(dim=-1).log()


def backward(grad_y, x):
    e = x.exp()
    return (e / e.sum(dim=-1, keepdim=True) * grad_y[..., None],)
