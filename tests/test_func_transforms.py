"""snippets/func_transforms.py: per-sample gradients by vmap(grad) equal the loop's, and each
mean equals the batch gradient; the input checks name the bad argument."""

import pytest
import torch
from torch import nn

from snippets.func_transforms import per_sample_grads_loop, per_sample_grads_vmap


def _setup(seed=0, n=5):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=gen, dtype=torch.float64)
    y = torch.randint(0, 2, (n,), generator=gen)
    return model, x, y


@pytest.mark.parametrize("seed", [0, 1])
def test_vmap_equals_the_loop_and_each_row_is_one_examples_gradient(seed):
    model, x, y = _setup(seed)
    looped, batched = per_sample_grads_loop(model, x, y), per_sample_grads_vmap(model, x, y)
    assert looped.keys() == batched.keys() == dict(model.named_parameters()).keys()
    for name, p in model.named_parameters():
        assert batched[name].shape == (x.shape[0], *p.shape)
        torch.testing.assert_close(batched[name], looped[name])
    # independent of both: example 2 alone, through backward()
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(x[2:3]), y[2:3]).backward()
    for name, p in model.named_parameters():
        torch.testing.assert_close(batched[name][2], p.grad)


def test_rows_differ_so_a_broadcast_batch_gradient_would_fail():
    model, x, y = _setup()
    g = per_sample_grads_vmap(model, x, y)["0.weight"]
    assert not torch.allclose(g[0], g[1])


def test_dropout_needs_randomness_and_different_draws_the_loops_masks():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Dropout(0.5), torch.nn.Linear(8, 2))
    x, y = torch.randn(5, 3), torch.tensor([0, 1, 1, 0, 1])
    with pytest.raises(RuntimeError, match="randomness error mode"):
        per_sample_grads_vmap(model, x, y)
    torch.manual_seed(1)
    batched = per_sample_grads_vmap(model, x, y, randomness="different")
    torch.manual_seed(1)
    looped = per_sample_grads_loop(model, x, y)
    for name in looped:
        torch.testing.assert_close(batched[name], looped[name])
    torch.manual_seed(1)
    same = per_sample_grads_vmap(model, x, y, randomness="same")
    assert not torch.allclose(same["0.weight"], looped["0.weight"])


def test_neither_touches_grad():
    model, x, y = _setup()
    per_sample_grads_loop(model, x, y)
    per_sample_grads_vmap(model, x, y)
    assert all(p.grad is None for p in model.parameters())


def test_a_frozen_layer_and_an_unused_parameter_give_the_same_keys_and_values_both_ways():
    """A frozen layer has no row in either; a parameter the loss never uses gets zeros in both
    (the loop raised on each, while vmap returned both)."""
    class WithSpare(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
            self.spare = nn.Linear(2, 2)                # never called by forward

        def forward(self, x):
            return self.body(x)

    torch.manual_seed(0)
    model = WithSpare()
    model.body[0].requires_grad_(False)
    x, y = torch.randn(5, 4), torch.tensor([0, 2, 1, 1, 0])
    looped, batched = per_sample_grads_loop(model, x, y), per_sample_grads_vmap(model, x, y)
    assert sorted(looped) == sorted(batched) == ["body.2.bias", "body.2.weight", "spare.bias", "spare.weight"]
    for name in looped:
        torch.testing.assert_close(looped[name], batched[name], atol=1e-6, rtol=1e-5)
    assert not looped["spare.weight"].any() and looped["spare.weight"].shape == (5, 2, 2)
    model.requires_grad_(False)
    for fn in (per_sample_grads_loop, per_sample_grads_vmap):
        with pytest.raises(ValueError, match="no parameter that requires grad: unfreeze"):
            fn(model, x, y)


def test_bad_inputs_are_named():
    model, x, y = _setup()
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        per_sample_grads_vmap(lambda t: t, x, y)
    with pytest.raises(ValueError, match=r"x must be a \(N, D_in\) tensor"):
        per_sample_grads_loop(model, x[0], y)
    with pytest.raises(ValueError, match="y must be an int64 tensor of shape"):
        per_sample_grads_vmap(model, x, y.float())
