"""Diagrams checked against code: ``graph_of("L")`` and ``diagram_from("expr")``."""

from __future__ import annotations

import re

from . import HarnessError
from .page import Block
from .run import SEEDS, PageRuns


ACC_LINE = re.compile(r"^\s*acc(?:Title|Descr)\s*:.*$\n?", re.M)


def _without_acc(code: str) -> str:
    return ACC_LINE.sub("", code).strip()


def _above(blocks: list[Block], diagram: Block, name: str) -> Block:
    above = [b for b in blocks if b.syntax == "python" and b.lineno < diagram.lineno]
    if not above:
        raise HarnessError(f"{diagram.where}: {name} needs a python block above the diagram")
    return above[-1]


def _expected(diagram: Block, name: str, namespace: dict, above: Block) -> tuple[str, str]:
    """(what the code generates, what it is) from the namespace right after ``above``."""
    from snippets.autograd_graph import to_mermaid
    import torch

    mark = diagram.mark(name)
    if name == "graph_of":
        tensor = mark.args[0]
        if tensor not in namespace:
            raise HarnessError(f"{diagram.where}: the block at {above.where} defines no {tensor!r}")
        leaves = {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor) and v.is_leaf}
        direction = diagram.code.split()[1] if len(diagram.code.split()) > 1 else "LR"
        return to_mermaid(namespace[tensor], leaves, direction=direction), f"the graph autograd recorded for {tensor!r}"
    try:
        want = str(eval(mark.args[0], namespace))  # noqa: S307 - the page's own expression
    except Exception as exc:  # noqa: BLE001
        raise HarnessError(f"{diagram.where}: diagram_from({mark.args[0]!r}) failed: {exc}") from None
    return want, f"what {mark.args[0]} generates"


def diagram_probes(blocks: list[Block]) -> tuple[dict, dict]:
    """Probes for a chain's first-seed run (bookcheck.worker): {id of the block above a checked
    diagram: fn(namespace)}, and the record they fill, {diagram id: (want, what) or
    HarnessError}. The diagram is then checked against that run, which also checks the blocks."""
    record: dict = {}
    probes: dict = {}
    for d in blocks:
        if d.kind != "checked diagram":
            continue
        name = "graph_of" if d.mark("graph_of") is not None else "diagram_from"
        try:
            above = _above(blocks, d, name)
        except HarnessError:
            continue  # reported by check_diagram

        def probe(namespace, d=d, name=name, above=above, previous=probes.get(id(above))):
            if previous is not None:
                previous(namespace)
            try:
                record[id(d)] = _expected(d, name, namespace, above)
            except HarnessError as exc:
                record[id(d)] = exc
            except Exception as exc:  # noqa: BLE001 - reported by the diagram's check, not the chain's
                record[id(d)] = HarnessError(f"{d.where}: generating the diagram failed: {type(exc).__name__}: {exc}")

        probes[id(above)] = probe
    return probes, record


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
    from .check import PageCheck

    if block.kind != "checked diagram":
        return None
    return PageCheck(f"line {block.lineno} diagram", lambda: check_diagram(context.blocks, block, context.runs),
                     line=block.lineno)
