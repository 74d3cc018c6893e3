"""The Functions of snippets/function_api.py, and the compatibility table of function-api.md.

Every Function passes gradcheck and gradgradcheck in float64. The table after the
``<!-- compat-table -->`` marker of docs/part6/function-api.md is recomputed cell by cell with
``compatibility``; every ``torch.autograd.Function`` subclass defined in snippets/ must have a
row. ``compatibility`` itself is shown to say "no" for a wrong backward and a wrong jvp.
"""

import ast
from pathlib import Path

import pytest
import torch

from snippets.contract import StableSoftplus
from bookcheck.table_kinds import _cases, _x, parse_compat_table
from snippets.custom_function import ScaledPow, Square
from snippets.custom_losses import SoftmaxCrossEntropy, StableLogSumExp, StoredSoftmaxCrossEntropy
from snippets.function_api import (
    COLUMNS, Cube, ScaleInPlace, SortWithIndices, SquareAndCube, compatibility, fwAD,
)

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "part6" / "function-api.md"


CASES = _cases()


def functions_defined_in_snippets():
    """{class name: file name} of every module-level class in snippets/ whose base is
    autograd.Function (a class made inside a function, such as the workshop checker's wrapper
    of a reader's own backward, is not a Function the book defines)."""
    found = {}
    for path in (ROOT / "snippets").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and any(ast.unparse(b).endswith("autograd.Function") for b in node.bases):
                found[node.name] = path.name
    return found


def test_every_function_of_the_book_has_a_row():
    rows = parse_compat_table(PAGE.read_text(encoding="utf-8"))
    defined = functions_defined_in_snippets()
    assert {name: row["defined in"] for name, row in rows.items()} == defined
    assert set(CASES) == set(defined)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_row_of_the_table_is_what_the_function_does(name):
    rows = parse_compat_table(PAGE.read_text(encoding="utf-8"))
    fn, inputs, prepare = CASES[name]()
    assert compatibility(fn, inputs, prepare) == {c: rows[name][c] for c in COLUMNS}


def test_an_altered_cell_is_rejected():
    text = PAGE.read_text(encoding="utf-8").replace(
        "| `Cube` | `function_api.py` | yes | yes | yes | yes |", "| `Cube` | `function_api.py` | yes | yes | yes | no: no jvp |"
    )
    fn, inputs, prepare = CASES["Cube"]()
    assert compatibility(fn, inputs, prepare) != {c: parse_compat_table(text)["Cube"][c] for c in COLUMNS}


@pytest.mark.parametrize("fn, make", [
    (Cube.apply, lambda: (_x().requires_grad_(),)),
    (lambda x: ScaleInPlace.apply(x.clone(), 2.5), lambda: (_x().requires_grad_(),)),
    (lambda x: SortWithIndices.apply(x)[0], lambda: (_x().requires_grad_(),)),
    (SquareAndCube.apply, lambda: (_x().requires_grad_(),)),
    (lambda x: SquareAndCube.apply(x)[1], lambda: (_x().requires_grad_(),)),  # one output unused: None
])
def test_gradcheck_and_gradgradcheck(fn, make):
    assert torch.autograd.gradcheck(fn, make())
    assert torch.autograd.gradgradcheck(fn, make())


class SavesItsInput(torch.autograd.Function):
    """The second style, saving x for backward and for jvp; subclasses write the formulas."""
    generate_vmap_rule = True

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])


class WrongBackward(SavesItsInput):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x  # x ** 2 forgotten

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 2 * x ** 2 * t  # wrong factor


def test_the_check_says_no_to_a_wrong_backward_and_a_wrong_jvp():
    row = compatibility(WrongBackward.apply, (_x(),))
    assert row["backward"] == "no: wrong values"
    assert row["jvp"] == "no: wrong tangent"
    assert row["vmap"] == "yes"


class Log(SavesItsInput):
    """log, correct everywhere; NaN for x < 0, where the batch of the vmap check reaches."""

    @staticmethod
    def forward(x):
        return x.log()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / x

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t / x


class ScaleInPlaceNewTangent(ScaleInPlace):
    """ScaleInPlace whose jvp returns a new tangent instead of scaling the dirty input's."""

    @staticmethod
    def jvp(ctx, t, _):
        return t * ctx.k


def test_a_nan_in_both_vmap_and_the_loop_agrees_and_an_in_place_jvp_is_named():
    assert compatibility(Log.apply, (_x().abs() + 0.1,)) == {  # only the -1.5 x row is below 0
        "backward": "yes", "double backward": "yes", "vmap": "yes", "jvp": "yes"}
    row = compatibility(ScaleInPlaceNewTangent.apply, (_x(), 3.0), prepare=lambda t: t.clone())
    assert row["jvp"] == "no: jvp must change a dirty input's tangent in place", row


def test_cube_jvp_equals_the_derivative():
    x = _x()
    with fwAD.dual_level():
        t = fwAD.unpack_dual(Cube.apply(fwAD.make_dual(x, torch.ones_like(x)))).tangent
    torch.testing.assert_close(t, 3 * x ** 2)


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="not the class"):
        compatibility(Cube, (_x(),))
    with pytest.raises(TypeError, match="inputs\\[0\\] must be a float64 tensor"):
        compatibility(Cube.apply, (_x().float(),))
    with pytest.raises(TypeError, match="k must be a Python number"):
        ScaleInPlace.apply(_x(), torch.tensor(2.0))


def test_an_in_place_function_without_prepare_is_told_to_pass_prepare():
    """Without ``prepare``, the in-place write lands on the leaf gradcheck made: the reason
    names the missing argument, not only "in-place"."""
    row = compatibility(ScaleInPlace.apply, (torch.tensor([1.0, 2.0], dtype=torch.float64), 3.0))
    assert row["backward"] == "no: in-place on a leaf: pass prepare=lambda t: t.clone()", row
