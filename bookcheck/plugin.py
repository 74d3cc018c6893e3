"""pytest plugin (loaded with -p in pyproject.toml): every page of docs/ becomes tests.

Per page: its guard, each runnable block, each diagram checked against code and each
hand-trace table (bookcheck/ says what each check means). Each cont chain of a page
runs once per seed; its blocks are checked against the recorded outputs.

Options: ``--update-outputs`` rewrites the expected-output fences of the pages run from what
their blocks print (review with ``git diff``); ``--fresh`` runs every check, also those that
passed before with identical inputs (bookcheck.results: every project file and the
environment). A reused check is deselected and counted as reused, never reported as passed;
nothing is reused under CI=true.

``--step NAME`` runs one step's tests (bookcheck.steps: pages, site, notebooks, serve, pdf,
lighthouse); `make test` runs the test steps side by side, each a process of its own. The
session runs its tests in pytest's order, in its one thread; page blocks run in worker processes
(bookcheck.worker).
"""

from __future__ import annotations

import pytest

from bookcheck import DOCS, ROOT, HarnessError, markers, own_workshop_record, results, scratch, steps, worker
from bookcheck.check import page_checks
from bookcheck.counts import fence_counts

START = pytest.StashKey[tuple]()  # (monotonic seconds, CPU seconds) when the session was configured

UPDATES: dict = {}  # path -> {line of the block's fence: what it prints}


def pytest_addoption(parser):
    parser.addoption("--update-outputs", action="store_true",
                     help="rewrite the pages' expected-output fences from what their blocks print")
    parser.addoption("--fresh", action="store_true",
                     help="run every check, also those that passed before with identical inputs")
    parser.addoption("--codeblocks", action="store_true",
                     help="pytest-codeblocks' flag, accepted: the book's pages plugin always collects the "
                          "pages given (pytest --codeblocks docs/part1/forks.md runs that page's checks)")
    parser.addoption("--first-run-only", action="store_true",
                     help="run each page block once, under the first of bookcheck.run.RUNS (make test-torch: "
                          "whether an output depends on the seed or on this CPU's kernels is checked on the "
                          "pinned torch); nothing is reused or recorded as a pass")
    parser.addoption("--step", default=None, type=steps.check_step, metavar="NAME",
                     help="run one step's tests: " + ", ".join(steps.STEPS) + " (bookcheck.steps)")


def _cpu_seconds() -> float:
    """User and system CPU time of this process, of the processes it has waited for, and (where
    /proc exists) of its live descendants and the processes they waited for: the browser's
    processes are the children of playwright's driver, which lives until the session ends."""
    import os
    import resource

    total = sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))
    try:
        stats = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            stats[int(pid)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))  # ppid; utime stime cutime cstime
    except OSError:
        return total
    tick = os.sysconf("SC_CLK_TCK")
    mine, grew = {os.getpid()}, True
    while grew:
        new = {pid for pid, (ppid, _) in stats.items() if ppid in mine} - mine
        mine |= new
        grew = bool(new)
    return total + sum(stats[pid][1] for pid in mine - {os.getpid()}) / tick


def pytest_configure(config):
    import time

    config.stash[START] = (time.monotonic(), _cpu_seconds())
    for line in markers.pytest_marker_lines():
        config.addinivalue_line("markers", line)


def pytest_ignore_collect(collection_path, config):
    """Under ``--step``, the files of other steps are not collected (docs/ is the pages step's)."""
    step = config.getoption("step")
    if not step or not collection_path.is_file():
        return None
    try:
        rel = collection_path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    return True if steps.step_of(rel) != step else None


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".md" and DOCS in file_path.resolve().parents:
        return Page.from_parent(parent, path=file_path)
    return None


def _nodeid_step(item) -> str:
    return steps.step_of(item.nodeid)


def pytest_collection_modifyitems(session, config, items):
    """``--step NAME``: that step's tests only (the others are deselected). Without it, every
    test step's (bookcheck.steps.TEST_STEPS): `make pdf` and `make lighthouse` run theirs. Then
    checks that passed before with identical inputs (bookcheck.results) are deselected and
    counted as reused: they are not run, and not reported as passed."""
    wanted = (config.getoption("step"),) if config.getoption("step") else steps.TEST_STEPS
    other = [i for i in items if _nodeid_step(i) not in wanted]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [i for i in items if _nodeid_step(i) in wanted]
    REUSE.steps = set(wanted)
    reused = REUSE.decide(config, items)
    if reused:
        config.hook.pytest_deselected(items=reused)
        items[:] = [i for i in items if i.nodeid not in REUSE.reused]


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """What the session's checks share: a workshop record of their own (own_workshop_record);
    under --fresh or CI=true, empty caches of its own for notebook executions and
    torch.compile's inductor; else inductor's cache in .cache/."""
    if session.config.option.collectonly:
        return None
    import os

    own_workshop_record()
    if REUSE.why_not in ("--fresh", "CI=true"):  # nothing from an earlier run: no earlier notebook execution
        os.environ["BOOK_NOTEBOOK_CACHE"] = str(scratch("book-notebooks-"))
        # torch.compile's inductor caches what it compiled: an empty cache of this run's own
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(scratch("book-inductor-"))
    else:
        # inductor's cache (keyed on what it compiles) in the project's .cache/, not in /tmp
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(ROOT / ".cache" / "inductor"))
    return None


class Reuse:
    """The record of passes (bookcheck.results): which items need not run, and what passed."""

    def __init__(self):
        self.keys: dict[str, str] = {}
        self.reused: set[str] = set()
        self.failed: set[str] = set()  # a report failed or skipped
        self.done: set[str] = set()  # torn down: every report is in
        self.why_not = ""  # why nothing is reused in this session
        self.active = False
        self.steps: set[str] = set()  # the steps this session runs whole (none if it runs a part of one)

    def decide(self, config, items) -> list:
        if config.getoption("fresh"):
            self.why_not = "--fresh"
        elif config.getoption("update_outputs"):
            self.why_not = "--update-outputs"
        elif config.getoption("first_run_only"):
            self.why_not = "--first-run-only"
        elif results.in_ci():
            self.why_not = "CI=true"
        self.active = not self.why_not
        self.keys_of = results.Keys()
        self.keys_of.tree()  # the project's files as the run starts
        if not self.active or config.getoption("collectonly"):
            return []
        record = results.load()
        for item in items:
            self.keys[item.nodeid] = self.keys_of.key(item.nodeid)
        reused = [i for i in items if record.get(i.nodeid) == self.keys[i.nodeid]]
        self.reused = {i.nodeid for i in reused}
        return reused

    def report(self, rep):
        if rep.failed or rep.skipped:
            self.failed.add(rep.nodeid)
        if rep.when == "teardown":
            self.done.add(rep.nodeid)

    def save(self):
        """Record this session's passes, unless a project file changed while it ran."""
        if not self.active or results.Keys().tree() != self.keys_of.tree():
            return
        ran = self.done | self.failed
        passed = {n: k for n, k in self.keys.items() if n in self.done and n not in self.failed}
        results.save(passed, ran)


REUSE = Reuse()


def pytest_runtest_logreport(report):
    REUSE.report(report)


def pytest_unconfigure(config):
    import sys

    worker.stop()
    if "bookcheck.site_check" in sys.modules:
        sys.modules["bookcheck.site_check"].close_browser()


class Page(pytest.File):
    def collect(self):
        update = self._record if self.config.getoption("update_outputs") else None
        for check in page_checks(self.path, update, first_run_only=self.config.getoption("first_run_only")):
            item = Check.from_parent(self, name=check.name, run=check.run)
            if check.skip is not None:
                item.add_marker(pytest.mark.skip(reason=check.skip))
            yield item

    def _record(self, block, shown):
        UPDATES.setdefault(block.path, {})[block.lineno] = shown


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


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and REUSE.reused and not session.testsfailed:
        session.exitstatus = exitstatus = pytest.ExitCode.OK  # everything was reused: nothing to run
    if REUSE.keys:
        REUSE.save()
    _record_verified(session, exitstatus)
    if not UPDATES:
        return
    from bookcheck.update import rewrite

    for path, printed in sorted(UPDATES.items()):
        n = rewrite(path, printed)
        session.config.get_terminal_writer().line(f"--update-outputs: {path}: {n} output block(s) rewritten")
    UPDATES.clear()


def _whole_suite(config) -> bool:
    """The run covers every check: the test paths of pyproject.toml, nothing selected away
    (checks reused from an identical tree count as run: they passed on it)."""
    option = config.option
    return (config.args_source == pytest.Config.ArgsSource.TESTPATHS and not option.keyword
            and not option.markexpr and not getattr(option, "lf", False) and not option.deselect
            and not option.update_outputs and not option.collectonly and not option.maxfail)


def _all_pages(config) -> bool:
    """The run covers every page's checks: ``pytest docs``, nothing selected away."""
    from pathlib import Path

    option = config.option
    return ([Path(a).resolve() for a in config.args] == [DOCS] and not option.keyword and not option.markexpr
            and not getattr(option, "lf", False) and not option.deselect and not option.collectonly
            and not option.maxfail and not REUSE.reused)


def _record_verified(session, exitstatus):
    """A whole passing run of a step records the tree it verified (the page stamp says so when
    every test step has, see overrides/hooks.py and bookcheck.results.verified); any other run
    that fails forgets the record of each step it ran. On another verified
    torch (bookcheck.versions.also), a run of every page records that version's pass."""
    from bookcheck import versions

    version = versions.running()
    if version != versions.pinned():
        if version in versions.also() and _all_pages(session.config):
            if exitstatus == 0 and not session.testsfailed:
                results.record_verified(REUSE.keys_of.tree(), {"torch": version, "checks": len(REUSE.done)},
                                        results.verified_path(version))
            else:
                results.forget_verified(results.verified_path(version))
        return
    whole = _whole_suite(session.config)
    for step in sorted(REUSE.steps):
        path = results.step_path(step)
        if (exitstatus == 0 and whole and not session.testsfailed
                and results.Keys().tree() == REUSE.keys_of.tree()):
            import platform
            from importlib.metadata import version

            ran = {n for n in REUSE.done | REUSE.failed | REUSE.reused if steps.step_of(n) == step}
            results.record_verified(REUSE.keys_of.tree(), {
                "torch": version("torch"), "python": platform.python_version(), "checks": len(ran)}, path)
        elif exitstatus not in (0, 5):
            results.forget_verified(path)


def pytest_terminal_summary(terminalreporter):
    import time

    wall, cpu = time.monotonic(), _cpu_seconds()
    wall0, cpu0 = terminalreporter.config.stash.get(START, (wall, cpu))
    step = terminalreporter.config.getoption("step") or "all"
    # each step's time and CPU, in the logs of make test and CI: what a change of the harness costs
    terminalreporter.write_line(f"step {step}: {wall - wall0:.0f} s wall, {cpu - cpu0:.0f} s CPU "
                                "(its processes and theirs)")
    ran = len(REUSE.done | REUSE.failed)
    if REUSE.reused:
        terminalreporter.write_line(
            f"{len(REUSE.reused)} reused, {ran} run: the reused checks passed before with identical inputs "
            "(every project file and the environment; .cache/results.json) and were not run again; "
            "make test FRESH=1 runs every check")
    else:  # a run after an edit reuses nothing, with no reason to give but the edit
        terminalreporter.write_line(f"0 reused ({REUSE.why_not or 'none recorded with these inputs'}), {ran} run")
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
