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


def test_outside_grad_mode_or_with_every_parameter_frozen_the_error_says_what_to_do():
    model = make_model()
    x, y = torch.randn(4, 3, dtype=torch.float64), torch.randn(4, 2, dtype=torch.float64)
    for mode in (torch.no_grad, torch.inference_mode):
        with mode(), pytest.raises(RuntimeError, match="call it outside torch.no_grad"):
            accumulate_gradients(model, torch.nn.MSELoss(), x, y, 2)
    model.requires_grad_(False)
    with pytest.raises(ValueError, match="no parameter that requires grad: unfreeze"):
        accumulate_gradients(model, torch.nn.MSELoss(), x, y, 2)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_half_precision_model_is_accumulated_not_refused_for_its_rounding(dtype):
    """Its full-batch loss and the mean of its micro-batch losses are each rounded to the
    dtype's 8 or 11 bits: they differ by far more than 1e-4 without any coupling of rows."""
    for seed in range(10):
        torch.manual_seed(seed)
        model = torch.nn.Linear(3, 2).to(dtype)
        x, y = torch.randn(8, 3, dtype=dtype), torch.randn(8, 2, dtype=dtype)
        accumulate_gradients(model, torch.nn.MSELoss(), x, y, 4)
        assert all(p.grad is not None and bool(p.grad.isfinite().all()) for p in model.parameters())
    with pytest.raises(ValueError, match="loss_fn sums over its rows"):
        accumulate_gradients(model, torch.nn.MSELoss(reduction="sum"), x, y, 4)


def test_a_batchnorm_model_is_refused_before_any_forward():
    """In training mode BatchNorm normalises with its batch's statistics: four micro-batches of
    two rows are not one batch of eight. The refusal comes first: no running statistic moves."""
    torch.manual_seed(4)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).double()
    x, y = torch.randn(8, 3, dtype=torch.float64), torch.randn(8, 2, dtype=torch.float64)
    loss_fn = torch.nn.MSELoss()
    _, full = full_batch_grads(model, loss_fn, x, y)
    for xm, ym in zip(x.chunk(4), y.chunk(4)):  # the loop the recipe would run, written out
        (loss_fn(model(xm), ym) / 4).backward()
    assert not torch.allclose(model[0].weight.grad, full[0])  # not the full-batch gradient
    model.zero_grad()
    bn = model[1]
    before = (bn.running_mean.clone(), bn.num_batches_tracked.clone())
    with pytest.raises(ValueError, match=r"model.1 \(BatchNorm1d\) normalises with the mean and variance of its batch"):
        accumulate_gradients(model, loss_fn, x, y, 4)
    assert torch.equal(bn.running_mean, before[0]) and torch.equal(bn.num_batches_tracked, before[1])


def test_a_micro_batch_whose_targets_are_all_ignored_is_refused_not_returned_as_nan():
    model = make_model()
    x, y = torch.randn(8, 3, dtype=torch.float64), torch.tensor([0, 0, 0, 0, 1, 0, 1, 1])
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=0)  # the first half: every target ignored
    with pytest.raises(ValueError, match=r"the mean of its 2 micro-batch losses nan: loss_fn weights its rows"):
        accumulate_gradients(model, loss_fn, x, y, 2)
    assert all(p.grad is None for p in model.parameters())  # cleared, not left half-accumulated


@pytest.mark.parametrize("loss_fn", [torch.nn.CrossEntropyLoss(ignore_index=2),
                                     torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 3.0, 0.5], dtype=torch.float64))],
                         ids=["ignore_index", "class weights"])
def test_a_weighted_mean_is_refused_and_the_advice_gives_the_full_batch_gradient(loss_fn):
    torch.manual_seed(5)
    model = make_model()  # (N, 3) -> (N, 2): two logits; a third class only for the weights
    model[2] = torch.nn.Linear(5, 3).double()
    x, y = torch.randn(8, 3, dtype=torch.float64), torch.tensor([0, 2, 1, 2, 2, 0, 1, 1])
    _, full = full_batch_grads(model, loss_fn, x, y)
    with pytest.raises(ValueError, match=r"loss_fn weights its rows .* each micro-batch's reduction='sum' loss "
                                         r"divided by the full batch's total weight"):
        accumulate_gradients(model, loss_fn, x, y, 2)
    assert all(p.grad is None for p in model.parameters())  # cleared
    summed = torch.nn.CrossEntropyLoss(weight=loss_fn.weight, ignore_index=loss_fn.ignore_index, reduction="sum")
    weight = torch.ones(3, dtype=torch.float64) if loss_fn.weight is None else loss_fn.weight
    total_weight = (weight[y] * (y != loss_fn.ignore_index)).sum()  # ignored rows weigh 0
    for xm, ym in zip(x.chunk(2), y.chunk(2)):
        (summed(model(xm), ym) / total_weight).backward()
    for p, g in zip(model.parameters(), full):
        torch.testing.assert_close(p.grad, g)
