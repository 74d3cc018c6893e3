"""The checks of the book's reference tables, each a page check of the registry
(bookcheck.markers.TABLE_MARKERS): the dispatcher calls ``op_table``, ``compat_table``,
``broadcast_table`` and ``forward_trace`` with the page's context and the table node of the page
model. The readers below take a page's text too (the tests alter copies of it).

- ``<!-- op-table -->`` (docs/part1/chain-rule.md): each op's VJP against torch.autograd.grad, on
  random float64 inputs and on inputs with an exact 0 (where kinks live), under three seeds.
- ``<!-- compat-table -->`` (docs/part6/function-api.md): each cell recomputed with
  snippets.function_api.compatibility on the Function of its row.
- ``<!-- broadcast-table -->`` (docs/part2/broadcasting.md): each shape pair with
  torch.broadcast_shapes and with real tensors; "error" rows must raise.
- ``<!-- forward-trace -->`` (docs/part6/forward-mode.md): every value and tangent on dual
  tensors (snippets.forward_trace.check_trace).
"""

from __future__ import annotations

import ast
import re

from . import HarnessError

SEEDS = (0, 1, 2)


def _tables(text, comment):
    from .tables import marked_tables

    return marked_tables(text, comment)


def _page_check(context, table, run):
    from .markers import PageCheck

    where = context.page.where(table.marker)

    def check():
        try:
            run()
        except HarnessError:
            raise
        except AssertionError as exc:
            raise HarnessError(f"{where}: {exc}") from None

    return PageCheck(f"line {table.lineno + 1} {table.kind}", check, line=table.lineno + 1)


# -- <!-- op-table --> ------------------------------------------------------------------------

OPS = {"add", "mul", "pow", "exp", "log", "relu", "tanh", "matmul", "sum", "mean"}
COLUMNS = ("op", "forward", "vjp", "shapes")

SHAPE = re.compile(r"(\w+)\s*(\([\d,\s]*\))")
VJP = re.compile(r"^d(\w+)\s*=\s*(.+)$")


def _code(cell):
    """The backticked segments of a table cell."""
    return re.findall(r"`([^`]+)`", cell)


def parse_op_table(text):
    """Rows of the table after ``<!-- op-table -->``, as dicts keyed by COLUMNS (raw cells)."""
    tables = _tables(text, "op-table")
    if len(tables) != 1:
        raise AssertionError(f"expected one <!-- op-table --> marker, found {len(tables)}")
    return _op_rows([tables[0].header, None, *tables[0].rows])


def _op_rows(body):
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
    import torch

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



def op_table(context, table):
    body = [table.header, None, *table.rows]

    def run():
        rows = _op_rows(body)
        ops = sorted(read_row(r)[0] for r in rows)
        if ops != sorted(OPS):
            raise AssertionError(f"the table must cover the ops {sorted(OPS)} once each, it has {ops}")
        for row in rows:
            for seed in SEEDS:
                check_row(row, seed)

    return _page_check(context, table, run)


# -- <!-- compat-table --> --------------------------------------------------------------------

def _x():
    import torch

    return torch.randn(2, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))


def _cases():
    """{name of a Function of snippets/: () -> (apply, inputs, prepare)}, what the compatibility
    of each row of the table is computed on."""
    import torch

    from snippets.contract import StableSoftplus
    from snippets.custom_function import ScaledPow, Square
    from snippets.custom_losses import SoftmaxCrossEntropy, StableLogSumExp, StoredSoftmaxCrossEntropy
    from snippets.function_api import Cube, ScaleInPlace, SortWithIndices, SquareAndCube

    return {  # name: (apply, inputs, prepare)
    "Square": lambda: (Square.apply, (_x(),), None),
    "ScaledPow": lambda: (ScaledPow.apply, (_x(), torch.tensor(1.5, dtype=torch.float64), 3), None),
    "StableSoftplus": lambda: (StableSoftplus.apply, (_x(),), None),
    "StableLogSumExp": lambda: (StableLogSumExp.apply, (_x(),), None),
    "SoftmaxCrossEntropy": lambda: (SoftmaxCrossEntropy.apply, (_x(), torch.tensor([0, 2])), None),
    "StoredSoftmaxCrossEntropy": lambda: (StoredSoftmaxCrossEntropy.apply, (_x(), torch.tensor([0, 2])), None),
    "Cube": lambda: (Cube.apply, (_x(),), None),
    "ScaleInPlace": lambda: (ScaleInPlace.apply, (_x(), 2.0), lambda t: t.clone()),
    "SortWithIndices": lambda: (SortWithIndices.apply, (_x(),), None),
    "SquareAndCube": lambda: (SquareAndCube.apply, (_x(),), None),
    }


def parse_compat_table(text):
    tables = _tables(text, "compat-table")
    if len(tables) != 1:
        raise AssertionError(f"expected one <!-- compat-table --> marker, found {len(tables)}")
    return _compat_rows([tables[0].header, None, *tables[0].rows])


def _compat_rows(body):
    from snippets.function_api import COLUMNS as COMPAT

    header = [h.lower() for h in body[0]]
    if header[2:] != list(COMPAT):
        raise AssertionError(f"the table's columns must be Function, Defined in, {', '.join(COMPAT)}: {body[0]}")
    return {row[0].strip("`"): dict(zip(("defined in",) + COMPAT, [c.strip("`") for c in row[1:]])) for row in body[2:]}



def compat_table(context, table):
    from snippets.function_api import COLUMNS as COMPAT, compatibility

    def run():
        rows = _compat_rows([table.header, None, *table.rows])
        cases = _cases()
        unknown = sorted(set(rows) - set(cases))
        if unknown:
            raise AssertionError(f"rows {unknown} name no Function that bookcheck.table_kinds._cases knows")
        for name, row in rows.items():
            fn, inputs, prepare = cases[name]()
            got = compatibility(fn, inputs, prepare)
            want = {c: row[c] for c in COMPAT}
            if got != want:
                raise AssertionError(f"{name}: the table says {want}, the Function does {got}")

    return _page_check(context, table, run)


# -- <!-- broadcast-table --> -----------------------------------------------------------------

def read_table(text):
    """Rows (a_shape, b_shape, result) of the table right after MARKER; result is a tuple or "error"."""
    tables = _tables(text, "broadcast-table")
    if len(tables) != 1:
        raise ValueError(f"expected exactly one <!-- broadcast-table --> line, found {len(tables)}")
    return _broadcast_rows(tables[0].rows)


def _broadcast_rows(table_rows):
    rows = []
    for cells in table_rows:
        cells = [c.strip("`").strip() for c in cells]
        if len(cells) != 3:
            raise ValueError(f"a row needs three cells: {cells!r}")
        a, b = (tuple(ast.literal_eval(c)) for c in cells[:2])
        result = "error" if cells[2] == "error" else tuple(ast.literal_eval(cells[2]))
        rows.append((a, b, result))
    return rows


def problems(rows):
    """What torch disagrees with, one message per wrong row (empty: every row is right)."""
    import torch

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



def broadcast_table(context, table):
    def run():
        found = problems(_broadcast_rows(table.rows))
        if found:
            raise AssertionError("\n".join(found))

    return _page_check(context, table, run)


# -- <!-- forward-trace --> -------------------------------------------------------------------

def forward_trace(context, table):
    def run():
        from snippets.forward_trace import check_trace, trace_rows

        check_trace(trace_rows(table.header, table.rows))  # the page model's cells: snippets reads no Markdown

    return _page_check(context, table, run)
