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
where kinks such as relu's live. A separate test feeds it altered copies of the table and
asserts each alteration is rejected.
"""

import re
from pathlib import Path

import pytest
import torch

from bookcheck.tables import marked_tables

PAGE = Path(__file__).resolve().parent.parent / "docs" / "part1" / "chain-rule.md"
OPS = {"add", "mul", "pow", "exp", "log", "relu", "tanh", "matmul", "sum", "mean"}
COLUMNS = ("op", "forward", "vjp", "shapes")

SHAPE = re.compile(r"(\w+)\s*(\([\d,\s]*\))")
VJP = re.compile(r"^d(\w+)\s*=\s*(.+)$")


def _code(cell):
    """The backticked segments of a table cell."""
    return re.findall(r"`([^`]+)`", cell)


def parse_op_table(text):
    """Rows of the table after ``<!-- op-table -->``, as dicts keyed by COLUMNS (raw cells)."""
    tables = marked_tables(text, "op-table")
    if len(tables) != 1:
        raise AssertionError(f"expected one <!-- op-table --> marker, found {len(tables)}")
    body = [tables[0].header, None, *tables[0].rows]
    header = [h.lower() for h in body[0]]
    index = {}
    for col in COLUMNS:
        hits = [k for k, h in enumerate(header) if h.startswith(col)]
        if len(hits) != 1:
            raise AssertionError(f"the op table needs one column whose header starts with {col!r}: {body[0]}")
        index[col] = hits[0]
    return [{col: row[index[col]] for col in COLUMNS} for row in body[2:]]


def read_row(row):
    """(op, forward expr, {input: shape}, out shape, positive inputs, {input: vjp expr})."""
    op = (_code(row["op"]) or [row["op"]])[0].strip()
    forward = _code(row["forward"])
    shapes = _code(row["shapes"])
    if len(forward) != 1 or len(shapes) != 1:
        raise AssertionError(f"{op}: Forward and Shapes need exactly one `code` segment each")
    shape_text, _, rest = shapes[0].partition("→")
    inputs = {name: tuple(eval(dims)) for name, dims in SHAPE.findall(shape_text)}  # noqa: S307
    out = re.match(r"\s*(\([\d,\s]*\))(.*)$", rest)
    if not inputs or out is None:
        raise AssertionError(f"{op}: Shapes must read like `a (3, 4), b (4, 2) → (3, 2)`")
    out_shape = tuple(eval(out.group(1)))  # noqa: S307 - the page's own shape
    positive = set(re.findall(r"(\w+)\s*>\s*0", out.group(2)))
    vjps = {}
    for seg in _code(row["vjp"]):
        m = VJP.match(seg.strip())
        if not m:
            raise AssertionError(f"{op}: each VJP segment must read `dname = expression`, got {seg!r}")
        vjps[m.group(1)] = m.group(2)
    if set(vjps) != set(inputs):
        raise AssertionError(f"{op}: VJPs given for {sorted(vjps)}, but the inputs are {sorted(inputs)}")
    return op, forward[0], inputs, out_shape, positive, vjps


def check_row(row, seed=0):
    """Raise AssertionError, naming the op and the input, if the row disagrees with torch."""
    op, forward, inputs, out_shape, positive, vjps = read_row(row)
    gen = torch.Generator().manual_seed(seed)
    values = {}
    for name, shape in inputs.items():
        v = torch.randn(shape, generator=gen, dtype=torch.float64)
        values[name] = v.abs() + 0.1 if name in positive else v
    points = [("random inputs", values)]
    zeros = {}
    for name, v in values.items():
        z = v.clone()
        if name not in positive and z.numel():
            z.view(-1)[0] = 0.0
        zeros[name] = z
    points.append(("inputs with an exact 0", zeros))
    for where, point in points:
        leaves = {k: v.clone().requires_grad_(True) for k, v in point.items()}
        out = eval(forward, {"torch": torch}, dict(leaves))  # noqa: S307 - the page's own formula
        if tuple(out.shape) != out_shape:
            raise AssertionError(f"{op}: the page says the output has shape {out_shape}, torch gives {tuple(out.shape)}")
        if where != "random inputs" and not torch.isfinite(out).all():
            continue  # the forward is not defined at 0 (log): no kink to check there
        g = torch.randn(out.shape, generator=gen, dtype=torch.float64)
        want = torch.autograd.grad(out, list(leaves.values()), g)
        names = {k: v.detach() for k, v in leaves.items()}
        for (name, expected) in zip(leaves, want):
            try:
                got = eval(vjps[name], {"torch": torch}, dict(names, g=g))  # noqa: S307
            except Exception as exc:  # noqa: BLE001 - a wrong VJP often fails on shapes
                raise AssertionError(f"{op}: d{name} = {vjps[name]} fails ({where}): {exc}") from None
            got = torch.as_tensor(got, dtype=torch.float64)
            if got.shape != expected.shape:
                raise AssertionError(
                    f"{op}: d{name} = {vjps[name]} has shape {tuple(got.shape)}; "
                    f"the gradient has the input's shape {tuple(expected.shape)} ({where})"
                )
            if not torch.allclose(got, expected, rtol=1e-10, atol=1e-12):
                raise AssertionError(f"{op}: d{name} = {vjps[name]} differs from torch.autograd.grad ({where})")


def page_rows():
    return parse_op_table(PAGE.read_text(encoding="utf-8"))


def test_the_table_covers_the_ten_ops_once_each():
    ops = [read_row(r)[0] for r in page_rows()]
    assert sorted(ops) == sorted(OPS)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("op", sorted(OPS))
def test_each_row_matches_autograd(op, seed):
    rows = [r for r in page_rows() if read_row(r)[0] == op]
    assert len(rows) == 1, f"the op table needs exactly one row for {op}"
    check_row(rows[0], seed)


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
