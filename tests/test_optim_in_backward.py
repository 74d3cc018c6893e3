"""snippets/optim_in_backward.py: a step inside backward equals an ordinary step, and the
peak of gradient bytes is what the layer sizes say."""

import pytest
import torch
from torch import nn

from snippets.optim_in_backward import GradBytes, step_in_backward


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3), nn.Tanh(), nn.Linear(3, 1))


@pytest.mark.parametrize("make_opt", [
    lambda ps: torch.optim.SGD(ps, lr=0.1),
    lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: torch.optim.Adam(ps, lr=0.01),
])
def test_same_parameters_as_an_ordinary_step_over_three_steps(make_opt):
    torch.manual_seed(1)
    xs = [torch.randn(4, 6) for _ in range(3)]
    normal, fused = make_model(), make_model()
    opt = make_opt(list(normal.parameters()))
    step_in_backward(fused, make_opt)
    for x in xs:
        opt.zero_grad()
        normal(x).pow(2).mean().backward()
        opt.step()
        fused(x).pow(2).mean().backward()
    for a, b in zip(normal.parameters(), fused.parameters()):
        torch.testing.assert_close(a, b)
        assert b.grad is None


@pytest.mark.parametrize("make_opt", [
    lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: torch.optim.Adam(ps, lr=0.01),
])
def test_step_if_accumulates_micro_batches_into_one_step(make_opt):
    torch.manual_seed(1)
    xs = list(torch.randn(12, 6).chunk(3))
    normal, fused, every = make_model(), make_model(), make_model()
    opt = make_opt(list(normal.parameters()))
    last = {"now": False}
    step_in_backward(fused, make_opt, step_if=lambda: last["now"])
    step_in_backward(every, make_opt)
    for i, x in enumerate(xs):
        last["now"] = i == len(xs) - 1
        for model in (normal, fused, every):
            (model(x).pow(2).mean() / len(xs)).backward()
    opt.step()
    for a, b, c in zip(normal.parameters(), fused.parameters(), every.parameters()):
        torch.testing.assert_close(a, b)
        assert b.grad is None
        assert not torch.allclose(a, c)     # a step per micro-batch is another update


def test_peak_gradient_bytes():
    x = torch.randn(4, 6)
    sizes = [p.numel() * p.element_size() for p in make_model().parameters()]
    model = make_model()
    counter = GradBytes(model)
    model(x).pow(2).mean().backward()
    assert counter.peak == sum(sizes)
    model = make_model()
    counter = GradBytes(model)
    step_in_backward(model, lambda ps: torch.optim.SGD(ps, lr=0.1))
    model(x).pow(2).mean().backward()
    assert counter.peak == max(sizes)


def test_removing_the_handles_restores_ordinary_backward():
    model = make_model()
    before = [p.detach().clone() for p in model.parameters()]
    for h in step_in_backward(model, lambda ps: torch.optim.SGD(ps, lr=0.1)):
        h.remove()
    model(torch.randn(4, 6)).pow(2).mean().backward()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert all(p.grad is not None for p in model.parameters())


def test_bad_input():
    with pytest.raises(TypeError, match="nn.Module"):
        step_in_backward(torch.ones(2), lambda ps: torch.optim.SGD(ps, lr=0.1))
    frozen = nn.Linear(2, 1).requires_grad_(False)
    with pytest.raises(ValueError, match="no parameter that requires grad"):
        GradBytes(frozen)
