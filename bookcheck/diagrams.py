"""Diagrams checked against code: ``graph_of("L")`` and ``diagram_from("expr")``."""

from __future__ import annotations

import re

from . import HarnessError
from .page import Block
from .run import SEEDS, chain_of, run_chain


ACC_LINE = re.compile(r"^\s*acc(?:Title|Descr)\s*:.*$\n?", re.M)


def _without_acc(code: str) -> str:
    return ACC_LINE.sub("", code).strip()


def check_diagram(blocks: list[Block], diagram: Block) -> None:
    """A mermaid fence marked graph_of / diagram_from must equal what code generates now."""
    from snippets.autograd_graph import to_mermaid
    import torch

    name = "graph_of" if diagram.mark("graph_of") is not None else "diagram_from"
    mark = diagram.mark(name)
    if not mark.args:
        raise HarnessError(f'{diagram.where}: write {name}("...")')
    above = [b for b in blocks if b.syntax == "python" and b.lineno < diagram.lineno]
    if not above:
        raise HarnessError(f"{diagram.where}: {name} needs a python block above the diagram")
    namespace, _ = run_chain(chain_of(blocks, above[-1]), SEEDS[0])
    if name == "graph_of":
        tensor = mark.args[0]
        if tensor not in namespace:
            raise HarnessError(f"{diagram.where}: the block at {above[-1].where} defines no {tensor!r}")
        leaves = {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor) and v.is_leaf}
        direction = diagram.code.split()[1] if len(diagram.code.split()) > 1 else "LR"
        want = to_mermaid(namespace[tensor], leaves, direction=direction)
        what = f"the graph autograd recorded for {tensor!r}"
    else:
        try:
            want = str(eval(mark.args[0], namespace))  # noqa: S307 - the page's own expression
        except Exception as exc:  # noqa: BLE001
            raise HarnessError(f"{diagram.where}: diagram_from({mark.args[0]!r}) failed: {exc}") from None
        what = f"what {mark.args[0]} generates"
    # accTitle/accDescr (the diagram's accessible title and description) are written by hand
    # and are not part of what the code generates; every other line must match.
    if _without_acc(diagram.code) != _without_acc(want):
        raise HarnessError(
            f"{diagram.where}: the diagram is not {what}.\n"
            f"The code gives:\n{want}\n\nthe page shows:\n{diagram.code}"
        )
