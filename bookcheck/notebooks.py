"""Notebooks executed once per content key, the result shared by the site build and the tests.

The key is the notebook's bytes, the data files in its folder, every file under
``snippets/`` (a notebook may load any of them: a workshop notebook loads its task with
importlib), ``constraints.txt`` and ``pyproject.toml``, and the torch and Python versions: a
change to any of them executes the notebook afresh. Executed notebooks are kept in
``.cache/notebooks/`` (ignored by git). A notebook whose execution fails fails again from the cache, with the
same message, until its key changes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import re
import sys
from pathlib import Path

from . import ROOT

CACHE = ROOT / ".cache" / "notebooks"
IMPORT = re.compile(r"^\s*(?:from\s+(snippets(?:\.\w+)*)\s+import\s+([\w\s,()]+)|import\s+(snippets(?:\.\w+)*))", re.M)


def _module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_snippets(source: str) -> list[Path]:
    """Files of the ``snippets`` modules ``source`` imports, and the ones they import."""
    found: dict[Path, None] = {}
    todo = [source]
    while todo:
        text = todo.pop()
        for m in IMPORT.finditer(text):
            names = []
            if m.group(1):
                names.append(m.group(1))
                names += [f"{m.group(1)}.{n.strip()}" for n in re.split(r"[,\s()]+", m.group(2)) if n.strip()]
            else:
                names.append(m.group(3))
            parts = []
            for name in names:
                pieces = name.split(".")
                parts += [".".join(pieces[: i + 1]) for i in range(len(pieces))]
            for name in parts:
                path = _module_file(name)
                if path is not None and path not in found:
                    found[path] = None
                    todo.append(path.read_text(encoding="utf-8"))
    return sorted(found)


def versions() -> str:
    from importlib.metadata import version

    return f"torch={version('torch')};python={sys.version}"


KEY_FILES = ("constraints.txt", "pyproject.toml")


def key_inputs(path: Path) -> list[Path]:
    """The files a notebook's execution can read, besides itself (see the module's docstring)."""
    path = Path(path).resolve()
    # beside it: data files it may open (not the other notebooks and pages of the folder)
    folder = [p for p in sorted(path.parent.iterdir()) if p.is_file() and p.suffix not in {".ipynb", ".md"}]
    package = [p for p in sorted((ROOT / "snippets").rglob("*"))
               if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    return folder + package + [ROOT / n for n in KEY_FILES if (ROOT / n).is_file()]


def content_key(path: Path) -> str:
    h = hashlib.sha256()
    h.update(Path(path).read_bytes())
    for dep in key_inputs(path):
        h.update(str(dep).encode() + b"\0" + dep.read_bytes())
    h.update(versions().encode())
    return h.hexdigest()[:32]


@contextlib.contextmanager
def _locked(key):
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the build and the tests may ask at the same time
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def execute(path: Path, timeout: int = 120):
    """The notebook at ``path``, executed (from the cache when its key is unchanged).

    Raises nbclient's CellExecutionError when a cell fails.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    path = Path(path)
    key = content_key(path)
    done = CACHE / f"{path.stem}-{key}.ipynb"
    failed = CACHE / f"{path.stem}-{key}.failed.json"
    with _locked(key):
        if done.is_file():
            return nbformat.read(done, as_version=4)
        if failed.is_file():
            error = json.loads(failed.read_text(encoding="utf-8"))
            raise CellExecutionError(error["traceback"], error["ename"], error["evalue"])
        nb = nbformat.read(path, as_version=4)
        try:
            NotebookClient(nb, timeout=timeout, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute()
        except CellExecutionError as exc:
            failed.write_text(json.dumps({"traceback": exc.traceback, "ename": exc.ename, "evalue": exc.evalue}),
                              encoding="utf-8")
            raise
        tmp = done.with_suffix(".tmp")
        nbformat.write(nb, tmp)
        tmp.replace(done)
        for old in [*CACHE.glob(f"{path.stem}-*.ipynb"), *CACHE.glob(f"{path.stem}-*.failed.json")]:
            if old != done:
                old.unlink(missing_ok=True)
        return nb
