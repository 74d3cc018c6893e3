"""Averages the bias gradient over the rows instead of summing."""


def backward(grad_y, x, W, b):
    D_in, D_out = W.shape
    rows_x, rows_g = x.reshape(-1, D_in), grad_y.reshape(-1, D_out)
    return grad_y @ W.T, rows_x.T @ rows_g, rows_g.mean(0)
