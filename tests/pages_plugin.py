"""pytest plugin (loaded with -p in pyproject.toml): every page of docs/ becomes tests.

Per page: its guard, each runnable block, each diagram checked against code and each
hand-trace table (tests/bookcheck/ says what each check means). Each cont chain of a page
runs once per seed; its blocks are checked against the recorded outputs.

Options: ``--update-outputs`` rewrites the expected-output fences of the pages run from what
their blocks print (review with ``git diff``); ``--fresh`` runs every check, also those that
passed before with identical inputs (bookcheck.results says what a check's inputs are).

The site build (tests/test_site.py) is started in a background process when the session
starts, so it runs while the pages' blocks do; the site's tests run last.
"""

from __future__ import annotations

import pytest

from bookcheck import DOCS, HarnessError, markers, results
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
    parser.addoption("--fresh", action="store_true",
                     help="run every check, also those that passed before with identical inputs")


def pytest_configure(config):
    for line in markers.pytest_marker_lines():
        config.addinivalue_line("markers", line)


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".md" and DOCS in file_path.resolve().parents:
        return Page.from_parent(parent, path=file_path)
    return None


# Tests of the built book: last, so that its build runs in the background while the rest runs.
SITE_TESTS = ("tests/test_api_docs.py", "tests/test_site.py", "tests/test_site_a11y.py")


def pytest_collection_modifyitems(session, config, items):
    """The site's checks last: its build runs in the background meanwhile (see test_site).
    Checks that passed before with identical inputs are reported as passed without running."""
    site = [i for i in items if i.nodeid.startswith(SITE_TESTS)]
    if site:
        items[:] = [i for i in items if i not in site] + site
    REUSE.decide(config, items)
    if any(not REUSE.reused(i) for i in site):
        import site_check

        site_check.start_book_build()


class Reuse:
    """The record of passes (bookcheck.results): which items need not run, and what passed."""

    def __init__(self):
        self.keys: dict[str, str] = {}
        self.cached: set[str] = set()
        self.failed: set[str] = set()  # a report failed or skipped
        self.done: set[str] = set()  # torn down: every report is in
        self.skipped_runs = 0  # items reported as passed without running
        self.active = False

    def decide(self, config, items):
        self.active = not (config.getoption("fresh") or config.getoption("update_outputs"))
        results.FRESH = not self.active
        keys = results.Keys()
        record = results.load() if self.active else {}
        for item in items:
            page = item.path if isinstance(item, Check) else None
            self.keys[item.nodeid] = keys.key(item.nodeid, page)
            if record.get(item.nodeid) == self.keys[item.nodeid]:
                self.cached.add(item.nodeid)

    def reused(self, item) -> bool:
        return self.active and item.nodeid in self.cached

    def report(self, rep):
        if rep.failed or rep.skipped:
            self.failed.add(rep.nodeid)
        if rep.when == "teardown":
            self.done.add(rep.nodeid)

    def save(self):
        ran = self.done | self.failed
        passed = {n: k for n, k in self.keys.items() if n in self.done and n not in self.failed}
        results.save(passed, ran)


REUSE = Reuse()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if not REUSE.reused(item):
        return None
    REUSE.skipped_runs += 1
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for when, step in (("setup", lambda: None), ("call", lambda: None),
                       ("teardown", lambda: item.session._setupstate.teardown_exact(nextitem))):
        call = pytest.CallInfo.from_call(step, when=when)
        ihook.pytest_runtest_logreport(report=ihook.pytest_runtest_makereport(item=item, call=call))
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def pytest_runtest_logreport(report):
    REUSE.report(report)


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
    if REUSE.keys and not session.config.getoption("collectonly"):
        REUSE.save()
    if not UPDATES:
        return
    from bookcheck.update import rewrite

    for path, printed in sorted(UPDATES.items()):
        n = rewrite(path, printed)
        session.config.get_terminal_writer().line(f"--update-outputs: {path}: {n} output block(s) rewritten")
    UPDATES.clear()


def pytest_terminal_summary(terminalreporter):
    if REUSE.skipped_runs:
        ran = len(REUSE.done | REUSE.failed)
        terminalreporter.write_line(
            f"{REUSE.skipped_runs} of {ran} checks passed before with identical inputs and were not run "
            "again (.cache/results.json; make test FRESH=1 runs every check)")
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
