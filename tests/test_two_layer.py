"""snippets/two_layer.py: the hand-written backward must equal autograd, shapes included,
and bad inputs must fail with a message that names the problem."""

import pytest
import torch
import torch.nn.functional as F

from snippets.two_layer import SHAPES, backward, forward, make_tensors, shapes

GRADS = ["X", "W1", "b1", "W2", "b2", "P", "A1", "Z1"]


@pytest.mark.parametrize(
    "sizes, seed",
    [((4, 3, 5, 2), 0), ((1, 1, 1, 1), 1), ((7, 2, 6, 3), 2), ((5, 4, 4, 4), 3), ((3, 6, 2, 5), 4)],
)
def test_hand_backward_equals_autograd(sizes, seed):
    N, D_in, H, D_out = sizes
    cache = forward(make_tensors(N, D_in, H, D_out, seed=seed))
    grads = backward(cache)
    auto = torch.autograd.grad(cache["L"], [cache[n] for n in GRADS])
    for name, want in zip(GRADS, auto):
        assert grads[name].shape == cache[name].shape, name
        torch.testing.assert_close(grads[name], want, msg=lambda m, name=name: f"{name}: {m}")


def test_relu_mask_is_exercised():
    # the default example has both active and inactive units, so the mask matters there
    z1 = forward(make_tensors())["Z1"]
    assert (z1 > 0).any() and (z1 < 0).any()


def test_an_infinite_gradient_meets_the_mask_as_the_docstring_says():
    # Y = -inf in one row: the mask product gives NaN where Z1 <= 0, torch's relu gives 0
    t = make_tensors()
    t["Y"] = t["Y"].clone()
    t["Y"][0, 0] = float("-inf")
    cache = forward(t)
    mine = backward(cache)["Z1"][0]
    (auto,) = torch.autograd.grad(cache["L"], cache["Z1"])
    off = cache["Z1"][0] <= 0
    assert off.any() and mine[off].isnan().all() and (auto[0][off] == 0).all()


def test_forward_equals_torch_nn_functional():
    t = make_tensors(N=6, D_in=3, H=4, D_out=2, seed=5)
    cache = forward(t)
    # F.linear takes weights as (fan_out, fan_in): pass the transposes
    hidden = F.relu(F.linear(t["X"], t["W1"].T, t["b1"]))
    pred = F.linear(hidden, t["W2"].T, t["b2"])
    torch.testing.assert_close(cache["P"], pred)
    torch.testing.assert_close(cache["L"], F.mse_loss(pred, t["Y"]))
    assert cache["L"].shape == ()


def test_backward_agrees_with_finite_differences_on_one_weight():
    t = make_tensors(seed=6)
    grads = backward(forward(t))
    h = 1e-6
    with torch.no_grad():
        plus = dict(t)
        minus = dict(t)
        plus["W1"] = t["W1"].clone()
        minus["W1"] = t["W1"].clone()
        plus["W1"][1, 2] += h
        minus["W1"][1, 2] -= h
        numeric = (forward(plus)["L"] - forward(minus)["L"]) / (2 * h)
    assert abs(numeric.item() - grads["W1"][1, 2].item()) < 1e-7


def test_a_transposed_weight_gradient_would_be_caught():
    # the check the page relies on: with distinct sizes a transpose changes the shape
    cache = forward(make_tensors(N=4, D_in=3, H=5, D_out=2))
    wrong = backward(cache)["P"].T @ cache["A1"]  # (D_out, H), not (H, D_out)
    assert wrong.shape != cache["W2"].shape


def test_make_tensors_leaves_the_global_rng_alone_and_is_reproducible():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    a, b = make_tensors(seed=9), make_tensors(seed=9)
    assert torch.equal(torch.get_rng_state(), before)
    for name in SHAPES:
        assert torch.equal(a[name], b[name])
        assert a[name].requires_grad == (name != "Y")
        assert a[name].dtype == torch.float64


def test_shapes_lists_each_name_with_its_shape():
    cache = forward(make_tensors(N=4, D_in=3, H=5, D_out=2))
    assert shapes(cache, ["X", "L"]).splitlines() == ["X   (4, 3)", "L   ()"]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda t: t.pop("b2"), r"missing \['b2'\]"),
        (lambda t: t.update(Y=t["Y"][:, 0]), r"Y must have shape \('N', 'D_out'\), got \(4,\)"),
        (lambda t: t.update(W2=torch.zeros(4, 2, dtype=torch.float64)), "W2 has H = 4 but an earlier tensor has H = 5"),
        (lambda t: t.update(X=torch.zeros(4, 3, dtype=torch.int64)), "X must be a floating-point tensor"),
    ],
)
def test_forward_rejects_bad_inputs(change, message):
    t = make_tensors()
    change(t)
    with pytest.raises(ValueError, match=message):
        forward(t)


def test_make_tensors_rejects_empty_sizes():
    with pytest.raises(ValueError, match="at least 1"):
        make_tensors(N=0)


def test_backward_and_shapes_reject_bad_arguments():
    with pytest.raises(ValueError, match="pass the dict that forward"):
        backward(make_tensors())
    with pytest.raises(ValueError, match=r"no tensor named \['Q'\]"):
        shapes(make_tensors(), ["Q"])
