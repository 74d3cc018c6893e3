"""Diagrams checked against code: ``graph_of("L")`` and ``diagram_from("expr")``."""

from __future__ import annotations

import re

from . import HarnessError
from .page import Block
from .run import SEEDS, chain_of, run_chain


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
    """Probes for PageRuns: {id of the block above a checked diagram: fn(namespace)}, and the
    record they fill, {diagram id: (want, what) or HarnessError}. The diagram is then checked
    against the first seed's run of its chain, which runs once for the whole page."""
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
        if above.mark("skip") is not None:
            continue  # never run in the page's chains: check_diagram runs it

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


def check_diagram(blocks: list[Block], diagram: Block, runs=None, record=None) -> None:
    """A mermaid fence marked graph_of / diagram_from must equal what code generates now.
    With ``runs`` (a PageRuns holding diagram_probes) and its ``record``, the namespace is read
    during the page's own first-seed run; otherwise the chain runs here."""
    name = "graph_of" if diagram.mark("graph_of") is not None else "diagram_from"
    mark = diagram.mark(name)
    if not mark.args:
        raise HarnessError(f'{diagram.where}: write {name}("...")')
    above = _above(blocks, diagram, name)
    if runs is not None and record is not None and id(above) in runs.probes:
        outcome = runs.outcome(above, SEEDS[0])
        if outcome.error:
            raise HarnessError(outcome.error)
        found = record.get(id(diagram))
        if isinstance(found, HarnessError):
            raise found
        want, what = found
    else:
        namespace, _ = run_chain(chain_of(blocks, above), SEEDS[0])
        want, what = _expected(diagram, name, namespace, above)
    # accTitle/accDescr (the diagram's accessible title and description) are written by hand
    # and are not part of what the code generates; every other line must match.
    if _without_acc(diagram.code) != _without_acc(want):
        raise HarnessError(
            f"{diagram.where}: the diagram is not {what}.\n"
            f"The code gives:\n{want}\n\nthe page shows:\n{diagram.code}"
        )
