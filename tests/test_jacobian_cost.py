"""snippets/jacobian_cost.py: Jacobians from VJPs (rows) and JVPs (columns) must equal
torch's Jacobian and the math, and cost m VJPs or n JVPs."""

import warnings

import pytest
import torch

from snippets.jacobian_cost import jacobian_by_jvps, jacobian_by_vjps

gen = torch.Generator().manual_seed(0)
A = torch.randn(3, 5, generator=gen, dtype=torch.float64)
X0 = torch.randn(5, generator=gen, dtype=torch.float64)

FUNCTIONS = {
    "linear": lambda x: A @ x,  # J = A
    "tanh": torch.tanh,  # J = diag(1 - tanh^2 x)
    "mixed": lambda x: torch.stack([x[0] * x[1], torch.exp(x[2]) + x[3] ** 2, x.sum()]),
    "scalar": lambda x: (torch.tanh(x) ** 2).sum(),  # 0-d output: m = 1
}


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("build", [jacobian_by_vjps, jacobian_by_jvps])
def test_equals_torch_jacobian(build, name):
    f = FUNCTIONS[name]
    J, calls = build(f, X0)
    want = torch.autograd.functional.jacobian(f, X0).reshape(-1, X0.numel())
    torch.testing.assert_close(J, want)
    m = f(X0).numel()
    assert J.shape == (m, X0.numel())
    assert calls == (m if build is jacobian_by_vjps else X0.numel())


def test_against_the_math():
    J, _ = jacobian_by_vjps(FUNCTIONS["linear"], X0)
    torch.testing.assert_close(J, A)
    J, _ = jacobian_by_jvps(torch.tanh, X0)
    torch.testing.assert_close(J, torch.diag(1 - torch.tanh(X0) ** 2))
    x = torch.tensor([2.0, 3.0, 0.0, -1.0, 0.5], dtype=torch.float64)
    J, _ = jacobian_by_jvps(FUNCTIONS["mixed"], x)
    want = torch.tensor(
        [[3.0, 2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, -2.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0]], dtype=torch.float64
    )
    torch.testing.assert_close(J, want)


def test_a_scalar_loss_needs_one_vjp_and_n_jvps():
    n = 50
    x = torch.randn(n, generator=gen, dtype=torch.float64)
    f = FUNCTIONS["scalar"]
    g_rev, vjps = jacobian_by_vjps(f, x)
    g_fwd, jvps = jacobian_by_jvps(f, x)
    (want,) = torch.autograd.grad(f(x.requires_grad_()), x)
    torch.testing.assert_close(g_rev[0], want)
    torch.testing.assert_close(g_fwd[0], want)
    assert (vjps, jvps) == (1, n)


def test_calls_emit_no_warning():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        jacobian_by_jvps(torch.tanh, X0)
        jacobian_by_vjps(torch.tanh, X0)
    assert [str(w.message) for w in seen] == []


def test_input_is_not_modified_and_needs_no_grad():
    x = X0.clone()
    jacobian_by_vjps(torch.tanh, x)
    jacobian_by_jvps(torch.tanh, x)
    assert torch.equal(x, X0) and not x.requires_grad and x.grad is None


@pytest.mark.parametrize(
    "f, x, error, message",
    [
        (torch.tanh, torch.zeros(2, 2), ValueError, r"1-D floating-point tensor \(n,\), got torch.float32 tensor of shape \(2, 2\)"),
        (torch.tanh, torch.zeros(3, dtype=torch.int64), ValueError, "1-D floating-point"),
        (torch.tanh, [1.0, 2.0], ValueError, "got list"),
        ("tanh", torch.zeros(3), TypeError, "f must be a function"),
        (lambda x: torch.outer(x, x), torch.zeros(3), ValueError, r"shape \(m,\) or \(\), got \(3, 3\)"),
        # NaN spreads along a row by VJPs and along a column by JVPs: the two disagreed
        (torch.sin, torch.tensor([float("nan"), 0.0]), ValueError, "x holds NaN or inf"),
        # by VJPs the imaginary part was dropped silently, by JVPs it was kept
        (lambda x: x * (1 + 2j), torch.zeros(3), ValueError, r"complex .* torch.view_as_real\(y\)"),
        # a graph, but not through x: by VJPs torch's own "appears to not have been used"
        (lambda x: torch.ones(2, requires_grad=True) * 2, torch.zeros(3), ValueError, "does not use x"),
    ],
)
@pytest.mark.parametrize("build", [jacobian_by_vjps, jacobian_by_jvps])
def test_rejects_bad_inputs(build, f, x, error, message):
    with pytest.raises(error, match=message):
        build(f, x)


@pytest.mark.parametrize("build", [jacobian_by_vjps, jacobian_by_jvps])
def test_refuses_inference_mode_and_names_the_way_out(build):
    x0 = torch.zeros(3)  # an ordinary tensor, used inside the mode
    with torch.inference_mode():
        x = torch.zeros(3)
        with pytest.raises(ValueError, match="call outside torch.inference_mode"):
            build(torch.tanh, x0)
    with pytest.raises(ValueError, match=r"x.clone\(\) there"):
        build(torch.tanh, x)
    J, _ = build(torch.tanh, x.clone())
    assert torch.equal(J, torch.eye(3))
