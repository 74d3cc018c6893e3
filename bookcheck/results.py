"""A check that passed is not run again while nothing it could have read has changed.

Reuse is sound by construction, not by declaration: a check's key is the hash of

- its pytest node id;
- every file of the project (``git ls-files --cached --others --exclude-standard``: tracked
  files and new ones not ignored), whatever the check reads: pages, snippets, the files a
  page's shell block runs, fixtures, assets, ``mkdocs.yml``, notebooks, the harness itself;
- the environment: the Python build and platform, the name and version of every installed
  distribution, the version the browser itself reports (``chromium --version``, not the
  launcher script's bytes), and every environment variable except those that name the
  terminal or make's own bookkeeping (NOT_INPUTS).

So any edit anywhere in the project runs every check again; an unchanged tree after a green
run runs nothing. A reused check is never reported as passed: the pages plugin deselects it
and the summary counts it as reused. Never under ``CI=true``, with ``--fresh`` (``make test
FRESH=1``) or ``--update-outputs``. Only passes are recorded; a failure or a skip runs again.

What the key does not cover: files outside the project that are not part of an installed
distribution (system fonts and libraries; the venvs in ``machine_cache()``). ``make test
FRESH=1`` runs every check; CI always does, and sets those venvs up in its run.
The record lives in ``.cache/results.json`` (ignored by git; ``BOOK_RESULTS`` names another).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import ROOT, scratch

STORE = Path(os.environ.get("BOOK_RESULTS", ROOT / ".cache" / "results.json"))
# Variables that describe the terminal, the shell or make's bookkeeping, read by no check.
# FRESH is make's switch for --fresh, which turns reuse off anyway.
NOT_INPUTS = {"_", "OLDPWD", "SHLVL", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "FRESH",
              "BOOK_MAKE_TARGET", "COLUMNS", "LINES", "TERM", "COLORTERM", "PYTEST_CURRENT_TEST",
              "BOOK_RESULTS"}
NOT_INPUT_PREFIXES = ("SSH_", "TMUX", "TERM_", "WINDOWID", "XDG_SESSION")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@functools.cache
def machine_cache() -> Path:
    """Where checks keep what they set up once and reuse (the venvs of other Pythons, the
    reader's venv): ``~/.cache/autograd-book`` (or ``$XDG_CACHE_HOME/autograd-book``), outside
    the repository, as a reader's venv must be. Under ``CI=true`` nothing is reused from an
    earlier run: a new folder in it (on the same disk: the venvs take about 2 GB), removed when
    the process that made it ends, or by the next CI run when a signal ended it first. Its
    entries are named with cache_entry."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "autograd-book"
    if not in_ci():
        return cache
    remove_ended_runs(cache)
    return scratch(f"ci-run-{os.getpid()}-", cache)


def remove_ended_runs(cache: Path) -> list[Path]:
    """Remove the folders in ``cache`` of CI runs whose process has ended (``ci-run-PID-*``): a
    run stopped by a signal (make's timeout, Ctrl-C, kill) leaves its venvs behind, about 2 GB.
    A folder whose process is alive, or whose name gives none, is kept. Returns those removed."""
    removed = []
    for folder in sorted(cache.glob("ci-run-*")):
        match = re.fullmatch(r"ci-run-(\d+)-\w+", folder.name)
        if match is None or not folder.is_dir():
            continue
        try:
            os.kill(int(match[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        except (PermissionError, OverflowError):  # alive, another user's; or not a process id
            pass
    return removed


# An entry of the machine cache that no run has used for this many days is removed: a change of
# Python or of the pins names a new venv (0.3 to 1.1 GB each), and the one it replaces would stay.
UNUSED_DAYS = 30


def cache_entry(name: str) -> Path:
    """``machine_cache()/name``: a venv a check sets up once, named by what it holds (a change of
    Python or pins gives a new name), marked as used now (the file ``name.used`` beside it); then
    the cache's entries that no run has used for UNUSED_DAYS are removed (remove_unused)."""
    if not name or name in {".", ".."} or "/" in name or name.endswith(".used"):
        raise ValueError(f"name must be a folder name such as 'serve-venv-3.11.7-0123456789ab', got {name!r}")
    cache = machine_cache()
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"{name}.used").touch()
    remove_unused(cache)
    return cache / name


def remove_unused(cache: Path, days: float = UNUSED_DAYS) -> list[Path]:
    """Remove the folders of ``cache`` last used more than ``days`` ago: by their mark
    (``NAME.used``, cache_entry), else (a folder made before marks, a copy or set-up a killed
    run left) by the folder's own time of change; a mark that old whose folder is gone goes
    too. Other files (the set-ups' locks) are kept. Returns the folders removed."""
    if not (isinstance(days, (int, float)) and math.isfinite(days) and days > 0):
        raise ValueError(f"days must be a positive number of days, such as {UNUSED_DAYS}, got {days!r}")
    cutoff = time.time() - days * 86400

    def last_change(path: Path) -> float:  # inf: gone meanwhile (another run removed it)
        try:
            return path.stat().st_mtime
        except FileNotFoundError:
            return math.inf

    removed = []
    entries = sorted(cache.iterdir()) if cache.is_dir() else []
    for folder in (e for e in entries if e.is_dir() and not e.is_symlink()):
        mark = folder.with_name(folder.name + ".used")
        used = last_change(mark) if mark.exists() else last_change(folder)
        if used < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            mark.unlink(missing_ok=True)
            removed.append(folder)
    for mark in (e for e in entries if e.name.endswith(".used")):
        if not mark.with_name(mark.name[: -len(".used")]).exists() and last_change(mark) < cutoff:
            mark.unlink(missing_ok=True)
    return removed


def _h(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little") + p)
    return h.hexdigest()


def project_files(root: Path = ROOT) -> list[str]:
    """The project's files, relative to the root, sorted."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, capture_output=True, check=True,
        ).stdout.decode()
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk, skipping the usual
        skip = {".git", ".venv", "site", ".cache", "build", "__pycache__", ".pytest_cache", ".hypothesis"}
        names = []
        for base, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in skip and not d.endswith(".egg-info")]
            names += [os.path.relpath(os.path.join(base, f), root) for f in files if not f.endswith(".pyc")]
    return sorted(n for n in names if (root / n).is_file())


def chromium() -> str | None:
    """The browser every check of the site uses: Debian's `chromium` on the PATH (the one place
    that looks for it; bookcheck.site_check and the keys here use it)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@functools.lru_cache(maxsize=1)
def browser_version() -> str:
    """What the browser itself says it is (Debian's `chromium` is a launcher script: its bytes
    do not change with the browser)."""
    found = chromium()
    if not found:
        return "no chromium"
    try:
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
        return out.stdout.strip() or out.stderr.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"chromium at {found}: {type(exc).__name__}"


def environment_variables(environ=None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items()
            if k not in NOT_INPUTS and not k.startswith(NOT_INPUT_PREFIXES)}


def environment() -> str:
    from importlib.metadata import distributions

    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions())
    variables = json.dumps(environment_variables(), sort_keys=True)
    return _h(sys.version.encode(), sys.executable.encode(), platform.platform().encode(),
              "\n".join(dists).encode(), browser_version().encode(), variables.encode())


class Keys:
    """Each check's key: its node id, every project file, the environment."""

    def __init__(self, root: Path = ROOT):
        self.root = root
        self._tree = None
        self._env = None

    def tree(self) -> str:
        if self._tree is None:
            self._tree = _h(*(_h(n.encode(), (self.root / n).read_bytes()).encode()
                              for n in project_files(self.root)))
        return self._tree

    def env(self) -> str:
        if self._env is None:
            self._env = environment()
        return self._env

    def key(self, nodeid: str) -> str:
        return _h(nodeid.encode(), self.tree().encode(), self.env().encode())[:40]


def load() -> dict[str, str]:
    """{node id: key of its last pass}."""
    try:
        return json.loads(STORE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def save(passed: dict[str, str], ran: set[str]) -> None:
    """Record this session's passes; a check that ran and did not pass loses its record."""
    record = {k: v for k, v in load().items() if k not in ran}
    record.update(passed)
    STORE.parent.mkdir(parents=True, exist_ok=True)
    tmp = STORE.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=0, sort_keys=True), encoding="utf-8")
    tmp.replace(STORE)


# The records of whole passing runs: what the page stamp may call verified.
VERIFIED = STORE.with_name("verified.json")


def verified_path(torch_version: str) -> Path:
    """The record of a passing run of every page's checks on another torch version."""
    return VERIFIED.with_name(f"verified-torch-{torch_version}.json")


def step_path(step: str, folder: Path | None = None) -> Path:
    """The record of a whole passing run of one step (bookcheck.steps) on the pinned torch."""
    return Path(folder or VERIFIED.parent) / f"verified-{step}.json"


def record_verified(tree: str, facts: dict, path: Path) -> None:
    """After a whole run that passed (a step's, or every page's on another torch): the tree it
    verified (Keys.tree()) and what ran on it, in ``path`` (step_path, verified_path)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(dict(facts, tree=tree), indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def forget_verified(path: Path) -> None:
    Path(path).unlink(missing_ok=True)


def _record(path: Path, tree: str) -> dict | None:
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("tree") == tree else None


def verified(root: Path = ROOT, path: Path | None = None, folder: Path | None = None) -> dict | None:
    """``path`` given: its record, if it verified exactly this tree (every project file as it
    is now). Else the book's: every test step (bookcheck.steps.TEST_STEPS) has a record of a
    whole passing run of this tree (in ``folder``, by default beside the results); their facts
    combined (``checks`` summed), or None."""
    tree = Keys(root).tree()
    if path is not None:
        return _record(path, tree)
    from .steps import TEST_STEPS

    records = [_record(step_path(step, folder), tree) for step in TEST_STEPS]
    if any(r is None for r in records):
        return None
    return dict(records[0], checks=sum(r.get("checks", 0) for r in records), steps=list(TEST_STEPS))
