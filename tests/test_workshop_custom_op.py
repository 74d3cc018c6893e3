"""The workshop's custom-op task: its operator's registered formula is autograd's, and its
``opcheck`` step refuses a backward that compile cannot trace even when its values are right."""

import importlib.util

import pytest
import torch

from snippets.workshop import custom_op
from snippets.workshop.check import Mismatch
from snippets.workshop.custom_op import OP_NAME, opcheck, swish, torch_forward

ROOT = custom_op.__file__.rsplit("/snippets/", 1)[0]


def _wrong(name):
    spec = importlib.util.spec_from_file_location(name, f"{ROOT}/docs/workshop/wrong/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.backward


def test_the_registered_formula_is_autograds_of_the_plain_forward():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 2, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    a = torch.randn(4, generator=gen, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(swish, (x, a))
    grad_y = torch.randn(3, 2, 4, generator=gen, dtype=torch.float64)
    got = torch.autograd.grad(swish(x, a), (x, a), grad_y)
    want = torch.autograd.grad(torch_forward(x, a), (x, a), grad_y)
    assert all(torch.allclose(g, w, rtol=1e-12, atol=1e-15) for g, w in zip(got, want))


def test_the_reference_passes_opcheck():
    assert "passes" in opcheck(custom_op.backward)


def test_right_values_in_numpy_fail_opcheck_by_name():
    backward = _wrong("custom_op__numpy")
    gen = torch.Generator().manual_seed(1)
    x, a, grad_y = (torch.randn(s, generator=gen, dtype=torch.float64) for s in ((3, 4), (4,), (3, 4)))
    assert all(torch.allclose(g, r) for g, r in zip(backward(grad_y, x, a), custom_op.backward(grad_y, x, a)))
    with pytest.raises(Mismatch) as exc:
        opcheck(backward)
    assert exc.value.kind == "opcheck" and "test_aot_dispatch_dynamic" in exc.value.what


def test_a_branch_on_a_tensor_value_fails_opcheck():
    def backward(grad_y, x, a):
        grad_x, grad_a = custom_op.backward(grad_y, x, a)
        if grad_a.abs().max().item() > 1e9:   # data-dependent: compile cannot guard on it
            raise ValueError("too large")
        return grad_x, grad_a

    with pytest.raises(Mismatch, match="test_aot_dispatch_dynamic"):
        opcheck(backward)


def test_opcheck_refuses_a_non_function():
    with pytest.raises(TypeError, match="pass your function backward"):
        opcheck("backward")


def test_the_notebook_defines_its_own_operator():
    from bookbuild.notebook_gen import GIVEN, cells

    forward_cell = cells("custom_op")[2].source
    assert GIVEN["OP_NAME"] in forward_cell and OP_NAME not in forward_cell
