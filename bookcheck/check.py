"""Every check of a page, in page order: the one dispatch over block kinds.

``page_checks(path)`` lists them (the pytest plugin makes each one a test item);
``check_page(path)`` runs them all and returns the failures' messages (tests of fixture pages,
and the book's own page on how it is verified).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import HarnessError
from .diagrams import check_diagram
from .guard import guard
from .page import parse_page
from .run import PageRuns, check_block
from .tables import table_checks


@dataclass
class PageCheck:
    name: str  # "guard", "line 12", "line 30 diagram", "line 40 backward table"
    run: Callable[[], None]  # raises HarnessError on failure
    skip: str | None = None  # the reason a reader sees, for a skipped block


def _guard(path):
    problems = guard(path)
    if problems:
        raise HarnessError("\n".join(problems))


def _raise(exc):
    raise exc


def page_checks(path, update=None) -> list[PageCheck]:
    """The guard, each runnable block, each diagram checked against code, each hand-trace table.
    ``update``: given to check_block (--update-outputs)."""
    checks = [PageCheck("guard", lambda: _guard(path))]
    try:
        blocks = parse_page(path)
    except (RuntimeError, HarnessError):
        return checks  # the guard reports it
    runs = PageRuns(blocks)  # every chain once per seed, in worker processes (bookcheck.worker)
    for b in blocks:
        if b.runnable:
            skip = f"{b.where}: {b.mark('skip').reason}" if b.kind == "skipped" else None
            checks.append(PageCheck(f"line {b.lineno}", lambda b=b: check_block(blocks, b, runs, update), skip))
        elif b.kind == "checked diagram":
            checks.append(PageCheck(f"line {b.lineno} diagram", lambda b=b: check_diagram(blocks, b, runs)))
    try:
        tables = table_checks(path)
    except HarnessError as exc:
        checks.append(PageCheck("tables", lambda exc=exc: _raise(exc)))
        return checks
    for table, check in tables:
        checks.append(PageCheck(f"line {table.lineno} {table.kind} table", check))
    return checks


def check_page(path) -> list[str]:
    """Run every check of a page; return the failures' messages (empty: the page passes). A
    page that fails its guard is reported by the guard alone."""
    failures = list(guard(path))
    if failures:
        return failures
    for check in page_checks(path)[1:]:
        if check.skip is None:
            try:
                check.run()
            except HarnessError as exc:
                failures.append(str(exc))
    return failures
