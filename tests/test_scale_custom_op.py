"""snippets.scale.custom_op: autograd_book::scaled_softplus, its fake implementation and its backward."""

import math

import pytest
import torch
import torch.nn.functional as F

from snippets.scale.compiled import CompileLog
from snippets.scale.custom_op import scaled_softplus


@pytest.fixture(autouse=True)
def fresh_compiler():
    torch.compiler.reset()
    yield
    torch.compiler.reset()


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0, 7.0])
def test_values_and_gradient_are_softplus_with_beta(beta):
    x = torch.linspace(-8.0, 8.0, 33, dtype=torch.float64, requires_grad=True)   # beta * x > 20 at 7.0
    ref = x.detach().clone().requires_grad_(True)
    y = scaled_softplus(x, beta)
    torch.testing.assert_close(y, F.softplus(ref, beta=beta))
    y.sum().backward()
    F.softplus(ref, beta=beta).sum().backward()
    torch.testing.assert_close(x.grad, ref.grad)
    torch.testing.assert_close(x.grad, torch.sigmoid(beta * x.detach()))


def test_the_backward_passes_gradcheck_and_gradgradcheck():
    x = torch.tensor([-2.0, -0.3, 0.0, 0.7, 3.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: scaled_softplus(t, 1.5), (x,))
    assert torch.autograd.gradgradcheck(lambda t: scaled_softplus(t, 1.5), (x,))


def test_opcheck_passes_every_test():
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    result = torch.library.opcheck(scaled_softplus, (x, 2.0))
    assert set(result) == {"test_schema", "test_autograd_registration", "test_faketensor",
                           "test_aot_dispatch_dynamic"}
    assert set(result.values()) == {"SUCCESS"}


def test_the_op_is_one_node_under_compile_and_its_backward_is_traced():
    log = CompileLog(aot=True)
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    torch.compile(lambda t: scaled_softplus(t, 2.0).sum(), backend=log, fullgraph=True)(x).backward()
    forward, backward = log.graphs
    assert forward.ops.count("autograd_book.scaled_softplus") == 1
    assert "softplus" not in forward.ops                    # not traced into
    assert "sigmoid" in backward.ops                        # the registered backward is
    torch.testing.assert_close(x.grad, torch.sigmoid(2.0 * x.detach()), rtol=0, atol=0)


def test_bad_arguments_fail_eagerly_and_under_compile():
    with pytest.raises(ValueError, match="x must be a floating-point tensor; got torch.int64"):
        scaled_softplus(torch.ones(2, dtype=torch.long), 1.0)
    for beta in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="beta must be a positive finite number"):
            scaled_softplus(torch.ones(2), beta)
    with pytest.raises(ValueError, match="beta must be .* that x's dtype torch.float32 can hold; got 1e"):
        scaled_softplus(torch.ones(2), 1e39)                # float64's, not float32's: inf * x
    with pytest.raises(ValueError, match="x must be a real floating-point tensor; got torch.complex64"):
        scaled_softplus(torch.ones(2, dtype=torch.complex64), 1.0)
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'x'"):
        scaled_softplus([1.0, 2.0], 1.0)
    with pytest.raises(Exception, match="beta must be a positive finite number"):  # the fake checks too
        torch.compile(lambda t: scaled_softplus(t, -1.0), backend="aot_eager", fullgraph=True)(torch.ones(2))


def test_degenerate_inputs_give_softplus_answers():
    empty = torch.ones(0, 3, requires_grad=True)
    out = scaled_softplus(empty, 2.0)
    assert out.shape == (0, 3)
    out.sum().backward()
    assert empty.grad.shape == (0, 3)
    x = torch.tensor([math.nan, math.inf, -math.inf, 0.0], requires_grad=True)
    y = scaled_softplus(x, 2.0)
    torch.testing.assert_close(y, F.softplus(x.detach(), beta=2.0), equal_nan=True)
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.tensor([math.nan, 1.0, 0.0, 0.5]), equal_nan=True)


def test_in_float16_beta_times_x_overflows_where_softplus_returns_x():
    """The limit the module's docstring states: the op computes beta * x in x's dtype."""
    x = torch.tensor([40000.0], dtype=torch.float16)
    assert torch.isinf(scaled_softplus(x, 2.0)).all()
    assert torch.equal(F.softplus(x, beta=2.0), x)
