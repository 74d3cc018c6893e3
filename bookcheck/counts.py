"""How the fences of pages are verified (the page stamp and the test summary).

Counted from the page model: the blocks' kinds (model.kind_of) and the marker registry for
fences, and for every other node the counter of its entry in the registry of checks
(bookcheck.markers.CHECKS), so the stamp says what the checks do.
"""

from __future__ import annotations

from pathlib import Path

from . import markers
from .model import Page

FENCE_COUNTERS = ("run", "shell commands", "verified outputs", "outputs of another torch", "expected errors", "expected warnings",
                  "diagrams", "diagrams checked against code", "skipped")
COUNTERS = FENCE_COUNTERS + tuple(dict.fromkeys(
    c.counter for c in markers.CHECKS if c.counter and c.counter not in FENCE_COUNTERS))


def text_counts(text: str, path: Path) -> tuple[dict, list[str]]:
    """Counts and skip reasons of one page, from its text."""
    counts = dict.fromkeys(COUNTERS, 0)
    reasons = []
    page = Page.from_text(text, path)
    for b in page.blocks:
        if b.kind == "skipped":
            counts["skipped"] += 1
            reasons.append(f"{b.where}: {b.mark('skip').reason}")
        elif b.kind == "run":
            counts["run"] += 1
            counts["shell commands"] += b.shell
            for name in markers.RUN_MARKS:
                counter = markers.MARKERS[name].counted_as
                if counter and b.mark(name) is not None:
                    counts[counter] += 1
        elif b.kind == "version output":
            counts[markers.MARKERS["output_on"].counted_as] += 1
        elif b.kind in ("diagram", "checked diagram"):
            counts["diagrams"] += 1
            counts["diagrams checked against code"] += b.kind == "checked diagram"
        counts["verified outputs"] += b.expected_output is not None and b.kind != "skipped"
    for entry in markers.CHECKS:
        if entry.counter in FENCE_COUNTERS or not entry.counter:
            continue
        if entry.node == "table":
            counts[entry.counter] += sum(1 for t in page.tables if t.kind in entry.syntax)
        elif entry.node == "heading":
            counts[entry.counter] += len(page.headings)
        elif entry.node == "page":
            counts[entry.counter] += 1
    return counts, reasons


def fence_counts(pages) -> tuple[dict, list[str]]:
    """How the fences of ``pages`` are verified: run, outputs, expected errors, diagrams, skipped."""
    total, reasons = dict.fromkeys(COUNTERS, 0), []
    for page in pages:
        counts, found = text_counts(Path(page).read_text(encoding="utf-8"), Path(page))
        for k, v in counts.items():
            total[k] += v
        reasons += found
    return total, reasons
