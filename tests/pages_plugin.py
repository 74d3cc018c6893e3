"""pytest plugin (loaded with -p in pyproject.toml): every page of docs/ becomes tests.

Per page: its guard, each runnable block, each diagram checked against code and each
hand-trace table (tests/bookcheck/ says what each check means). Each cont chain of a page
runs once per seed; its blocks are checked against the recorded outputs.

Options: ``--update-outputs`` rewrites the expected-output fences of the pages run from what
their blocks print (review with ``git diff``).

The site build (tests/test_site.py) is started in a background process when the session
starts, so it runs while the pages' blocks do; the site's tests run last.
"""

from __future__ import annotations

import pytest

from bookcheck import DOCS, HarnessError, markers
from bookcheck.counts import fence_counts
from bookcheck.diagrams import check_diagram
from bookcheck.guard import guard
from bookcheck.page import parse_page
from bookcheck.run import PageRuns, check_block
from bookcheck.tables import table_checks

UPDATES: dict = {}  # path -> {line of the block's fence: what it prints}


def pytest_addoption(parser):
    parser.addoption("--update-outputs", action="store_true",
                     help="rewrite the pages' expected-output fences from what their blocks print")


def pytest_configure(config):
    for line in markers.pytest_marker_lines():
        config.addinivalue_line("markers", line)


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".md" and DOCS in file_path.resolve().parents:
        return Page.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(session, config, items):
    """The site's checks last: its build runs in the background meanwhile (see test_site)."""
    site = [i for i in items if i.nodeid.startswith("tests/test_site.py")]
    if site:
        items[:] = [i for i in items if i not in site] + site
        import site_check

        site_check.start_book_build()


def pytest_unconfigure(config):
    import sys

    if "site_check" in sys.modules:
        sys.modules["site_check"].close_browser()


class Page(pytest.File):
    def collect(self):
        yield Check.from_parent(self, name="guard", run=lambda: _guard(self.path))
        try:
            blocks = parse_page(self.path)
        except (RuntimeError, HarnessError):
            return  # the guard item reports it
        runs = PageRuns(blocks)
        update = self._record if self.config.getoption("update_outputs") else None
        for b in blocks:
            if b.runnable:
                item = Check.from_parent(
                    self, name=f"line {b.lineno}", run=lambda b=b: check_block(blocks, b, runs, update)
                )
                if b.kind == "skipped":
                    item.add_marker(pytest.mark.skip(reason=f"{b.where}: {b.mark('skip').reason}"))
                yield item
            elif b.kind == "checked diagram":
                yield Check.from_parent(self, name=f"line {b.lineno} diagram", run=lambda b=b: check_diagram(blocks, b))
        try:
            tables = table_checks(self.path)
        except HarnessError as exc:
            yield Check.from_parent(self, name="tables", run=lambda exc=exc: _raise(exc))
            return
        for table, check in tables:
            yield Check.from_parent(self, name=f"line {table.lineno} {table.kind} table", run=check)

    def _record(self, block, shown):
        UPDATES.setdefault(block.path, {})[block.lineno] = shown


def _guard(path):
    problems = guard(path)
    if problems:
        raise HarnessError("\n".join(problems))


def _raise(exc):
    raise exc


class Check(pytest.Item):
    def __init__(self, *, run, **kwargs):
        super().__init__(**kwargs)
        self._run = run

    def runtest(self):
        self._run()

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, HarnessError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        # pytest needs an int line (0-based) for skipped items: take it from the name.
        digits = "".join(c for c in self.name.split()[1] if c.isdigit()) if " " in self.name else ""
        return self.path, int(digits) - 1 if digits else 0, f"{self.path.name}::{self.name}"


def pytest_sessionfinish(session):
    if not UPDATES:
        return
    from bookcheck.update import rewrite

    for path, printed in sorted(UPDATES.items()):
        n = rewrite(path, printed)
        session.config.get_terminal_writer().line(f"--update-outputs: {path}: {n} output block(s) rewritten")
    UPDATES.clear()


def pytest_terminal_summary(terminalreporter):
    pages = sorted(DOCS.rglob("*.md"))
    try:
        counts, reasons = fence_counts(pages)
    except Exception as exc:  # noqa: BLE001 - the guard tests report broken pages
        terminalreporter.write_line(f"fence counts unavailable: {exc}")
        return
    terminalreporter.section("fences in docs/")
    terminalreporter.write_line(f"{len(pages)} pages: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    for reason in reasons:
        terminalreporter.write_line(f"  skipped {reason}")
