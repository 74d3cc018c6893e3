"""Treats the batch mean and variance as constants: grad_x = rstd * grad_y * weight."""


def backward(grad_y, x, weight, bias):
    mu = x.mean(dim=0)
    rstd = 1 / (((x - mu) ** 2).mean(dim=0) + 1e-5).sqrt()
    xhat = (x - mu) * rstd
    return rstd * grad_y * weight, (grad_y * xhat).sum(0), grad_y.sum(0)
