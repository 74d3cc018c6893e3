"""Tests of snippets/recipes.py: the accumulation loop against a single full-batch backward
(the gradient torch computes directly)."""

import random

import numpy
import pytest
import torch

from snippets.recipes import accumulate_gradients


def make_model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)
    ).double()


def full_batch_grads(model, loss_fn, x, y):
    model.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    return loss.item(), grads


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_accumulated_gradient_equals_the_full_batch_gradient(k):
    torch.manual_seed(1)
    x, y = torch.randn(6, 3, dtype=torch.float64), torch.randn(6, 2, dtype=torch.float64)
    model = make_model()
    loss_fn = torch.nn.MSELoss()
    full_loss, full = full_batch_grads(model, loss_fn, x, y)
    total = accumulate_gradients(model, loss_fn, x, y, k)
    assert total == pytest.approx(full_loss, rel=1e-12)
    for p, g in zip(model.parameters(), full):
        assert p.grad.shape == p.shape
        torch.testing.assert_close(p.grad, g)


def test_without_the_1_over_k_scaling_the_gradient_is_k_times_too_large():
    # The same loop written without / k: what the scaling in the recipe prevents.
    torch.manual_seed(2)
    x, y = torch.randn(8, 3, dtype=torch.float64), torch.randn(8, 2, dtype=torch.float64)
    model = make_model()
    loss_fn = torch.nn.MSELoss()
    _, full = full_batch_grads(model, loss_fn, x, y)
    k = 4
    for xm, ym in zip(x.chunk(k), y.chunk(k)):
        loss_fn(model(xm), ym).backward()
    for p, g in zip(model.parameters(), full):
        torch.testing.assert_close(p.grad, k * g)


def test_stale_gradients_are_cleared_first():
    torch.manual_seed(3)
    x, y = torch.randn(4, 3, dtype=torch.float64), torch.randn(4, 2, dtype=torch.float64)
    model = make_model()
    loss_fn = torch.nn.MSELoss()
    _, full = full_batch_grads(model, loss_fn, x, y)
    for p in model.parameters():
        p.grad = torch.full_like(p, 100.0)
    accumulate_gradients(model, loss_fn, x, y, 2)
    for p, g in zip(model.parameters(), full):
        torch.testing.assert_close(p.grad, g)


def test_bad_arguments_say_what_to_do():
    model = make_model()
    x, y = torch.randn(6, 3, dtype=torch.float64), torch.randn(6, 2, dtype=torch.float64)
    loss_fn = torch.nn.MSELoss()
    with pytest.raises(ValueError, match="not divisible by k = 4"):
        accumulate_gradients(model, loss_fn, x, y, 4)
    with pytest.raises(ValueError, match="positive int"):
        accumulate_gradients(model, loss_fn, x, y, 0)
    with pytest.raises(ValueError, match="matching batches"):
        accumulate_gradients(model, loss_fn, x, y[:4], 2)
    with pytest.raises(ValueError, match="must return the mean loss"):
        accumulate_gradients(model, torch.nn.MSELoss(reduction="none"), x, y, 2)
