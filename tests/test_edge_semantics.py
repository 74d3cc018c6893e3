"""snippets/edge_semantics.py: the kink table's values against the documented rule, the
complex-gradient convention against central differences in the real and imaginary parts, and
the input checks."""

import pytest
import torch

from snippets.edge_semantics import complex_grad_by_parts, grad_at, titled


def test_kinks_follow_the_documented_rule():
    assert grad_at(torch.abs, 0.0).item() == 0.0           # minimum-norm subgradient of [-1, 1]
    assert grad_at(torch.relu, 0.0).item() == 0.0
    assert grad_at(torch.sqrt, 0.0).item() == float("inf")  # the one-sided limit
    assert torch.isnan(grad_at(torch.sqrt, -1.0)).item()    # undefined: NaN
    assert grad_at(torch.linalg.vector_norm, [0.0, 0.0]).tolist() == [0.0, 0.0]
    assert grad_at(torch.abs, [-2.0, 3.0]).tolist() == [-1.0, 1.0]


def test_ties_spread_for_max_and_pick_one_for_max_dim():
    assert grad_at(lambda x: x.max(), [1.0, 3.0, 3.0]).tolist() == [0.0, 0.5, 0.5]
    g = grad_at(lambda x: x.max(dim=0).values, [1.0, 3.0, 3.0])
    assert sorted(g.tolist()) == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("loss", [
    lambda t: (t * t).real.sum(),
    lambda t: (t.abs() ** 2).sum(),
    lambda t: torch.sin(t * t.conj()).real.sum() + t.imag.sum() ** 2,
])
def test_torch_complex_grad_is_dL_dx_plus_i_dL_dy(loss):
    z = torch.tensor([1 + 2j, -0.5 + 0.3j], dtype=torch.complex128)
    leaf = z.clone().requires_grad_(True)
    loss(leaf).backward()
    torch.testing.assert_close(leaf.grad, complex_grad_by_parts(loss, z))


def test_the_by_parts_gradient_is_not_the_holomorphic_derivative():
    # for Re(z^2) the complex derivative is 2z; the convention gives its conjugate
    z = torch.tensor(1 + 2j, dtype=torch.complex128)
    g = complex_grad_by_parts(lambda t: (t * t).real, z)
    torch.testing.assert_close(g, torch.conj(2 * z))
    assert not torch.allclose(g, 2 * z)


def test_the_by_parts_reference_does_not_use_complex_autograd():
    # a loss whose complex backward is wrong (the conjugate dropped): z.grad follows it, the
    # reference does not, so the page's comparison can fail
    class SquareNoConj(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * 2 * t                                   # torch's rule: g * conj(2t)

    def loss(t):
        return SquareNoConj.apply(t).real

    z = torch.tensor(1 + 2j, dtype=torch.complex128)
    leaf = z.clone().requires_grad_(True)
    loss(leaf).backward()
    assert not torch.allclose(leaf.grad, complex_grad_by_parts(loss, z))


W = torch.tensor(2.0, requires_grad=True)


@pytest.mark.parametrize("fn", [lambda x: torch.ones(()), lambda x: x.long(), lambda x: x.detach() * 2,
                                lambda x: W * 3])
def test_grad_at_names_a_function_that_does_not_depend_on_x(fn):
    with pytest.raises(ValueError, match="no gradient reaches x: .* build the result from x"):
        grad_at(fn, 1.0)
    with torch.inference_mode(), pytest.raises(ValueError, match="or inference mode is on"):
        grad_at(torch.sin, 1.0)


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="complex128"):
        complex_grad_by_parts(lambda t: t.real, torch.tensor(1.0))
    with pytest.raises(ValueError, match="real 0-d"):
        complex_grad_by_parts(lambda t: t, torch.tensor(1j, dtype=torch.complex128))
    with pytest.raises(TypeError, match="point must be"):
        grad_at(torch.abs, "0")
    with pytest.raises(ValueError, match="mermaid text"):
        titled("", "t", "d")
    assert titled("flowchart TB\n    a --> b", "T", "D").splitlines()[1:3] == ["    accTitle: T", "    accDescr: D"]


def test_grad_at_works_inside_no_grad():
    with torch.no_grad():
        assert grad_at(torch.abs, [-2.0, 3.0]).tolist() == [-1.0, 1.0]
