"""grad_W = grad_y^T @ x: (D_out, D_in), the transpose of W's shape."""


def backward(grad_y, x, W, b):
    D_in, D_out = W.shape
    rows_x, rows_g = x.reshape(-1, D_in), grad_y.reshape(-1, D_out)
    return grad_y @ W.T, rows_g.T @ rows_x, rows_g.sum(0)
