"""Tests of snippets/contract.py: the stable softplus Function against torch and math, its
gradients by gradcheck and gradgradcheck, and every check of its contract, including the
messages that say what to do."""

import math
import warnings

import numpy as np
import pytest
import torch

from snippets.contract import (
    StableSoftplus,
    check_input,
    eval_gate,
    grads_are_finite,
    max_grad_error,
    saved_bytes_per_element,
    softplus,
)


def quiet_nested(layout):
    """A nested tensor of two rows, without torch's once-per-process prototype warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=layout)


def test_gradcheck_and_gradgradcheck_in_float64():
    torch.manual_seed(0)
    x = (torch.randn(4, 3, dtype=torch.float64) * 5).requires_grad_()
    assert torch.autograd.gradcheck(StableSoftplus.apply, (x,))
    assert torch.autograd.gradgradcheck(StableSoftplus.apply, (x,))


def test_forward_matches_math_and_torch_softplus():
    x = torch.linspace(-30, 30, 121, dtype=torch.float64)
    exact = torch.tensor([math.log1p(math.exp(v)) for v in x.tolist()], dtype=torch.float64)
    torch.testing.assert_close(StableSoftplus.apply(x), exact, rtol=1e-12, atol=0)
    x32 = torch.linspace(-15, 15, 61)
    torch.testing.assert_close(StableSoftplus.apply(x32), torch.nn.functional.softplus(x32))


def test_gradient_is_sigmoid_and_shapes_are_kept():
    x = torch.linspace(-6, 6, 24, dtype=torch.float64).reshape(2, 3, 4).requires_grad_()
    y = StableSoftplus.apply(x)
    assert y.shape == x.shape and y.dtype == x.dtype
    g = torch.randn(2, 3, 4, dtype=torch.float64)
    (grad,) = torch.autograd.grad(y, x, g)
    torch.testing.assert_close(grad, g * torch.sigmoid(x.detach()))


def test_large_inputs_stay_finite_where_the_naive_formula_overflows():
    x = torch.tensor([-200.0, -50.0, 0.0, 89.0, 1e4, 3e38], requires_grad=True)
    y = StableSoftplus.apply(x)
    y.sum().backward()
    assert torch.isfinite(y).all() and torch.isfinite(x.grad).all()
    assert (y >= x.detach().clamp(min=0)).all()
    naive = torch.log(1 + torch.exp(x.detach()))
    assert not torch.isfinite(naive).all()  # the failure the stable form avoids


@pytest.mark.parametrize(
    "x, shape, error, message",
    [
        ([1.0, 2.0], None, TypeError, r"torch.as_tensor"),
        (torch.tensor([1, 2]), None, TypeError, r"got torch.int64: convert it with x.float\(\)"),
        (torch.zeros(2, dtype=torch.float8_e4m3fn), None, TypeError, r"float16 or wider, got torch.float8_e4m3fn"),
        (torch.zeros(8, 3), (None, 4), ValueError, r"shape \(any, 4\), got \(8, 3\): reshape"),
        (torch.zeros(2, 8, 4), (None, 4), ValueError, r"shape \(any, 4\), got \(2, 8, 4\)"),   # any: one dim
        (torch.eye(2).to_sparse(), None, TypeError, r"dense tensor with values, got layout torch.sparse_coo"),
        (torch.zeros(2, device="meta"), None, TypeError, r"got layout torch.strided on meta"),
        (quiet_nested(torch.jagged), None, TypeError, r"x is a nested tensor, with no single shape: pass one"),
        (torch.zeros(8, 3), (8,), ValueError, r"shape \(8\), got \(8, 3\)"),
        (torch.tensor([[0.0, float("nan")], [1.0, 2.0], [float("inf"), float("-inf")]]), None,
         ValueError, r"3 non-finite value\(s\) \(inf or NaN\) in row\(s\) \[0, 2\]: drop or repair"),
        (torch.tensor(float("nan")), None, ValueError, r"1 non-finite value\(s\) \(inf or NaN\): drop"),
    ],
)
def test_schema_rejects_with_a_message_that_says_what_to_do(x, shape, error, message):
    with pytest.raises(error, match=message):
        check_input(x, shape)
    with pytest.raises(error, match=message):
        softplus(x, shape)


def test_schema_accepts_a_good_batch_and_softplus_is_the_function():
    x = torch.randn(8, 4, requires_grad=True)
    assert check_input(x, (None, 4)) is None
    y = softplus(x, (None, 4))
    assert type(y.grad_fn).__name__ == "StableSoftplusBackward"
    torch.testing.assert_close(y, StableSoftplus.apply(x))


def test_max_grad_error_is_small_for_a_right_backward_and_large_for_a_wrong_one():
    x = torch.linspace(-5, 5, 101, dtype=torch.float64)
    assert max_grad_error(StableSoftplus.apply, x) < 1e-8

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return torch.nn.functional.softplus(t)

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * torch.sigmoid(t) * 1.01

    # the error of a 1 % wrong backward is 1 % of the largest sigmoid on the grid
    assert max_grad_error(Wrong.apply, x) == pytest.approx(0.01 * torch.sigmoid(x).max().item(), rel=1e-4)


def test_max_grad_error_checks_its_inputs():
    with pytest.raises(TypeError, match=r"float64 tensor, got torch.float32: pass x.double\(\)"):
        max_grad_error(StableSoftplus.apply, torch.zeros(3))
    with pytest.raises(ValueError, match="eps must be positive"):
        max_grad_error(StableSoftplus.apply, torch.zeros(3, dtype=torch.float64), eps=0)
    with pytest.raises(ValueError, match="must be elementwise"):
        max_grad_error(lambda t: t.sum(), torch.zeros(3, dtype=torch.float64))


def test_max_grad_error_refuses_a_same_shape_fn_that_is_not_elementwise():
    # cumsum keeps the shape, but its Jacobian is lower-triangular: one perturbation of all of x
    # measures its row sums (3, 2, 1), not its diagonal, and the "error" was 2.0 for a right backward
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    for fn in (lambda t: t.cumsum(0), lambda t: t.softmax(0), lambda t: t.flip(0)):
        with pytest.raises(ValueError, match=r"fn is not elementwise: moving x's flat index 0 changed its "
                                             r"output at flat index [12]; .* torch.autograd.gradcheck"):
            max_grad_error(fn, x)
    # elementwise functions, NaN outputs and a single element still pass the check
    assert max_grad_error(torch.exp, x) < 1e-8
    assert max_grad_error(lambda t: t * torch.tensor([1.0, float("nan"), 1.0], dtype=torch.float64), x) != 0
    assert max_grad_error(lambda t: t.cumsum(0), x[:1]) < 1e-8


def test_saved_bytes_count_what_the_graph_keeps():
    x = torch.randn(100, requires_grad=True)  # float32: 4 bytes per element
    assert saved_bytes_per_element(StableSoftplus.apply, x) == 4.0  # x only
    # log(1 + exp(x)): exp saves its result, log saves its input: two float32 tensors
    assert saved_bytes_per_element(lambda t: torch.log(1 + torch.exp(t)), x) == 8.0
    x64 = torch.randn(10, dtype=torch.float64, requires_grad=True)
    assert saved_bytes_per_element(StableSoftplus.apply, x64) == 8.0
    with pytest.raises(ValueError, match="requires_grad=True"):
        saved_bytes_per_element(StableSoftplus.apply, torch.randn(3))
    # a module whose parameters require grad builds a graph from data that does not
    assert saved_bytes_per_element(torch.nn.Linear(4, 4), torch.randn(8, 4)) == 4.0   # it saves x
    with pytest.raises(ValueError, match="empty"):
        saved_bytes_per_element(StableSoftplus.apply, torch.zeros(0, requires_grad=True))


def test_grads_are_finite_policy():
    w = torch.ones(3, requires_grad=True)
    (w * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert grads_are_finite([w]) is True
    v = torch.ones(3, requires_grad=True)
    (v * torch.tensor([1.0, float("nan"), 3.0])).sum().backward()
    assert grads_are_finite([w, v]) is False
    with pytest.raises(ValueError, match=r"call loss.backward\(\) before checking"):
        grads_are_finite([torch.ones(2, requires_grad=True)])
    with pytest.raises(ValueError, match="no parameters given"):
        grads_are_finite([])


def test_grads_are_finite_skips_a_frozen_layer_and_reads_a_sparse_gradient():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    model[0].requires_grad_(False)  # frozen: no .grad, and that is not a bug
    model(torch.ones(3, 2)).sum().backward()
    assert grads_are_finite(model.parameters()) is True
    emb = torch.nn.Embedding(4, 2, sparse=True)
    emb(torch.tensor([0, 2])).sum().backward()
    assert grads_are_finite(emb.parameters()) is True
    emb.weight.grad = torch.sparse_coo_tensor([[1]], [[float("inf"), 0.0]], (4, 2), check_invariants=True)
    assert grads_are_finite(emb.parameters()) is False
    q = torch.nn.Parameter(torch.zeros(1))
    q.grad = torch.tensor([float("nan")])
    q.requires_grad_(False)  # frozen with a stale .grad, which a step still applies
    assert grads_are_finite([q]) is False


def test_eval_gate_reads_a_loss_beyond_float32_as_finite():
    """A float64 held-out loss above float32's range is still a finite number to compare."""
    assert eval_gate(1e300, 1e300) == (True, "held-out loss 1e+300 <= limit 1.1e+300")
    assert eval_gate(2e300, 1e300)[0] is False
    assert eval_gate(1.0, 1.0, max_increase=torch.tensor(0.1)) == eval_gate(1.0, 1.0, max_increase=0.1)


def test_eval_gate():
    assert eval_gate(0.30, 0.28)[0] is True
    assert eval_gate(torch.tensor(0.30), torch.tensor(0.28)) == (True, "held-out loss 0.3 <= limit 0.308")
    assert eval_gate(0.40, 0.28) == (False, "held-out loss 0.4 > limit 0.308")
    assert eval_gate(float("nan"), 0.28) == (False, "held-out loss is nan")
    assert eval_gate(float("inf"), 0.28)[0] is False
    assert eval_gate(0.29, 0.28, max_increase=0.0)[0] is False
    with pytest.raises(ValueError, match="known to be good"):
        eval_gate(0.3, float("nan"))
    with pytest.raises(ValueError, match="known to be good"):
        eval_gate(0.3, -1.0)
    with pytest.raises(ValueError, match="max_increase must be a finite number >= 0"):
        eval_gate(0.3, 0.28, max_increase=-0.1)
    with pytest.raises(ValueError, match=r"reduce it, e.g. .mean\(\)"):
        eval_gate(torch.ones(3), 0.28)
    # a loss computed with NumPy is a real number too; a NumPy bool is not a loss
    assert eval_gate(np.float32(0.30), np.float64(0.28)) == (True, "held-out loss 0.3 <= limit 0.308")
    with pytest.raises(TypeError, match="candidate_loss must be a number or a one-element tensor, got bool"):
        eval_gate(np.bool_(True), 0.28)
