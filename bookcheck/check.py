"""Every check of a page, in page order: the one dispatcher over the registry of checks.

``page_checks(path)`` reads the page once (bookcheck.model.Page) and, for each entry of
bookcheck.markers.CHECKS, calls the entry's function on every node of its kind and syntax; each
returns a PageCheck (the pytest plugin makes each one a test item). ``check_page(path)`` runs
them all and returns the failures' messages (tests of fixture pages, and the book's own page on
how it is verified).
"""

from __future__ import annotations

import functools

from . import HarnessError, markers
from .markers import PageCheck
from .model import Page


class PageContext:
    """What the checks of one page share: the page model, its blocks, their runs (each cont
    chain once per seed, in worker processes: bookcheck.worker), ``update`` (given to
    check_block under --update-outputs) and ``first_run_only`` (--first-run-only)."""

    def __init__(self, page: Page, update=None, first_run_only: bool = False):
        self.page, self.update, self.first_run_only = page, update, first_run_only

    @functools.cached_property
    def blocks(self) -> list:
        return self.page.blocks

    @functools.cached_property
    def runs(self):
        from .run import PageRuns

        return PageRuns(self.blocks)

    def nodes(self, entry: markers.Check) -> list:
        if entry.node == "page":
            return [self.page]
        if entry.node == "heading":
            return [self.page] if self.page.headings else []  # one check of the page's headings
        if entry.node == "table":
            return [t for t in self.page.tables if t.kind in entry.syntax]
        if entry.node == "fence":
            try:
                blocks = self.blocks
            except HarnessError:
                return []  # the guard reports it
            return [b for b in blocks if b.syntax in entry.syntax]
        raise ValueError(f"{entry}: node must be page, fence, table or heading")


def page_checks(path, update=None, first_run_only: bool = False) -> list[PageCheck]:
    """Every check of the page at ``path``, in page order (the guard first)."""
    context = PageContext(Page.parse(path), update, first_run_only)
    checks = []
    for entry in markers.CHECKS:
        check = markers.resolve(entry.check)
        for node in context.nodes(entry):
            found = check(context, node)
            if found is not None:
                checks.append(found)
    return sorted(checks, key=lambda c: c.line)


def check_page(path) -> list[str]:
    """Run every check of a page; return the failures' messages (empty: the page passes). A
    page that fails its guard is reported by the guard alone."""
    from .guard import guard

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
