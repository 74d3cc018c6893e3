"""Reuse cannot hide a failure (bookcheck.results, bookcheck/plugin.py).

A check that passed is reused only while every project file and the environment are unchanged;
a reused check is deselected and counted as reused, never reported as passed; CI=true reuses
nothing. The mutation test changes one input of each kind in a copy of the project, under a
check that reads it, and requires the next warm run to fail exactly as a fresh run does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bookcheck import ROOT, results, steps

# One input of each kind a check can read: (kind, file in the project, a change that breaks it).
SENTINEL = "MUTATED-INPUT"
KINDS = [
    ("a page", "docs/part1/forks.md", f"\n<!-- {SENTINEL} -->\n"),
    ("a snippet module", "snippets/views.py", f"\n# {SENTINEL}\n"),
    ("a file a page's shell block runs", "docs/workshop/wrong/linear__bias_not_summed.py", f"\n# {SENTINEL}\n"),
    ("a test fixture", "tests/fixtures/pages/good.md", f"\n<!-- {SENTINEL} -->\n"),
    ("a CSS asset", "docs/assets/css/book.css", f"\n/* {SENTINEL} */\n"),
    ("a JS asset", "docs/assets/js/math.js", f"\n// {SENTINEL}\n"),
    ("mkdocs.yml", "mkdocs.yml", f"\n# {SENTINEL}\n"),
    ("a notebook", "docs/notebooks/01-hand-trace.ipynb", f"\n{SENTINEL}\n"),
]
ENV_KIND = ("an environment variable the build reads", "SITE_URL", f"http://{SENTINEL}/")

# The probe: one check per kind, each failing when its input holds the sentinel.
PROBE = f'''
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = {[path for _, path, _ in KINDS]!r}


@pytest.mark.parametrize("name", FILES)
def test_reads(name):
    assert "{SENTINEL}" not in (ROOT / name).read_text(encoding="utf-8"), f"{{name}} was mutated"


def test_reads_the_environment():
    assert "{SENTINEL}" not in os.environ.get("{ENV_KIND[1]}", ""), "{ENV_KIND[1]} was mutated"
'''


def copy_project(dest: Path) -> Path:
    for name in results.project_files(ROOT):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    (dest / "tests" / "test_probe.py").write_text(PROBE, encoding="utf-8")
    return dest


def start(project: Path, store: Path, *args, env=None, paths=("tests/test_probe.py",)):
    """Start pytest on the copy's probe, with the copy's harness; finish(the process) waits."""
    environ = {k: v for k, v in os.environ.items() if k not in {"CI", "PYTEST_ADDOPTS", "SITE_URL"}}
    environ.update(env or {}, BOOK_RESULTS=str(store))
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *paths, *args],
        cwd=project, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def finish(proc) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=300)
    return proc.returncode, out


def run(project: Path, store: Path, *args, env=None, paths=("tests/test_probe.py",)):
    """pytest on the copy's probe, with the copy's harness: (exit code, output)."""
    return finish(start(project, store, *args, env=env, paths=paths))


def outcome(code: int, out: str) -> str:
    """The run's result line less its time, and the failure messages, for comparing two runs."""
    summary = re.findall(r"^(\d+ (?:passed|failed|deselected|error)[^\n]*?) in [\d.]+s", out, re.M)
    failures = sorted(set(re.findall(r"^E\s+AssertionError: (.*)$", out, re.M)))
    return f"exit {code}: {summary[-1] if summary else '?'}; " + " | ".join(failures)


def test_the_key_holds_every_project_file_and_the_environment(tmp_path, monkeypatch):
    project = copy_project(tmp_path / "p")
    keys = results.Keys(project)
    before = keys.key("any::check")
    assert results.Keys(project).key("any::check") == before  # deterministic
    for kind, name, change in KINDS:
        path = project / name
        text = path.read_text(encoding="utf-8")
        path.write_text(text + change, encoding="utf-8")
        assert results.Keys(project).key("any::check") != before, kind
        path.write_text(text, encoding="utf-8")
    assert results.Keys(project).key("any::check") == before
    monkeypatch.setenv(ENV_KIND[1], ENV_KIND[2])
    assert results.Keys(project).key("any::check") != before, "an environment variable"
    monkeypatch.delenv(ENV_KIND[1])
    monkeypatch.setenv("SHLVL", "7")  # the shell's nesting is not an input
    assert results.Keys(project).key("any::check") == before


def test_the_browser_in_the_key_is_the_browser_itself():
    version = results.browser_version()
    if results.chromium():
        assert re.match(r"Chromium \d+\.", version), version
    else:
        assert version == "no chromium"


def test_a_change_of_any_kind_fails_the_next_warm_run_as_a_fresh_run_does(tmp_path):
    """The acceptance table: for each kind of input, warm and FRESH=1 outcomes after the change."""
    project = copy_project(tmp_path / "p")
    store, fresh_store = tmp_path / "results.json", tmp_path / "fresh.json"
    n = len(KINDS) + 1
    code, out = run(project, store)  # nothing recorded yet: the summary still says what ran
    assert code == 0 and f"{n} passed" in out and f"0 reused (none recorded with these inputs), {n} run" in out, out
    code, out = run(project, store)  # warm, unchanged: everything reused, nothing reported as passed
    assert code == 0 and f"{n} deselected" in out and f"{n} reused, 0 run" in out, out
    assert not re.search(r"\d+ passed", out), out
    code, out = run(project, store, env={"CI": "true"})  # never under CI
    assert code == 0 and f"{n} passed" in out and "0 reused (CI=true)" in out, out

    table = []
    for kind, name, change in [*KINDS, ENV_KIND]:
        env = None
        if kind == ENV_KIND[0]:
            env = {name: change}
        else:
            path = project / name
            original = path.read_text(encoding="utf-8")
            path.write_text(original + change, encoding="utf-8")
        warm = start(project, store, env=env)  # the two runs side by side, each a process
        fresh = start(project, fresh_store, "--fresh", env=env)
        warm, fresh = outcome(*finish(warm)), outcome(*finish(fresh))
        if env is None:
            path.write_text(original, encoding="utf-8")
        table.append((kind, name, warm, fresh))
    for kind, name, warm, fresh in table:
        assert warm == fresh, f"{kind} ({name}): warm {warm}, fresh {fresh}"
        assert warm.startswith("exit 1: 1 failed") and "was mutated" in warm, f"{kind} ({name}): {warm}"
    print("\n".join(f"{kind} | {name} | {warm} | {fresh}" for kind, name, warm, fresh in table))


def test_collect_only_starts_no_build(tmp_path):
    """Builds start with the tests, never at collection: no process started by a collect-only
    run is left running."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["BOOK_RESULTS"] = str(tmp_path / "r.json")
    env["BOOK_PROBE"] = marker = f"collect-only-{os.getpid()}"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "tests/test_site.py"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _processes_with(f"BOOK_PROBE={marker}".encode()) == []


def _processes_with(variable: bytes) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if variable in (proc / "environ").read_bytes().split(b"\0"):
                    found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("flag", ["--codeblocks"])
def test_pytest_codeblocks_flag_runs_the_page_with_the_book_plugin(tmp_path, flag):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["BOOK_RESULTS"] = str(tmp_path / "r.json")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", flag, "docs/part2/why-it-matters.md", "--fresh"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"\d+ passed", proc.stdout), proc.stdout


def test_the_stamp_may_say_verified_only_for_the_tree_a_whole_passing_run_verified(tmp_path):
    project = copy_project(tmp_path / "p")
    record = tmp_path / "verified.json"
    record.write_text('{"tree": "%s", "checks": 3, "torch": "2.13.0", "python": "3.11.7"}'
                      % results.Keys(project).tree())
    assert results.verified(project, record)["checks"] == 3
    page = project / "docs" / "part1" / "forks.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
    assert results.verified(project, record) is None  # the files changed since that run
    record.write_text("not json")
    assert results.verified(project, record) is None


def test_a_whole_passing_run_records_the_tree_it_verified_and_a_failing_one_forgets_it(tmp_path):
    """The stamp's evidence: only a whole run of each test step (here plain pytest, every step at
    once, over the probe's test paths) records it; the stamp needs every step's record."""
    project = copy_project(tmp_path / "p")
    store = tmp_path / "results.json"
    record = results.step_path("pages", tmp_path)
    whole = ("-o", "testpaths=tests/test_probe.py")
    code, out = run(project, store, "-k", "environment", *whole, paths=())  # a selection: not the whole suite
    assert code == 0 and not record.exists(), out
    code, out = run(project, store, "--step", "pages", *whole, paths=())  # one step: the others still missing
    assert code == 0 and record.exists(), out
    assert results.verified(project, folder=tmp_path) is None
    code, out = run(project, store, *whole, paths=())
    assert code == 0 and all(results.step_path(s, tmp_path).exists() for s in steps.TEST_STEPS), out
    assert results.verified(project, folder=tmp_path)["checks"] == len(KINDS) + 1
    code, out = run(project, store, "--fresh", *whole, paths=(), env={ENV_KIND[1]: ENV_KIND[2]})
    assert code == 1 and not record.exists(), out
    assert results.verified(project, folder=tmp_path) is None


BUSY_GRANDCHILD = """
import subprocess, sys, time
busy = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 1: pass\\ntime.sleep(300)"
subprocess.Popen([sys.executable, "-c", busy])
time.sleep(300)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc, which this system has not")
def test_a_steps_cpu_time_counts_its_live_descendants():
    """The step line's CPU time ("step NAME: ... s CPU") counts a grandchild that is still running,
    as the browser's processes are when a session ends: rusage alone would not."""
    import resource

    from bookcheck.plugin import _cpu_seconds

    def reaped():
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        return u.ru_utime + u.ru_stime

    before, reaped_before = _cpu_seconds(), reaped()
    child = subprocess.Popen([sys.executable, "-c", BUSY_GRANDCHILD], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while _cpu_seconds() - before < 1.0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _cpu_seconds() - before >= 1.0
        assert reaped() - reaped_before < 0.5  # the grandchild is in no rusage yet
    finally:
        os.killpg(child.pid, 9)
        child.wait()


def test_ci_removes_the_folders_of_runs_that_a_signal_ended(tmp_path, monkeypatch):
    """Under CI=true each process's machine cache is a new folder named after it, removed when it
    ends; a run killed first leaves its folder, which the next run removes. A live run's
    folder, and one whose name gives no process, are kept."""
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()
    cache = tmp_path / "autograd-book"
    left = cache / f"ci-run-{ended.pid}-k1lled_x"
    live = cache / f"ci-run-{os.getpid()}-alive123"
    unnamed = cache / "ci-run-v4itwcf3"  # the name of a run before process ids were in it
    for folder in (left, live, unnamed):
        (folder / "serve-venv-3.11.7-0123456789ab").mkdir(parents=True)
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    made = results.machine_cache.__wrapped__()  # not the session's cached folder: a new one
    assert made.parent == cache and made.name.startswith(f"ci-run-{os.getpid()}-") and made.is_dir()
    assert not left.exists()
    assert live.is_dir() and unnamed.is_dir()
    assert results.remove_ended_runs(cache) == []


def test_a_venv_no_run_has_used_for_30_days_is_removed(tmp_path, monkeypatch):
    """A change of Python or pins names a new venv in the machine cache; the one it replaces is
    removed once no run has used it (cache_entry marks each use) for UNUSED_DAYS. A folder
    without a mark goes by its own time of change; the set-ups' lock files stay."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(results, "machine_cache", lambda: tmp_path / "autograd-book")
    cache = tmp_path / "autograd-book"
    old, recent, unmarked, fresh_unmarked = (cache / n for n in (
        "serve-venv-3.11.7-0123456789ab", "serve-venv-3.12.1-0123456789ab", "reader-venv-0123456789ab", "run-x1y2z3"))
    lock, stale_mark = cache / "serve-venv-3.11.lock", cache / "reader-venv-gone00000000.used"
    for folder in (old, recent, unmarked, fresh_unmarked):
        (folder / "bin").mkdir(parents=True)
    lock.touch()
    stale_mark.touch()
    now = time.time()
    day = 86400

    def age(path, days):
        os.utime(path, (now - days * day, now - days * day))

    (old.parent / f"{old.name}.used").touch()
    age(old.parent / f"{old.name}.used", results.UNUSED_DAYS + 1)
    age(old, 1)  # its folder changed lately: the mark decides
    (recent.parent / f"{recent.name}.used").touch()
    age(recent.parent / f"{recent.name}.used", results.UNUSED_DAYS - 1)
    age(recent, 400)
    age(unmarked, results.UNUSED_DAYS + 1)
    for path in (lock, stale_mark):
        age(path, 400)
    own = "reader-venv-ffffffffffff"
    (cache / own).mkdir()
    age(cache / own, 400)  # unused for long, but used now: kept
    assert results.cache_entry(own) == cache / own
    assert (cache / f"{own}.used").stat().st_mtime >= now - 1
    assert not old.exists() and not (old.parent / f"{old.name}.used").exists()
    assert not unmarked.exists() and not stale_mark.exists()
    assert recent.is_dir() and fresh_unmarked.is_dir() and (cache / own).is_dir() and lock.is_file()
    assert results.remove_unused(cache) == []
    for bad in ("", "..", "a/b", "x.used"):
        with pytest.raises(ValueError, match="name must be a folder name"):
            results.cache_entry(bad)
    for bad in (0, -1, float("nan"), float("inf"), "30"):
        with pytest.raises(ValueError, match="days must be a positive number"):
            results.remove_unused(cache, bad)
