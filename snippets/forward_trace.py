"""Check a forward-mode trace table: the value and the tangent of every node, recomputed.

A trace table follows an ``<!-- forward-trace -->`` comment on a page and has four columns:

| Node | Computed as | Value | Tangent |

A row whose "Computed as" cell is ``input`` gives a leaf: its value and the tangent seeded
into it (the direction of the derivative). Any other row gives a backticked Python expression
of earlier nodes, e.g. ``torch.exp(z)``. ``check_trace(rows)`` evaluates the rows in order on
dual tensors (``torch.autograd.forward_ad``, float64) and raises ``AssertionError`` naming the
node and the column if a shown number is not the true one rounded to the digits shown.
"""

import math
import re

import torch

from snippets.jvp_rules import fwAD  # noqa: E402 - forward_ad, loaded without torch 2.13's warning


MARKER = re.compile(r"\s*<!--\s*forward-trace\s*-->")
NAME = re.compile(r"^`?([A-Za-z_]\w*)`?$")
COLUMNS = ("node", "computed", "value", "tangent")


def parse_traces(text):
    """Every table after a ``<!-- forward-trace -->`` marker: a list of lists of row dicts."""
    if not isinstance(text, str):
        raise TypeError(f"text must be the page's Markdown as a str, got {type(text).__name__}")
    lines = text.splitlines()
    tables = []
    for i, line in enumerate(lines):
        if not MARKER.match(line):
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        body = []
        while j < len(lines) and lines[j].strip().startswith("|"):
            body.append([c.strip() for c in lines[j].strip().strip("|").split("|")])
            j += 1
        if len(body) < 3 or [h.lower() for h in body[0]] != ["node", "computed as", "value", "tangent"]:
            raise AssertionError(
                f"line {i + 1}: a forward-trace marker must be followed by a table with the columns "
                "Node | Computed as | Value | Tangent"
            )
        tables.append([dict(zip(COLUMNS, row)) for row in body[2:]])
    return tables


def _shown(cell, node, column):
    """The number a cell shows, and half a unit of its last digit (the rounding allowed)."""
    text = cell.strip().replace("−", "-")
    if not re.fullmatch(r"-?\d+(\.\d+)?", text):
        raise AssertionError(f"{node}: the {column} cell {cell!r} is not a plain decimal number")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return float(text), 0.5 * 10.0 ** -decimals


def _agrees(true, cell, node, column):
    shown, half_unit = _shown(cell, node, column)
    err = abs(true - shown)
    if not (math.isfinite(true) and err <= half_unit + 1e-12):
        raise AssertionError(f"{node}: the {column} shown is {cell}, but forward mode gives {true:.6g}")


def check_trace(rows):
    """Recompute every row of one trace table (a list of row dicts); return {node: (value, tangent)}."""
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        hint = "; parse_traces(text) returns a list of tables: pass one, e.g. [0]" \
            if isinstance(rows, list) and rows and isinstance(rows[0], list) else ""
        raise TypeError(f"rows must be one table, a list of row dicts as parse_traces gives{hint}; "
                        f"got {type(rows).__name__}")
    if not rows:
        raise AssertionError("the trace table has no rows")
    for row in rows:
        if sorted(row) != sorted(COLUMNS) or not all(isinstance(c, str) for c in row.values()):
            raise TypeError(f"each row must map {COLUMNS} to the cells' text (str), got {row!r}")
    env = {}
    result = {}
    with fwAD.dual_level():
        for row in rows:
            m = NAME.match(row["node"].strip())
            if not m:
                raise AssertionError(f"{row['node']!r}: a Node cell must be one name, e.g. `z`")
            node = m.group(1)
            computed = row["computed"].strip()
            if computed == "input":
                value, _ = _shown(row["value"], node, "value")
                tangent, _ = _shown(row["tangent"], node, "tangent")
                env[node] = fwAD.make_dual(torch.tensor(value, dtype=torch.float64),
                                           torch.tensor(tangent, dtype=torch.float64))
            else:
                code = re.findall(r"`([^`]+)`", computed)
                if len(code) != 1:
                    raise AssertionError(f"{node}: 'Computed as' must be `input` or one `expression`")
                try:
                    env[node] = eval(code[0], {"torch": torch}, dict(env))  # noqa: S307 - the page's own formula
                except Exception as exc:  # noqa: BLE001 - a wrong formula usually names an unknown node
                    raise AssertionError(f"{node}: cannot evaluate {code[0]!r}: {exc}") from None
            if not isinstance(env[node], torch.Tensor) or env[node].numel() != 1:
                raise AssertionError(f"{node}: a trace node must be one number, got {env[node]!r}")
            primal, tangent = fwAD.unpack_dual(env[node])
            value = primal.item()
            tangent = 0.0 if tangent is None else tangent.item()
            _agrees(value, row["value"], node, "value")
            _agrees(tangent, row["tangent"], node, "tangent")
            result[node] = (value, tangent)
    return result
