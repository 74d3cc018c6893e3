"""Tests of snippets/finite_diff.py against the math and torch's autograd, and its errors."""

import math

import pytest
import torch

from snippets.finite_diff import central_difference, check_gradient
from square_variants import square_with_backward


def hand_trace_loss(w):
    # L = (w * x + b) ** 2 at x = 2, b = 1: dL/dw = 2 (w x + b) x = 28 at w = 3
    return (w * 2.0 + 1.0) ** 2


def test_central_difference_on_the_hand_trace_graph():
    w = torch.tensor(3.0, dtype=torch.float64)
    g = central_difference(hand_trace_loss, w)
    assert g.shape == w.shape and g.dtype == torch.float64
    assert abs(g.item() - 28.0) < 1e-7


def test_central_difference_divides_by_the_step_actually_taken():
    # 3 + 1e-6 and 3 - 1e-6 round to floats 2.00000000028e-6 apart, not 2e-6: dividing by 2h
    # was off by 28 * 1.4e-10 = 3.9e-9 on this quadratic, which has no truncation error at all
    w = torch.tensor(3.0, dtype=torch.float64)
    assert abs(central_difference(hand_trace_loss, w).item() - 28.0) < 1e-12
    # at 3e9 the floats are 4.8e-7 apart: x + 1e-6 lands 9.5e-7 away, and d(sum)/dx is still 1
    x = torch.tensor([3e9, -3e9, 1e10 + 0.5], dtype=torch.float64)
    torch.testing.assert_close(central_difference(lambda t: (t - x).sum(), x), torch.ones(3, dtype=torch.float64), rtol=1e-12, atol=0)
    analytic, numeric = check_gradient(lambda t: ((t - 1e10) ** 2).sum(), x[2:])
    assert analytic.item() == 1.0 and abs(numeric.item() - 1.0) < 1e-9


def test_central_difference_against_known_derivatives_on_a_matrix():
    x = torch.linspace(-1.0, 1.0, 6, dtype=torch.float64).reshape(2, 3)
    g = central_difference(lambda t: torch.sin(t).sum(), x)
    assert g.shape == (2, 3)
    torch.testing.assert_close(g, torch.cos(x), atol=1e-9, rtol=0)


def test_central_difference_error_shrinks_as_h_squared_for_a_cubic():
    # f(w) = w^3 at w = 1: the central difference is 3 + h^2 exactly in exact arithmetic
    w = torch.tensor(1.0, dtype=torch.float64)
    errors = [central_difference(lambda t: t ** 3, w, h).item() - 3.0 for h in (1e-2, 5e-3)]
    assert errors[0] == pytest.approx(1e-4, rel=1e-5)
    assert errors[0] / errors[1] == pytest.approx(4.0, rel=1e-4)


def test_central_difference_leaves_x_and_grad_mode_alone():
    x = torch.tensor([0.5, -2.0], dtype=torch.float64, requires_grad=True)
    before = x.detach().clone()
    central_difference(lambda t: (t ** 2).sum(), x)
    assert torch.equal(x.detach(), before) and x.grad is None and x._version == 0
    assert torch.is_grad_enabled()


def test_central_difference_runs_f_without_building_a_graph():
    seen = []

    def f(t):
        seen.append(torch.is_grad_enabled())
        return (t * 3.0).sum()

    central_difference(f, torch.zeros(2, dtype=torch.float64, requires_grad=True))
    assert seen == [False] * 4  # two evaluations per element


def test_check_gradient_agrees_with_autograd_and_math():
    torch.manual_seed(0)
    x = torch.randn(3, 2, dtype=torch.float64)
    analytic, numeric = check_gradient(lambda t: torch.exp(t).mean(), x)
    torch.testing.assert_close(analytic, torch.exp(x) / 6)
    torch.testing.assert_close(numeric, torch.exp(x) / 6, atol=1e-8, rtol=0)


def test_check_gradient_catches_a_one_percent_wrong_backward():
    wrong = square_with_backward(lambda g, t: g * 2.02 * t)
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    with pytest.raises(AssertionError, match=r"gradient mismatch at flat index 0.*2 of 2 elements differ"):
        check_gradient(lambda t: wrong(t).sum(), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_rejects_low_precision_x_and_says_what_to_do(dtype):
    with pytest.raises(TypeError, match=r"float64 tensor, got torch\.float(32|16).*Pass x\.double\(\)"):
        central_difference(hand_trace_loss, torch.tensor(3.0, dtype=dtype))


def test_rejects_an_f_that_computes_in_float32():
    x32 = torch.tensor(2.0)
    with pytest.raises(TypeError, match="f returned torch.float32: compute it in float64"):
        central_difference(lambda w: (w.float() * x32) ** 2, torch.tensor(3.0, dtype=torch.float64))


@pytest.mark.parametrize(
    "f, x, h, error, message",
    [
        (hand_trace_loss, 3.0, 1e-6, TypeError, "got float"),
        (lambda t: t * 2, torch.ones(2, dtype=torch.float64), 1e-6, ValueError, r"one-element tensor, got \(2,\)"),
        (lambda t: 1.0, torch.ones(1, dtype=torch.float64), 1e-6, ValueError, "got float"),
        (hand_trace_loss, torch.tensor(3.0, dtype=torch.float64), 0.0, ValueError, "h must be a positive finite float"),
        (hand_trace_loss, torch.tensor(3.0, dtype=torch.float64), math.nan, ValueError, "h must be a positive finite float"),
        ("f", torch.tensor(3.0, dtype=torch.float64), 1e-6, TypeError, "f must be a function of x"),
    ],
)
def test_rejects_bad_input_with_a_message(f, x, h, error, message):
    with pytest.raises(error, match=message):
        central_difference(f, x, h)


def test_check_gradient_rejects_an_f_that_ignores_its_argument():
    c = torch.tensor(3.0, dtype=torch.float64)
    with pytest.raises(ValueError, match="does not require grad"):
        check_gradient(lambda t: c * 2, torch.tensor(1.0, dtype=torch.float64))


def test_check_gradient_works_inside_no_grad_and_refuses_inference_mode():
    w = torch.tensor(3.0, dtype=torch.float64)
    with torch.no_grad():  # an evaluation loop: f's graph is still recorded
        analytic, numeric = check_gradient(hand_trace_loss, w)
    assert math.isclose(analytic.item(), 28.0) and torch.allclose(numeric, analytic)
    with torch.inference_mode(), pytest.raises(RuntimeError, match="call it outside torch.inference_mode"):
        check_gradient(hand_trace_loss, w)


def test_check_gradient_names_an_f_that_reads_a_parameter_instead_of_its_argument():
    lin = torch.nn.Linear(2, 1).double()
    X = torch.ones(3, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="no gradient reaches f's argument: f reads a parameter"):
        check_gradient(lambda w: lin(X).sum() + 0 * w.detach().sum(), lin.weight.detach())
