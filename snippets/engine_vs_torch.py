"""Train one MLP twice, in snippets/tensor_engine.py and in torch, from the same weights.

Both runs see the same data and take the same SGD steps on a mean softmax cross-entropy,
in float64. If every backward of the engine is right, the two loss curves agree to
rounding error (the tests require 1e-10).
"""

import numpy as np
import torch
import torch.nn.functional as F

from snippets.tensor_engine import MLP, SGD, Tensor, cross_entropy


def torch_mlp(sizes, seed):
    """nn.Sequential(Linear, ReLU, ..., Linear) in float64, initialised from ``seed``
    without touching the global RNG stream."""
    if isinstance(sizes, int) or len(sizes) < 2:
        raise ValueError(f"sizes must list two or more layer sizes, e.g. (32, 64, 10); got {sizes!r}")
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        layers = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            layers += [torch.nn.Linear(fan_in, fan_out, dtype=torch.float64), torch.nn.ReLU()]
        return torch.nn.Sequential(*layers[:-1])


def copy_weights(net, mlp):
    """Copy net's Linear weights into mlp: W = weight.T (fan_in, fan_out), b = bias, as float64
    arrays, the engine's dtype, whatever net's dtype (float16, bfloat16 and float32 values
    convert to float64 exactly)."""
    if not isinstance(net, torch.nn.Sequential) or not isinstance(mlp, MLP):
        raise TypeError(
            f"copy_weights(net, mlp) takes a torch nn.Sequential and an engine MLP, "
            f"got {type(net).__name__} and {type(mlp).__name__}"
        )
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    if len(linears) != len(mlp.layers):
        raise ValueError(f"net has {len(linears)} Linear layers, mlp has {len(mlp.layers)}")
    for layer, lin in zip(mlp.layers, linears):
        if layer.W.shape != tuple(lin.weight.T.shape):
            raise ValueError(f"layer shapes differ: {layer.W.shape} vs weight.T {tuple(lin.weight.T.shape)}")
        if lin.bias is None:
            raise ValueError("net has a Linear without a bias, the engine's Linear has one: build it with bias=True")
        layer.W.data = lin.weight.detach().to(torch.float64).numpy().T.copy()
        layer.b.data = lin.bias.detach().to(torch.float64).numpy().copy()


def train_both(steps=20, lr=0.1, batch=64, sizes=(32, 64, 10), seed=0):
    """Return (engine losses, torch losses, mlp, net): one loss per step, before its update."""
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (steps, batch, seed)):
        raise TypeError(f"steps, batch and seed must be ints; got {steps!r}, {batch!r}, {seed!r}")
    if steps < 1 or batch < 1 or not lr > 0:
        raise ValueError("steps and batch must be at least 1 and lr positive")
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, sizes[0], generator=gen, dtype=torch.float64)  # (N, D_in)
    y = torch.randint(0, sizes[-1], (batch,), generator=gen)              # (N,)
    net = torch_mlp(sizes, seed)
    mlp = MLP(list(sizes))
    copy_weights(net, mlp)
    opt, topt = SGD(mlp.parameters(), lr), torch.optim.SGD(net.parameters(), lr)
    x_e, y_e = Tensor(x.numpy()), y.numpy()
    losses, tlosses = [], []
    for _ in range(steps):
        loss = cross_entropy(mlp(x_e), y_e)   # engine: forward, backward, step
        opt.zero_grad()
        loss.backward()
        opt.step()
        tloss = F.cross_entropy(net(x), y)    # torch: the same
        topt.zero_grad()
        tloss.backward()
        topt.step()
        losses.append(loss.data.item())
        tlosses.append(tloss.item())
    return np.array(losses), np.array(tlosses), mlp, net
