"""Tests of snippets/custom_function.py: each Function against torch's own ops and the math,
gradcheck and gradgradcheck in float64, and check_function's errors on bad input."""

import pytest
import torch
from torch.autograd.gradcheck import GradcheckError

from snippets.custom_function import ScaledPow, Square, check_function
from square_variants import square_with_backward


def f64(*values, requires_grad=True):
    return torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad)


def test_square_forward_and_gradient_match_the_math():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = Square.apply(x)
    assert y.tolist() == [1.0, 4.0, 9.0]
    assert type(y.grad_fn).__name__ == "SquareBackward"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]  # d(x^2)/dx = 2x


def test_square_matches_builtin_pow_for_any_upstream_gradient():
    torch.manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    g = torch.randn(4, 3, dtype=torch.float64)
    (mine,) = torch.autograd.grad(Square.apply(x), x, g)
    (ref,) = torch.autograd.grad(x ** 2, x, g)
    torch.testing.assert_close(mine, ref)


def test_square_passes_gradcheck_and_gradgradcheck_in_float64():
    torch.manual_seed(0)
    x = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Square.apply, (x,))
    assert torch.autograd.gradgradcheck(Square.apply, (x,))


@pytest.mark.parametrize("s_shape", [(), (3, 2), (2,)])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_scaled_pow_matches_torch_for_every_input(s_shape, p):
    torch.manual_seed(p)
    x = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    s = torch.randn(s_shape, dtype=torch.float64, requires_grad=True)
    g = torch.randn(3, 2, dtype=torch.float64)
    y = ScaledPow.apply(x, s, p)
    assert y.shape == x.shape
    mine = torch.autograd.grad(y, (x, s), g)
    ref = torch.autograd.grad(s * x ** p, (x, s), g)
    for a, b, t in zip(mine, ref, (x, s)):
        assert a.shape == t.shape
        torch.testing.assert_close(a, b)


def test_scaled_pow_at_a_point_against_the_formula():
    x, s = f64(2.0), f64(0.5)
    ScaledPow.apply(x, s, 3).sum().backward()
    assert x.grad.item() == pytest.approx(0.5 * 3 * 2.0 ** 2)  # s p x^(p-1) = 6
    assert s.grad.item() == pytest.approx(2.0 ** 3)  # x^p = 8


@pytest.mark.parametrize("s_shape", [(), (3, 2)])
def test_scaled_pow_passes_gradcheck_and_gradgradcheck_in_float64(s_shape):
    torch.manual_seed(1)
    x = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    s = torch.randn(s_shape, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ScaledPow.apply, (x, s, 3))
    assert torch.autograd.gradgradcheck(ScaledPow.apply, (x, s, 3))


def test_scaled_pow_skips_the_gradient_of_an_input_that_needs_none():
    x, s = f64(1.0, 2.0), f64(3.0, requires_grad=False)
    y = ScaledPow.apply(x, s, 2)
    y.sum().backward()
    assert s.grad is None
    assert x.grad.tolist() == [6.0, 12.0]  # 3 * 2x


@pytest.mark.parametrize("p", [0, -1, 2.0, True])
def test_scaled_pow_rejects_an_exponent_that_is_not_a_positive_int(p):
    with pytest.raises(ValueError, match="p must be a Python int >= 1"):
        ScaledPow.apply(f64(1.0), f64(1.0), p)


@pytest.mark.parametrize("s_shape", [(2, 2), (3,)], ids=["broadcasts beyond x", "does not broadcast"])
def test_scaled_pow_rejects_a_scale_that_does_not_broadcast_to_x(s_shape):
    with pytest.raises(ValueError, match="must broadcast to x's shape"):
        ScaledPow.apply(f64(1.0, 2.0), torch.ones(s_shape, dtype=torch.float64), 2)


def test_check_function_passes_both_functions():
    assert check_function(Square.apply, f64(1.0, 2.0, 3.0))
    assert check_function(ScaledPow.apply, f64(1.0, -2.0), f64(0.5), 3)


def test_check_function_rejects_a_wrong_backward():
    wrong_square = square_with_backward(lambda g, x: g * 3 * x)  # should be 2x
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        check_function(wrong_square, f64(1.0, 2.0))


def test_check_function_rejects_a_backward_that_is_not_differentiable():
    # right first derivative, no second: the backward is cut from the graph
    detached_square = square_with_backward(lambda g, x: g.detach() * 2 * x.detach())
    assert torch.autograd.gradcheck(detached_square, (f64(1.0, 2.0),))
    with pytest.raises(RuntimeError):
        check_function(detached_square, f64(1.0, 2.0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_check_function_rejects_low_precision_inputs_and_says_what_to_do(dtype):
    x = torch.tensor([1.0, 2.0], dtype=dtype, requires_grad=True)
    with pytest.raises(TypeError, match=r"input #0 is torch\.\w+.*t\.detach\(\)\.double\(\)\.requires_grad_\(\)"):
        check_function(Square.apply, x)


def test_check_function_runs_under_no_grad_and_refuses_inference_mode():
    with torch.no_grad():
        assert check_function(Square.apply, f64(1.0, 2.0))
    with torch.inference_mode(), pytest.raises(RuntimeError, match=r"outside torch.inference_mode\(\)"):
        check_function(Square.apply, f64(1.0, 2.0))


def test_check_function_allows_a_fixed_tensor_of_another_dtype():
    # gradcheck perturbs only the inputs that require grad: a fixed float32 factor is no error
    s32 = torch.tensor(0.5)
    assert torch.autograd.gradcheck(ScaledPow.apply, (f64(1.0, -2.0), s32, 3))
    assert check_function(ScaledPow.apply, f64(1.0, -2.0), s32, 3)
    # a fixed float32 tensor with dimensions beside a 0-d float64 one makes the output float32
    with pytest.raises(TypeError, match="output #0 is torch.float32, and its rounding swamps"):
        check_function(ScaledPow.apply, torch.tensor([1.0, -2.0]),
                       torch.tensor(0.5, dtype=torch.float64, requires_grad=True), 3)


def test_check_function_rejects_inputs_that_need_no_grad_and_non_callables():
    with pytest.raises(ValueError, match="no input requires grad"):
        check_function(Square.apply, f64(1.0, requires_grad=False))
    with pytest.raises(TypeError, match="fn must be callable"):
        check_function(3, f64(1.0))
    with pytest.raises(TypeError, match=r"pass Square\.apply, not the class"):
        check_function(Square, f64(1.0))
