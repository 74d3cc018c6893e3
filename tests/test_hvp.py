"""snippets/hvp.py against Hessians written out by hand, and the gradient penalty against a
critic whose input gradient is known in closed form."""

import pytest
import torch
from torch import nn

from snippets.hvp import gradient_penalty, hvp_double_backward, hvp_three_ways


def cubic_plus_quadratic(a, B):
    """f(x) = sum(a * x^3) + x^T B x, whose Hessian is diag(6 a x) + B + B^T."""
    def f(x):
        return (a * x ** 3).sum() + x @ B @ x
    def hessian(x):
        return torch.diag(6 * a * x) + B + B.T
    return f, hessian


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_three_ways_equal_the_hand_written_hessian(seed):
    g = torch.Generator().manual_seed(seed)
    n = 5
    a = torch.randn(n, generator=g, dtype=torch.float64)
    B = torch.randn(n, n, generator=g, dtype=torch.float64)
    x = torch.randn(n, generator=g, dtype=torch.float64)
    v = torch.randn(n, generator=g, dtype=torch.float64)
    f, hessian = cubic_plus_quadratic(a, B)
    want = hessian(x) @ v
    results = hvp_three_ways(f, x, v)
    assert set(results) == {"double backward", "autograd.functional.hvp", "torch.func"}
    for name, hv in results.items():
        assert hv.shape == x.shape, name
        torch.testing.assert_close(hv, want, msg=name)


def test_double_backward_is_not_the_gradient():
    # a wrong implementation that returns the gradient (one backward) must not pass
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    v = torch.tensor([1.0, 0.0], dtype=torch.float64)
    hv = hvp_double_backward(lambda t: (t ** 3).sum(), x, v)
    torch.testing.assert_close(hv, torch.tensor([6.0, 0.0], dtype=torch.float64))
    assert not torch.allclose(hv, 3 * x ** 2)


def test_caller_tensor_untouched_and_works_under_no_grad():
    x = torch.tensor([1.0, 2.0])
    v = torch.ones(2)
    with torch.no_grad():
        hv = hvp_double_backward(lambda t: (t ** 2).sum(), x, v)
    torch.testing.assert_close(hv, torch.tensor([2.0, 2.0]))
    assert not x.requires_grad and x.grad is None


@pytest.mark.parametrize(
    "args, error, match",
    [
        (("not callable", torch.ones(2), torch.ones(2)), TypeError, "f must be a function"),
        ((lambda t: t.sum(), torch.ones(2, dtype=torch.long), torch.ones(2)), TypeError, "floating-point"),
        ((lambda t: t.sum(), torch.ones(2), torch.ones(3)), ValueError, "x's shape"),
        ((lambda t: t, torch.ones(2), torch.ones(2)), ValueError, "must return a 0-d tensor"),
        # torch.func's product would come back float64 and the other two float32
        ((lambda t: t.sum(), torch.ones(2), torch.ones(2, dtype=torch.float64)), TypeError, "pass v in x's dtype"),
    ],
)
def test_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        hvp_double_backward(*args)


def test_penalty_of_a_linear_critic_is_known_exactly():
    # critic(x) = w . x + b: the input gradient is w for every sample, so the penalty is (|w| - 1)^2
    torch.manual_seed(0)
    critic = nn.Linear(3, 1)
    with torch.no_grad():
        critic.weight.copy_(torch.tensor([[2.0, 0.0, 0.0]]))
    real, fake = torch.randn(5, 3), torch.randn(5, 3)
    p = gradient_penalty(critic, real, fake)
    torch.testing.assert_close(p, torch.tensor(1.0))
    p.backward()
    # d/dw (|w| - 1)^2 = 2 (|w| - 1) w / |w| = (2, 0, 0)
    torch.testing.assert_close(critic.weight.grad, torch.tensor([[2.0, 0.0, 0.0]]))
    assert critic.bias.grad is None            # the slope does not depend on the bias


def test_penalty_reaches_critic_not_generator_even_under_no_grad():
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
    generator = nn.Linear(3, 2)
    fake = generator(torch.randn(4, 3))
    with torch.no_grad():
        p = gradient_penalty(critic, torch.randn(4, 2), fake)
    assert p.requires_grad
    p.backward()
    assert critic[0].weight.grad is not None and critic[2].weight.grad is not None
    assert all(q.grad is None for q in generator.parameters())


def test_penalty_reaches_no_graph_behind_real():
    encoder = nn.Linear(3, 2)
    critic = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
    gradient_penalty(critic, encoder(torch.randn(4, 3)), torch.randn(4, 2)).backward()
    assert critic[0].weight.grad is not None
    assert all(q.grad is None for q in encoder.parameters())


@pytest.mark.parametrize("norm", [nn.BatchNorm1d(4), nn.BatchNorm1d(4, track_running_stats=False).eval(),
                                  nn.LazyBatchNorm1d()])
def test_penalty_refuses_a_critic_that_mixes_samples(norm):
    # a batch norm's output for sample 0 depends on sample 1: the gradient of the summed scores
    # is not per sample (the Jacobian of the scores is not diagonal)
    critic = nn.Sequential(nn.Linear(2, 4), norm, nn.Linear(4, 1))
    x = torch.randn(3, 2)
    with pytest.raises(ValueError, match="mix the samples.*use LayerNorm"):  # a lazy one: before its first call
        gradient_penalty(critic, x, torch.randn(3, 2))
    J = torch.autograd.functional.jacobian(lambda t: critic(t).squeeze(1), x)  # (N, N, D)
    assert J[0, 1].abs().max() > 0
    critic[1] = nn.LayerNorm(4)  # per sample: accepted
    assert torch.autograd.functional.jacobian(lambda t: critic(t).squeeze(1), x)[0, 1].abs().max() == 0
    gradient_penalty(critic, x, torch.randn(3, 2))


def test_hessian_vector_products_refuse_an_inference_tensor():
    with torch.inference_mode():
        x = torch.ones(2)
    with pytest.raises(ValueError, match=r"pass x.clone\(\) made outside inference_mode"):
        hvp_double_backward(lambda t: (t ** 3).sum(), x, torch.ones(2))
    assert hvp_double_backward(lambda t: (t ** 3).sum(), x.clone(), torch.ones(2)).tolist() == [6.0, 6.0]


def test_penalty_refuses_inference_mode():
    # enable_grad does not undo inference_mode: the critic records nothing, and the penalty
    # would be the constant mean((0 - 1)^2) = 1 with no graph, silently
    critic = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
    with torch.inference_mode(), pytest.raises(RuntimeError, match=r"torch.inference_mode\(\) turns off even inside enable_grad"):
        gradient_penalty(critic, torch.randn(4, 2), torch.randn(4, 2))
    with torch.inference_mode(), torch.enable_grad():  # what the refusal guards against
        assert torch.is_grad_enabled() and not critic(torch.randn(4, 2).requires_grad_(True)).requires_grad


def test_hessian_vector_products_refuse_inference_mode():
    # there the double backward and torch.autograd.functional.hvp return zeros for any f, silently
    f = lambda t: (t ** 3).sum() + t[0] * t[1]  # noqa: E731 - H v = (5, -11) at x = (1, 2), v = (1, -1)
    x, v = torch.tensor([1.0, 2.0]), torch.tensor([1.0, -1.0])
    for fn in (hvp_double_backward, hvp_three_ways):
        with torch.inference_mode(), pytest.raises(RuntimeError, match=rf"^{fn.__name__} needs autograd"):
            fn(f, x, v)
    with torch.inference_mode():  # what the refusal guards against
        assert torch.equal(torch.autograd.functional.hvp(f, x, v)[1], torch.zeros(2))
    with torch.no_grad():         # under no_grad the product is right
        assert torch.equal(hvp_double_backward(f, x, v), torch.tensor([5.0, -11.0]))


def test_penalty_rejects_bad_shapes():
    critic = nn.Linear(2, 1)
    with pytest.raises(ValueError, match=r"must both be \(N, D\)"):
        gradient_penalty(critic, torch.ones(4, 2), torch.ones(3, 2))


@pytest.mark.parametrize("dtype, rtol", [(torch.float16, 4e-3), (torch.bfloat16, 3e-2), (torch.float64, 1e-12)])
def test_penalty_follows_the_critics_dtype(dtype, rtol):
    # real == fake: every interpolate is real itself, whatever the mixing weights, so the penalty
    # is mean((|grad critic(real)| - 1)^2), computed here in float64 on the same (rounded) numbers
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1)).to(dtype)
    real = torch.randn(5, 2).to(dtype)                     # (N, D)
    p = gradient_penalty(critic, real, real.clone())
    assert p.dtype == dtype
    p.backward()
    assert all(q.grad.dtype == dtype for q in critic.parameters() if q.grad is not None)
    exact = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    exact.load_state_dict({k: v.double() for k, v in critic.state_dict().items()})
    x = real.double().requires_grad_(True)
    (g,) = torch.autograd.grad(exact(x).sum(), x)
    want = ((g.norm(dim=1) - 1) ** 2).mean()
    torch.testing.assert_close(p.double(), want, rtol=rtol, atol=0)


def test_penalty_refuses_an_empty_batch_and_mixed_dtypes():
    critic = nn.Linear(2, 1)
    with pytest.raises(ValueError, match=r"real and fake are empty, \(0, 2\): the penalty is a mean over samples; pass N >= 1"):
        gradient_penalty(critic, torch.ones(0, 2), torch.ones(0, 2))
    with pytest.raises(TypeError, match="real is torch.float32 and fake torch.float64: pass both in the critic's dtype"):
        gradient_penalty(critic, torch.ones(3, 2), torch.ones(3, 2, dtype=torch.float64))
