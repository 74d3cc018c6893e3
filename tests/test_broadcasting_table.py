"""The table of shape pairs on docs/part2/broadcasting.md, read from the page and checked row
by row with torch.broadcast_shapes and with real tensors; "error" rows must raise."""

import ast
import re
from pathlib import Path

import pytest
import torch

from bookcheck.tables import marked_tables

PAGE = Path(__file__).resolve().parent.parent / "docs" / "part2" / "broadcasting.md"
MARKER = "<!-- broadcast-table -->"


def read_table(text):
    """Rows (a_shape, b_shape, result) of the table right after MARKER; result is a tuple or "error"."""
    tables = marked_tables(text, "broadcast-table")
    if len(tables) != 1:
        raise ValueError(f"expected exactly one {MARKER} line, found {len(tables)}")
    rows = []
    for cells in tables[0].rows:
        cells = [c.strip("`").strip() for c in cells]
        if len(cells) != 3:
            raise ValueError(f"a row needs three cells: {cells!r}")
        a, b = (tuple(ast.literal_eval(c)) for c in cells[:2])
        result = "error" if cells[2] == "error" else tuple(ast.literal_eval(cells[2]))
        rows.append((a, b, result))
    return rows


def problems(rows):
    """What torch disagrees with, one message per wrong row (empty: every row is right)."""
    found = []
    for a, b, claimed in rows:
        try:
            truth = tuple(torch.broadcast_shapes(a, b))
        except RuntimeError:
            truth = "error"
        try:
            real = tuple((torch.zeros(a) + torch.zeros(b)).shape)
        except RuntimeError:
            real = "error"
        if truth != real:
            found.append(f"{a} with {b}: broadcast_shapes says {truth}, the addition gives {real}")
        if claimed != truth:
            found.append(f"{a} with {b}: the page says {claimed}, torch gives {truth}")
    return found


def test_every_row_of_the_page_agrees_with_torch():
    rows = read_table(PAGE.read_text(encoding="utf-8"))
    assert len(rows) >= 10
    assert any(r[2] == "error" for r in rows) and any(r[2] != "error" for r in rows)
    assert problems(rows) == []


@pytest.mark.parametrize(
    "row, message",
    [
        (((4, 1), (4,), (4,)), r"the page says \(4,\), torch gives \(4, 4\)"),
        (((4, 3), (4,), (4, 3)), r"the page says \(4, 3\), torch gives error"),
        (((4, 3), (3,), "error"), r"the page says error, torch gives \(4, 3\)"),
    ],
)
def test_the_checker_rejects_a_wrong_row(row, message):
    found = problems([row])
    assert len(found) == 1 and re.search(message, found[0])


def test_the_reader_parses_cells_as_the_page_writes_them():
    text = "\n".join([
        "intro", MARKER,
        "| a | b | a + b |", "|---|---|---|",
        "| `(2, 1)` | `()` | `(2, 1)` |",
        "| `(3,)` | `(2,)` | error |",
        "", "| not | part | of it |",
    ])
    assert read_table(text) == [((2, 1), (), (2, 1)), ((3,), (2,), "error")]
    with pytest.raises(ValueError, match="exactly one"):
        read_table("no table here")
