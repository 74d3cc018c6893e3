"""The op table of docs/part1/chain-rule.md, checked row by row against torch.

The table follows an ``<!-- op-table -->`` comment. Its machine-readable columns are
backticked Python:

* Forward: an expression of the named inputs, e.g. ``a @ b``;
* VJP: one ``dname = expression`` per input, an expression of the inputs and of ``g``,
  the upstream gradient (the gradient of the loss with respect to the op's output);
* Shapes: ``a (3, 4), b (4, 2) → (3, 2)``: the input shapes drawn for the test and the
  output shape the page claims, optionally followed by ``, a > 0`` (draw positive values).

For each row the test draws float64 inputs and a random ``g`` of the output's shape, and
compares every ``dname`` with ``torch.autograd.grad(out, inputs, g)``; then it does it again
with one entry of every input set to exactly 0 (where the forward is finite there), which is
where kinks such as relu's live. The page check (bookcheck.table_kinds.op_table, dispatched from the registry)
checks every row of the page; these tests feed the checker altered copies of the table and
assert each alteration is rejected.
"""

import re
from pathlib import Path

import pytest
import torch


PAGE = Path(__file__).resolve().parent.parent / "docs" / "part1" / "chain-rule.md"
from bookcheck.table_kinds import COLUMNS, OPS, check_row, parse_op_table, read_row  # noqa: E402

def page_rows():
    return parse_op_table(PAGE.read_text(encoding="utf-8"))


def test_the_table_covers_the_ten_ops_once_each():
    ops = [read_row(r)[0] for r in page_rows()]
    assert sorted(ops) == sorted(OPS)


MUTATIONS = [  # (op, text in its row, replacement, what the rejection must say)
    ("matmul", "`db = a.T @ g`", "`db = g.T @ a`", r"has shape \(2, 4\)"),  # transpose on the wrong side
    ("matmul", "`da = g @ b.T`", "`da = g @ b`", "fails"),  # transpose forgotten
    ("mul", "`da = g * b`", "`da = g * a`", "differs"),  # mul's inputs not swapped
    ("relu", "(a > 0)", "(a >= 0)", r"differs .*\(inputs with an exact 0\)"),  # relu'(0) = 1
    ("tanh", "(1 - torch.tanh(a) ** 2)", "(1 - torch.tanh(a))", "differs"),
    ("pow", "3 * a ** 2", "3 * a ** 3", "differs"),
    ("sum", "`da = g.expand(a.shape)`", "`da = g`", r"has shape \(\)"),  # not broadcast back
    ("mean", " / a.numel()", "", "differs"),  # the 1/n forgotten
    ("log", "`da = g / a`", "`da = g * a`", "differs"),
    ("matmul", "→ (3, 2)", "→ (2, 3)", r"the page says the output has shape \(2, 3\)"),
]


@pytest.mark.parametrize("op, old, new, why", MUTATIONS, ids=[f"{m[0]}:{m[2]}" for m in MUTATIONS])
def test_an_altered_row_is_rejected(op, old, new, why):
    text = PAGE.read_text(encoding="utf-8")
    rows = parse_op_table(text)
    target = [r for r in rows if read_row(r)[0] == op]
    assert len(target) == 1
    row = dict(target[0])
    cells = [k for k in COLUMNS if old in row[k]]
    assert cells, f"the mutation {old!r} no longer occurs in the {op} row; update MUTATIONS"
    row[cells[0]] = row[cells[0]].replace(old, new)
    with pytest.raises(AssertionError, match=f"^{op}: .*{why}"):
        for seed in (0, 1, 2):
            check_row(row, seed)


def test_parser_rejects_a_page_without_the_table():
    with pytest.raises(AssertionError, match="one <!-- op-table --> marker"):
        parse_op_table("# no table here\n")
    with pytest.raises(AssertionError, match="header starts with 'vjp'"):
        parse_op_table("<!-- op-table -->\n| Op | Forward | Shapes |\n|---|---|---|\n| `add` | `a + b` | `a (1,) → (1,)` |\n")
