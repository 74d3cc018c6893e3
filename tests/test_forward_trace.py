"""The forward-mode trace tables of docs/part6/forward-mode.md, recomputed with torch.

Each table after an ``<!-- forward-trace -->`` marker is read by the page model
(bookcheck.model.Page.tables) and every value and tangent is recomputed on dual tensors by
``snippets.forward_trace.check_trace``. The altered copies below must each be rejected, naming
the node and the column.
"""

from pathlib import Path

import pytest
import torch

from bookcheck.model import Page
from snippets.forward_trace import check_trace, trace_rows

PAGE = Path(__file__).resolve().parent.parent / "docs" / "part6" / "forward-mode.md"


def page_tables():
    return [trace_rows(t.header, t.rows) for t in Page.parse(PAGE).tables_of("forward-trace")]


def test_the_page_has_two_traces():
    assert len(page_tables()) == 2


@pytest.mark.parametrize("index", [0, 1])
def test_each_trace_matches_forward_mode(index):
    check_trace(page_tables()[index])


def test_the_first_trace_ends_at_the_reverse_mode_gradient():
    # the tangent of L with dx = 1 is dL/dx, which reverse mode computes independently
    result = check_trace(page_tables()[0])
    x = torch.tensor(2.0, requires_grad=True)
    ((3.0 * x + 1.0) ** 2).backward()
    assert result["L"][1] == x.grad.item() == 42.0


MUTATIONS = [  # (table, node, column, new cell, what the rejection says)
    (0, "z", "tangent", "6", "z: the tangent shown is 6"),       # w dx + x dw with the seeds swapped
    (0, "L", "tangent", "14", "L: the tangent shown is 14"),     # 2 dy instead of 2 y dy
    (0, "y", "value", "6", "y: the value shown is 6"),
    (1, "e", "tangent", "-0.1353", "e: the tangent shown is -0.1353"),
    (1, "L", "tangent", "-0.2707", "L: the tangent shown is -0.2707"),  # product rule half-applied
    (1, "L", "value", "-0.2706", "L: the value shown is -0.2706"),  # rounded the wrong way
    (1, "e", "computed", "`torch.exp(q)`", "e: cannot evaluate"),
]


@pytest.mark.parametrize("index, node, column, cell, why", MUTATIONS)
def test_an_altered_row_is_rejected(index, node, column, cell, why):
    rows = [dict(r) for r in page_tables()[index]]
    target = [r for r in rows if r["node"].strip("` ") == node]
    assert len(target) == 1, f"node {node} is no longer in table {index}; update MUTATIONS"
    target[0][column] = cell
    with pytest.raises(AssertionError, match=why):
        check_trace(rows)


def test_nan_and_junk_cells_are_rejected():
    rows = [dict(r) for r in page_tables()[0]]
    rows[-1]["tangent"] = "nan"
    with pytest.raises(AssertionError, match="not a plain decimal number"):
        check_trace(rows)
    with pytest.raises(AssertionError, match="no rows"):
        check_trace([])


def test_a_table_without_the_trace_columns_is_rejected():
    with pytest.raises(AssertionError, match=r"the columns Node \| Computed as \| Value \| Tangent, not Name \| Value"):
        trace_rows(["Name", "Value"], [["`x`", "1"]])
    with pytest.raises(AssertionError, match="row 1 has 3 cells, not 4"):
        trace_rows(["Node", "Computed as", "Value", "Tangent"], [["`x`", "input", "1"]])
    with pytest.raises(TypeError, match="cells' text"):
        trace_rows(["Node", "Computed as", "Value", "Tangent"], [["`x`", "input", 1.0, 1.0]])
    with pytest.raises(TypeError, match="rows must be a list of rows"):
        trace_rows(["Node", "Computed as", "Value", "Tangent"], "| `x` | input | 1 | 1 |")


def test_the_page_check_reads_the_models_cells_and_rejects_an_altered_table():
    """The harness's check of a page's trace table (bookcheck.table_kinds.forward_trace) takes
    the page model's cells: a page whose first trace shows a wrong tangent of z fails it."""
    from bookcheck import HarnessError, table_kinds
    from bookcheck.check import PageContext

    text = PAGE.read_text(encoding="utf-8")
    page = Page.from_text(text, PAGE)
    table = page.tables_of("forward-trace")[0]
    [z] = [i for i in range(table.start + 2, table.end + 1) if page.lines[i].startswith("| `z`")]
    cells = page.lines[z].split("|")  # ['', ' `z` ', ' computed ', ' value ', ' tangent ', '']
    altered = list(page.lines)
    altered[z] = "|".join(cells[:4] + [" 6 ", ""])
    for lines, fails in ((page.lines, False), (altered, True)):
        model = Page.from_text("\n".join(lines) + "\n", PAGE)
        check = table_kinds.forward_trace(PageContext(model), model.tables_of("forward-trace")[0])
        if not fails:
            check.run()
            continue
        with pytest.raises(HarnessError, match="z: the tangent shown is 6"):
            check.run()
