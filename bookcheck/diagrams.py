"""Diagrams checked against code: ``graph_of("L")`` and ``diagram_from("expr")``."""

from __future__ import annotations

import re

from . import HarnessError
from .model import Block
from .run import SEEDS, PageRuns, above_diagram as _above


ACC_LINE = re.compile(r"^\s*acc(?:Title|Descr)\s*:.*$\n?", re.M)


def _without_acc(code: str) -> str:
    return ACC_LINE.sub("", code).strip()


def check_diagram(blocks: list[Block], diagram: Block, runs: PageRuns | None = None) -> None:
    """A mermaid fence marked graph_of / diagram_from must equal what code generates now, read
    from the namespace right after the python block above it, in the first seed's run of that
    block's chain (``runs``: the page's runs, so the chain runs once for the whole page)."""
    name = "graph_of" if diagram.mark("graph_of") is not None else "diagram_from"
    mark = diagram.mark(name)
    if not mark.args:
        raise HarnessError(f'{diagram.where}: write {name}("...")')
    above = _above(blocks, diagram, name)
    runs = runs or PageRuns(blocks)
    outcome = runs.outcome(above, SEEDS[0])
    if outcome.error:
        raise HarnessError(outcome.error)
    found = runs.diagrams.get(runs.index(diagram))
    if found is None:
        raise HarnessError(f"{diagram.where}: the run of {above.where} recorded nothing for this diagram")
    if isinstance(found, str):
        raise HarnessError(found)
    want, what = found
    # accTitle/accDescr (the diagram's accessible title and description) are written by hand
    # and are not part of what the code generates; every other line must match.
    if _without_acc(diagram.code) != _without_acc(want):
        raise HarnessError(
            f"{diagram.where}: the diagram is not {what}.\n"
            f"The code gives:\n{want}\n\nthe page shows:\n{diagram.code}"
        )


def page_check(context, block):
    """The registry's entry for a mermaid fence: checked against code when it is marked
    graph_of or diagram_from (otherwise nothing to check here: None)."""
    from .markers import PageCheck

    if block.kind != "checked diagram":
        return None
    return PageCheck(f"line {block.lineno} diagram", lambda: check_diagram(context.blocks, block, context.runs),
                     line=block.lineno)
