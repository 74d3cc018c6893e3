"""Treats the variance as a constant: drops the - xhat * mean(g * xhat) term of grad_x."""


def backward(grad_y, x, weight, bias):
    mu = x.mean(dim=-1, keepdim=True)
    rstd = 1 / (((x - mu) ** 2).mean(dim=-1, keepdim=True) + 1e-5).sqrt()
    xhat = (x - mu) * rstd
    g = grad_y * weight
    grad_x = rstd * (g - g.mean(dim=-1, keepdim=True))
    D = x.shape[-1]
    return grad_x, (grad_y * xhat).reshape(-1, D).sum(0), grad_y.reshape(-1, D).sum(0)
