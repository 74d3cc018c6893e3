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


def test_a_sparse_gradient_is_read_by_its_values():
    emb = nn.Embedding(4, 2, sparse=True)
    emb(torch.tensor([0, 2])).sum().backward()
    assert emb.weight.grad.is_sparse and report_dead_grads(emb) == {}
    emb.weight.grad = torch.sparse_coo_tensor([[1]], [[float("nan"), 0.0]], (4, 2), check_invariants=True)
    assert report_dead_grads(emb) == {"weight": "nonfinite"}


def test_an_empty_parameter_is_not_reported():
    with pytest.warns(UserWarning, match="zero-element tensors is a no-op"):
        model = nn.Sequential(nn.Linear(0, 2), nn.Linear(2, 1))  # the first weight is (2, 0)
    model(torch.randn(3, 0)).sum().backward()
    assert model[0].weight.numel() == 0 and "0.weight" not in report_dead_grads(model)


def test_an_optimizer_over_part_of_the_model_clears_only_that_part():
    # the page: the check then reads the cleared part as "None"
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    model(torch.randn(3, 2)).sum().backward()
    torch.optim.SGD(model[1].parameters(), lr=0.1).zero_grad()
    assert report_dead_grads(model) == {"1.weight": "None", "1.bias": "None"}
