"""The second-derivative trace of docs/part6/higher-order.md: its forward table claims that
the rows ``gz`` and ``gx`` are the first derivatives dL/dz and dL/dx of L = z ** 2, z = w * x.
The harness recomputes each row's formula; this test checks that the formulas are those
derivatives, by asking torch for them at the table's own values."""

from pathlib import Path

import pytest
import torch

from harness import parse_tables

PAGE = Path(__file__).resolve().parent.parent / "docs" / "part6" / "higher-order.md"


def second_order_rows(tables):
    forwards = [t for t in tables if t.kind == "forward"]
    rows = {r[0]: r for t in forwards for r in t.rows}
    if not {"x", "w", "z", "gz", "gx"} <= set(rows):
        raise AssertionError("the page's second-order forward table needs rows x, w, z, gz, gx")
    return rows


def check_first_derivatives(rows):
    """gz and gx, read from the table, must equal torch's dL/dz and dL/dx."""
    x = torch.tensor(float(rows["x"][2]), dtype=torch.float64, requires_grad=True)
    w = torch.tensor(float(rows["w"][2]), dtype=torch.float64, requires_grad=True)
    z = w * x
    L = z ** 2
    gz, gx = torch.autograd.grad(L, [z, x])
    for name, truth in (("gz", gz), ("gx", gx)):
        shown = float(rows[name][2])
        if not abs(shown - truth.item()) <= 1e-9:
            raise AssertionError(f"row {name}: the table says {shown:g}, torch's first derivative is {truth.item():g}")
        # the formula must compute it too, not only the value
        value = eval(rows[name][1], {}, {"x": x, "w": w, "z": z, "gz": gz}).detach()  # noqa: S307 - the page's formula
        if not abs(float(value) - truth.item()) <= 1e-9:
            raise AssertionError(f"row {name}: {rows[name][1]} gives {float(value):g}, not {truth.item():g}")


def test_the_page_rows_are_first_derivatives():
    check_first_derivatives(second_order_rows(parse_tables(PAGE)))


@pytest.mark.parametrize("name, cell, index", [("gz", "13", 2), ("gx", "gz * x", 1), ("gx", "35", 2)])
def test_an_altered_row_is_rejected(name, cell, index):
    rows = second_order_rows(parse_tables(PAGE))
    rows[name] = list(rows[name])
    rows[name][index] = cell
    if index == 1:  # a wrong formula: fix the value to what that formula gives, so only the formula is wrong
        rows[name][2] = str(2 * 6 * 2)
    with pytest.raises(AssertionError, match=f"row {name}"):
        check_first_derivatives(rows)
