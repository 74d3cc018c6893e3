"""The right formula, computed in NumPy: every value equals torch's, but opcheck's
test_aot_dispatch_dynamic calls the backward on fake tensors, which have no values for .numpy()
to return, so the operator fails it."""
import numpy as np
import torch


def backward(grad_y, x, a):
    g, xs, sl = grad_y.numpy(), x.numpy(), a.numpy()
    s = 1 / (1 + np.exp(-np.clip(sl * xs, -60, 60)))  # clipped: exp stays finite
    ds = s * (1 - s)
    grad_a = (g * xs * xs * ds).reshape(-1, sl.shape[0]).sum(axis=0)
    return torch.from_numpy(g * (s + sl * xs * ds)), torch.from_numpy(grad_a)
