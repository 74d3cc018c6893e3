"""Check a forward-mode trace table: the value and the tangent of every node, recomputed.

A trace table follows an ``<!-- forward-trace -->`` comment on a page and has four columns:

| Node | Computed as | Value | Tangent |

A row whose "Computed as" cell is ``input`` gives a leaf: its value and the tangent seeded
into it (the direction of the derivative). Any other row gives a backticked Python expression
of earlier nodes, e.g. ``torch.exp(z)``. ``trace_rows(header, rows)`` takes the table's header
and rows as lists of cell texts (as a Markdown table reader gives them); ``check_trace(rows)``
evaluates its rows in order on dual tensors (``torch.autograd.forward_ad``, float64) and
raises ``AssertionError`` naming the node and the column if a shown number is not the true one
rounded to the digits shown.
"""

import math
import re

import torch

from snippets.jvp_rules import fwAD  # noqa: E402 - forward_ad, loaded without torch 2.13's warning


NAME = re.compile(r"^`?([A-Za-z_]\w*)`?$")
HEADER = ("Node", "Computed as", "Value", "Tangent")
COLUMNS = ("node", "computed", "value", "tangent")


def trace_rows(header, rows):
    """One trace table as check_trace takes it (a list of row dicts), from its header and body
    rows: lists of the cells' text, the separator row left out."""
    if not isinstance(rows, (list, tuple)):
        raise TypeError(f"rows must be a list of rows, each a list of the cells' text; got {type(rows).__name__}")
    if not all(isinstance(r, (list, tuple)) and all(isinstance(c, str) for c in r) for r in [header, *rows]):
        raise TypeError("header and each row must be a list of the cells' text (str), e.g. "
                        "['Node', 'Computed as', 'Value', 'Tangent'] and ['`x`', 'input', '2', '1']")
    if [h.strip().lower() for h in header] != [h.lower() for h in HEADER]:
        raise AssertionError(f"a trace table has the columns {' | '.join(HEADER)}, not {' | '.join(header)}")
    for n, row in enumerate(rows, 1):
        if len(row) != len(HEADER):
            raise AssertionError(f"row {n} has {len(row)} cells, not {len(HEADER)}: {' | '.join(row)}")
    return [dict(zip(COLUMNS, row)) for row in rows]


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
        hint = "; for rows of cells, pass trace_rows(header, rows)" \
            if isinstance(rows, list) and rows and isinstance(rows[0], (list, tuple)) else ""
        raise TypeError(f"rows must be one table, a list of row dicts as trace_rows gives{hint}; "
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
            if env[node].is_complex():
                raise AssertionError(f"{node}: a trace node must be real, got {env[node].item()}")
            primal, tangent = fwAD.unpack_dual(env[node])
            value = primal.item()
            tangent = 0.0 if tangent is None else tangent.item()
            _agrees(value, row["value"], node, "value")
            _agrees(tangent, row["tangent"], node, "tangent")
            result[node] = (value, tangent)
    return result
