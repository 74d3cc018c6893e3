"""Hand-trace tables: every number recomputed with torch (float64)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from . import HarnessError, markers, rel


NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
PARTIAL = re.compile(r"∂(\w+)\s*/\s*∂(\w+)")
LEAF_WORDS = {"input", "parameter", "leaf"}


@dataclass
class Table:
    path: Path
    lineno: int
    kind: str  # forward | backward
    rows: list  # list of list[str], header removed

    @property
    def where(self):
        return f"{rel(self.path)}:{self.lineno}"


def marked_tables(text: str, comment: str) -> list:
    """Every Markdown table of ``text`` after a line ``<!-- comment -->``, as the page model reads
    it (bookcheck.model.Table: ``lineno`` of its marker, ``header``, ``rows``); a marker not
    followed by a table with a header, a separator and a row is a HarnessError."""
    from .model import Page

    page = Page.from_text(text, "page.md")
    tables = page.tables_of(comment)
    errors = [e for e in page.errors if f"<!-- {comment} -->" in e]
    if errors:
        raise HarnessError("line " + errors[0].removeprefix("page.md:"))
    return tables


def _table(path, t) -> Table:
    return Table(Path(path), t.lineno + 1, t.kind.split(": ")[1], [[_cell(c) for c in row] for row in t.rows])


def parse_tables(path) -> list[Table]:
    """The hand-trace tables of a page (a path, or its bookcheck.model.Page)."""
    from .model import Page

    page = path if isinstance(path, Page) else Page.parse(path)
    errors = [e for e in page.errors if "hand-trace" in e]
    if errors:
        raise HarnessError(errors[0])
    return [_table(page.path, t) for t in page.tables if t.kind.startswith("hand-trace: ")]


def _cell(text):
    return text.replace("`", "").strip()


def _last_number(cell, where, what):
    found = NUMBER.findall(cell)
    if not found:
        raise HarnessError(f"{where}: no number in the {what} cell {cell!r}")
    return float(found[-1].replace("−", "-"))


def _close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def forward_namespace(table: Table) -> tuple[dict, str, dict]:
    """Recompute a forward table with torch (float64).

    Returns the tensors by name, the loss's name (the last row) and each computed row's
    expression by name.
    """
    import torch

    ns, exprs = {}, {}
    for row in table.rows:
        if len(row) < 3:
            raise HarnessError(f"{table.where}: a forward row needs | name | computed as | value |: {row}")
        name, how, value = row[0], row[1], _last_number(row[2], table.where, "value")
        if how.lower() in LEAF_WORDS:
            ns[name] = torch.tensor(value, dtype=torch.float64, requires_grad=True)
            continue
        try:
            ns[name] = eval(how, {"torch": torch}, dict(ns))  # noqa: S307 - a page's own formula
        except Exception as exc:  # noqa: BLE001
            raise HarnessError(f"{table.where}: row {name}: cannot compute {how!r}: {exc}") from None
        exprs[name] = how
        if not _close(ns[name].item(), value):
            raise HarnessError(
                f"{table.where}: row {name} = {how}: the table says {value:g}, torch computes {ns[name].item():g}"
            )
    return ns, table.rows[-1][0], exprs


def local_derivative(ns: dict, exprs: dict, consumer: str, node: str) -> float:
    """d consumer / d node through the consumer's own operation only, every other input
    held fixed: the *local* derivative of one edge, not the total derivative."""
    import torch

    inputs = {k: v.detach() for k, v in ns.items()}
    inputs[node] = ns[node].detach().clone().requires_grad_(True)
    out = eval(exprs[consumer], {"torch": torch}, inputs)  # noqa: S307 - a page's own formula
    (grad,) = torch.autograd.grad(out, inputs[node], allow_unused=True)
    return 0.0 if grad is None else grad.item()


def check_backward(forward: Table, table: Table) -> None:
    """Check every number of a backward table against torch.

    One row per edge of the graph: ``| node | ∂consumer/∂node = ... = local | upstream | gradient |``.
    Each row: local derivative (the consumer's own operation), upstream (the total
    ∂loss/∂consumer) and local x upstream = the row's gradient. A node used once has one row,
    whose gradient is ∂loss/∂node; a node used k times (a fork) has k rows whose gradients
    add up to ∂loss/∂node. The loss's own row says 1.
    """
    from snippets.hand_trace import gradients

    ns, loss_name, exprs = forward_namespace(forward)
    grads = gradients(ns[loss_name], **ns)
    totals = {}
    for row in table.rows:
        if len(row) < 4:
            raise HarnessError(f"{table.where}: a backward row needs | node | local | upstream | gradient |: {row}")
        node, local_cell, up_cell, grad_cell = row[:4]
        if node not in ns:
            raise HarnessError(f"{table.where}: {node!r} is not a row of the forward table at {forward.where}")
        grad = _last_number(grad_cell, table.where, "gradient")
        totals[node] = totals.get(node, 0.0) + grad
        if node == loss_name:
            continue
        partial = PARTIAL.search(local_cell)
        if not partial or partial.group(2) != node or partial.group(1) not in exprs:
            raise HarnessError(
                f"{table.where}: row {node}: the local derivative must name its consumer, as ∂consumer/∂{node} = ..."
            )
        consumer = partial.group(1)
        local = _last_number(local_cell, table.where, "local derivative")
        upstream = _last_number(up_cell, table.where, "upstream")
        checks = [
            (f"∂{consumer}/∂{node} (local)", local, local_derivative(ns, exprs, consumer, node)),
            (f"upstream ∂{loss_name}/∂{consumer}", upstream, grads[consumer].item()),
            (f"local x upstream for {node} via {consumer}", local * upstream, grad),
        ]
        for what, page, truth in checks:
            if not _close(page, truth):
                raise HarnessError(f"{table.where}: {what}: the table says {page:g}, but it is {truth:g}")
    for node, total in totals.items():
        if not _close(total, grads[node].item()):
            rows = "the sum of its rows" if [r[0] for r in table.rows].count(node) > 1 else "the table"
            raise HarnessError(
                f"{table.where}: ∂{loss_name}/∂{node}: {rows} says {total:g}, torch computes {grads[node].item():g}"
            )


def table_checks(path):
    """(table, callable) for every hand-trace table of a page."""
    checks, forward = [], None
    for t in parse_tables(path):
        if t.kind == "forward":
            forward = t
            checks.append((t, functools.partial(forward_namespace, t)))
        else:
            if forward is None:
                raise HarnessError(f"{t.where}: a backward table needs a forward table above it")
            checks.append((t, functools.partial(check_backward, forward, t)))
    return checks


def check_forward(context, table):
    """The registry's entry for a ``<!-- hand-trace: forward -->`` table (bookcheck.markers)."""
    from .markers import PageCheck

    t = _table(context.page.path, table)
    return PageCheck(f"line {t.lineno} forward table", functools.partial(forward_namespace, t), line=t.lineno)


def check_backward_table(context, table):
    """The registry's entry for a ``<!-- hand-trace: backward -->`` table: checked against the
    forward table above it."""
    from .markers import PageCheck

    t = _table(context.page.path, table)
    above = [f for f in context.page.tables_of("hand-trace: forward") if f.marker < table.marker]
    if not above:
        def run():
            raise HarnessError(f"{t.where}: a backward table needs a forward table above it")
    else:
        run = functools.partial(check_backward, _table(context.page.path, above[-1]), t)
    return PageCheck(f"line {t.lineno} backward table", run, line=t.lineno)
