"""snippets/grad_check.py: each kind of dead gradient is reported, live ones are not, and
misuse (before backward, after zero_grad, not a module) fails with a message."""

import pytest
import torch
from torch import nn

from snippets.grad_check import report_dead_grads


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))


def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(5, 3, generator=g), torch.randn(5, 1, generator=g)  # (N, D), (N, 1)


def test_a_healthy_model_reports_nothing():
    model = mlp()
    x, y = batch()
    nn.functional.mse_loss(model(x), y).backward()
    assert report_dead_grads(model) == {}
    # cross-check against the source's rule, parameter by parameter
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def test_frozen_layer_is_reported_as_frozen():
    model = mlp()
    model[2].requires_grad_(False)
    x, y = batch()
    nn.functional.mse_loss(model(x), y).backward()
    assert report_dead_grads(model) == {"2.weight": "frozen", "2.bias": "frozen"}


def test_detached_branch_is_reported_as_none():
    torch.manual_seed(0)
    a, b = nn.Linear(3, 1), nn.Linear(3, 1)
    model = nn.ModuleDict({"a": a, "b": b})
    x, y = batch()
    pred = a(x) + b(x).detach()  # b is cut out of the graph
    nn.functional.mse_loss(pred, y).backward()
    assert report_dead_grads(model) == {"b.weight": "None", "b.bias": "None"}
    assert a.weight.grad is not None and b.weight.grad is None


def test_zero_and_nonfinite_gradients():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    with torch.no_grad():
        model[0].bias.fill_(-100.0)  # every ReLU is dead: no gradient gets through
    x, y = batch()
    nn.functional.mse_loss(model(x), y).backward()
    dead = report_dead_grads(model)
    assert dead == {"0.weight": "zero", "0.bias": "zero", "2.weight": "zero"}
    assert model[2].bias.grad.abs().sum() > 0

    model[2].bias.grad.fill_(float("nan"))
    assert report_dead_grads(model)["2.bias"] == "nonfinite"


def test_before_backward_and_after_zero_grad_it_refuses():
    model = mlp()
    with pytest.raises(RuntimeError, match="after loss.backward"):
        report_dead_grads(model)
    x, y = batch()
    nn.functional.mse_loss(model(x), y).backward()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()  # set_to_none=True by default
    assert all(p.grad is None for p in model.parameters())
    with pytest.raises(RuntimeError, match="zero_grad"):
        report_dead_grads(model)


def test_bad_inputs():
    with pytest.raises(TypeError, match="nn.Module"):
        report_dead_grads(torch.ones(2))
    with pytest.raises(ValueError, match="no parameters"):
        report_dead_grads(nn.ReLU())
