"""Checks that passed with identical inputs are not run again (``make test FRESH=1`` runs all).

A check's key is a hash of everything its outcome can depend on:

- every check: its pytest node id, the Python and platform, the name and version of every
  installed distribution (torch, mkdocs, playwright, ...), the chromium binary, ``CI``;
- a check of a page (its guard, blocks, diagrams, tables): the page, ``mkdocs.yml``, every file
  under ``snippets/`` and every file under ``docs/`` that is not a page (includes), the harness
  (``tests/bookcheck/``, ``tests/pages_plugin.py``), ``pyproject.toml`` and ``constraints.txt``;
- any other check: every file of the project (``git ls-files --cached --others
  --exclude-standard``: tracked files and new ones not ignored), so an edit anywhere runs it again.

Only passes are recorded (the last key each check passed with); a failure or a skip runs again
next time. The record lives in
``.cache/results.json`` (ignored by git; ``BOOK_RESULTS`` names another file); a clean clone has
none, so CI runs every check.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from . import ROOT

STORE = Path(os.environ.get("BOOK_RESULTS", ROOT / ".cache" / "results.json"))
PAGE_INPUTS = ("mkdocs.yml", "pyproject.toml", "constraints.txt", "tests/pages_plugin.py")
PAGE_TREES = ("snippets", "tests/bookcheck")


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


def environment() -> str:
    from importlib.metadata import distributions

    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions())
    browser = shutil.which("chromium")
    if browser:
        st = Path(browser).resolve().stat()
        browser = f"{Path(browser).resolve()}:{st.st_size}:{int(st.st_mtime)}"
    return _h(sys.version.encode(), platform.platform().encode(), "\n".join(dists).encode(),
              str(browser).encode(), os.environ.get("CI", "").lower().encode())


class Keys:
    """Computes each check's key; file digests are read once per session."""

    def __init__(self, root: Path = ROOT):
        self.root = root
        self.env = environment()
        self.files = project_files(root)
        self._digest: dict[str, str] = {}
        self._all = None
        self._page_common = None

    def digest(self, name: str) -> str:
        if name not in self._digest:
            self._digest[name] = _h(name.encode(), (self.root / name).read_bytes())
        return self._digest[name]

    def _of(self, names) -> str:
        return _h(*(self.digest(n).encode() for n in names))

    def everything(self) -> str:
        if self._all is None:
            self._all = self._of(self.files)
        return self._all

    def page_common(self) -> str:
        if self._page_common is None:
            docs = "docs/"
            names = [n for n in self.files if n in PAGE_INPUTS
                     or any(n.startswith(t + "/") for t in PAGE_TREES)
                     or (n.startswith(docs) and not n.endswith(".md"))]
            self._page_common = self._of(names)
        return self._page_common

    def key(self, nodeid: str, page: Path | None) -> str:
        if page is not None:
            name = str(Path(page).resolve().relative_to(self.root.resolve()))
            inputs = self.page_common() + self.digest(name)
        else:
            inputs = self.everything()
        return _h(self.env.encode(), nodeid.encode(), inputs.encode())[:40]


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


MEMO = STORE.with_name("results-per-page.json")
FRESH = False  # set by the pytest plugin: --fresh or --update-outputs check every subject


class Memo:
    """Passes of one check on each of many subjects (a browser check on each page of the built
    site), so that a rebuilt site is checked again only on the pages whose key changed. The
    caller computes each subject's key from everything the check sees of it; only passes are
    recorded; with ``--fresh`` (or ``active=False``) every subject is checked and the passes recorded."""

    def __init__(self, check: str, active: bool | None = None):
        self.check = check
        self.active = (not FRESH) if active is None else active
        self.passes: dict[str, str] = {}
        self.failed: set[str] = set()
        try:
            self._before = json.loads(MEMO.read_text(encoding="utf-8")).get(check, {})
        except (OSError, ValueError):
            self._before = {}

    def passed_before(self, subject: str, key: str) -> bool:
        return self.active and self._before.get(subject) == key

    def record(self, subject: str, key: str, ok: bool) -> None:
        if ok:
            self.passes[subject] = key
        else:
            self.failed.add(subject)

    def save(self) -> None:
        try:
            record = json.loads(MEMO.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = {}
        mine = {k: v for k, v in record.get(self.check, {}).items() if k not in self.failed}
        mine.update(self.passes)
        record[self.check] = mine
        MEMO.parent.mkdir(parents=True, exist_ok=True)
        tmp = MEMO.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record, indent=0, sort_keys=True), encoding="utf-8")
        tmp.replace(MEMO)
