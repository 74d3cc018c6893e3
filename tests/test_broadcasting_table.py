"""The table of shape pairs on docs/part2/broadcasting.md, read from the page and checked row
by row with torch.broadcast_shapes and with real tensors; "error" rows must raise."""

import ast
import re
from pathlib import Path

import pytest
import torch

from bookcheck.table_kinds import problems, read_table

PAGE = Path(__file__).resolve().parent.parent / "docs" / "part2" / "broadcasting.md"
MARKER = "<!-- broadcast-table -->"


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
