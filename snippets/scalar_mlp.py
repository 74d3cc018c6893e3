"""A small multilayer perceptron on scalar ``Value``s, trained by plain gradient descent,
and the same network in torch to check it against.

``MLP(sizes, seed)``: fully connected layers ``sizes[0] -> sizes[1] -> ... -> sizes[-1]``,
``tanh`` after every layer but the last. Weights and biases are Values drawn uniformly from
[-1, 1) by ``random.Random(seed)``: one seed, one network. ``mlp(x)`` maps a list of
``sizes[0]`` numbers to a list of ``sizes[-1]`` Values. ``to_torch(mlp)`` gives the same
parameters as float64 tensors, one ``(W (out, in), b (out,))`` pair per layer,
and ``train_torch`` trains them as ``train`` trains the MLP.
"""

import torch

# --8<-- [start:mlp]
import numbers
import random

from snippets.scalar_engine import Value


class MLP:
    """sizes[0] inputs -> tanh layers -> sizes[-1] linear outputs, every weight a Value."""

    def __init__(self, sizes, seed=0):
        if not isinstance(sizes, (tuple, list)):  # MLP(3) would fail at len()
            raise TypeError(f"sizes must be a tuple of layer sizes, e.g. (2, 3, 1); got {sizes!r}")
        if len(sizes) < 2 or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in sizes):
            raise ValueError(f"sizes must be two or more positive ints, e.g. (2, 3, 1); got {sizes!r}")
        rng = random.Random(seed)
        self.sizes = tuple(sizes)
        # layers[l][o] = [w_o0, ..., w_o(in-1), b_o]: the weights and bias of output unit o
        self.layers = [
            [[Value(rng.uniform(-1, 1)) for _ in range(n_in + 1)] for _ in range(n_out)]
            for n_in, n_out in zip(sizes, sizes[1:])
        ]

    def __call__(self, x):
        if len(x) != self.sizes[0]:
            raise ValueError(f"this MLP takes {self.sizes[0]} inputs, got {len(x)}")
        for depth, layer in enumerate(self.layers):
            x = [sum((w * xi for w, xi in zip(row, x)), row[-1]) for row in layer]  # w . x + b
            if depth < len(self.layers) - 1:
                x = [v.tanh() for v in x]
        return x

    def parameters(self):
        return [p for layer in self.layers for row in layer for p in row]
# --8<-- [end:mlp]


def to_torch(mlp):
    """The parameters of ``mlp`` as float64 leaf tensors: ``[(W (out, in), b (out,)), ...]``."""
    if not isinstance(mlp, MLP):
        raise TypeError(f"expected an MLP, got {type(mlp).__name__}")
    return [
        (
            torch.tensor([[w.data for w in row[:-1]] for row in layer], dtype=torch.float64, requires_grad=True),
            torch.tensor([row[-1].data for row in layer], dtype=torch.float64, requires_grad=True),
        )
        for layer in mlp.layers
    ]


# --8<-- [start:train]
def _check_data(X, T, n_in, n_out):
    if not len(X) or len(X) != len(T):
        raise ValueError(f"need as many inputs as targets, at least one; got {len(X)} and {len(T)}")
    if any(isinstance(v, (str, bytes)) or not hasattr(v, "__len__") for v in (*X, *T)):  # a bare number
        raise TypeError(f"each input and each target is a sequence of numbers, e.g. X=[[0.5] * {n_in}], "
                        f"T=[[1.0] * {n_out}]")
    if any(len(x) != n_in for x in X) or any(len(t) != n_out for t in T):
        raise ValueError(f"each input needs {n_in} numbers and each target {n_out}")
    if any(isinstance(v, bool) or not isinstance(v, numbers.Real) for row in (*X, *T) for v in row):
        raise TypeError("each input and target entry must be a real number, e.g. 0.5 (a NumPy "
                        "array's entries are: np.int64 and np.float32 are taken)")
    return [[float(v) for v in x] for x in X], [[float(v) for v in t] for t in T]  # a Value holds floats


def _check_steps(steps, lr):
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        raise ValueError(f"steps must be an int >= 0, got {steps!r}")
    if isinstance(lr, bool) or not (isinstance(lr, numbers.Real) and 0 < lr < float("inf")):  # np.float32 too
        raise ValueError(f"lr must be a positive finite number, got {lr!r}")
    return float(lr)  # a Python float: a Value holds one


def train(mlp, X, T, steps, lr):
    """``steps`` steps of gradient descent on the mean squared error; the loss of each step.

    X: N inputs of ``sizes[0]`` numbers; T: N targets of ``sizes[-1]`` numbers."""
    X, T = _check_data(X, T, mlp.sizes[0], mlp.sizes[-1])
    lr = _check_steps(steps, lr)
    losses = []
    for _ in range(steps):
        errors = [(y - t) ** 2 for x, target in zip(X, T) for y, t in zip(mlp(x), target)]
        loss = sum(errors) / len(errors)
        loss.zero_grad()  # the parameters are in loss's graph: their .grad restarts at 0
        loss.backward()
        for p in mlp.parameters():
            p.data -= lr * p.grad  # the update is plain arithmetic on floats: no graph
        losses.append(loss.data)
    return losses
# --8<-- [end:train]


def train_torch(params, X, T, steps, lr):
    """``train`` in torch, on ``to_torch(mlp)`` parameters; the loss of each step."""
    if not isinstance(params, list) or not params or not all(isinstance(p, tuple) and len(p) == 2 for p in params):
        raise TypeError(f"params must be the list of (W, b) pairs that to_torch(mlp) returns, got {type(params).__name__}")
    X, T = _check_data(X, T, params[0][0].shape[1], params[-1][0].shape[0])
    lr = _check_steps(steps, lr)
    X = torch.tensor(X, dtype=torch.float64)  # (N, in)
    T = torch.tensor(T, dtype=torch.float64)  # (N, out)
    losses = []
    for _ in range(steps):
        h = X
        for depth, (W, b) in enumerate(params):
            h = h @ W.T + b  # (N, out)
            if depth < len(params) - 1:
                h = torch.tanh(h)
        loss = ((h - T) ** 2).mean()
        for W, b in params:
            W.grad = b.grad = None
        loss.backward()
        with torch.no_grad():
            for W, b in params:
                W -= lr * W.grad
                b -= lr * b.grad
        losses.append(loss.item())
    return losses
