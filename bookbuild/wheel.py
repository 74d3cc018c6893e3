"""The book's `snippets` package as a wheel, for the site's downloads/ (made by the build hook
before every build, overrides/hooks.py ``on_pre_build``, and by the tests that need it first).

The wheel is written to docs/downloads/ (not committed), which mkdocs copies to the site as it
copies any file of docs/. It is made with pip's documented command line (``pip wheel``) from a
copy of pyproject.toml and snippets/ in a temporary folder, so the repository gets no build/ or
.egg-info. It is made again only when those sources change: the key of the sources it was made
from is stored beside it. The build hook (overrides/hooks.py) writes the wheel's address into
the notebooks offered for download, and warns when the wheel is missing or older than snippets/.

    python -m bookbuild.wheel     make the wheel if it is not current; print its path
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOWNLOADS = ROOT / "docs" / "downloads"
KEY_FILE = ".snippets-wheel-key"  # in DOWNLOADS: the key of the sources the wheel was made from
LOCK_FILE = ".snippets-wheel.lock"  # in DOWNLOADS: one process makes the wheel at a time
GLOB = "autograd_book_snippets-*-py3-none-any.whl"


def sources(root: Path = ROOT) -> list[Path]:
    """pyproject.toml and every file of snippets/: its modules and its data (error_index.json,
    which `python -m snippets.explain` reads; pyproject.toml declares it as package data), not
    Python's caches."""
    return [root / "pyproject.toml"] + sorted(
        p for p in (root / "snippets").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".pyo"})


def key(root: Path = ROOT) -> str:
    """The sources' content key (their paths and bytes)."""
    return hashlib.sha256(b"".join(
        str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0" for p in sources(root))).hexdigest()


def current(downloads: Path = DOWNLOADS, root: Path = ROOT) -> Path | None:
    """The wheel in ``downloads`` when it was made from the sources as they are now, else None."""
    wheels = sorted(downloads.glob(GLOB))
    stored = downloads / KEY_FILE
    if len(wheels) == 1 and stored.is_file() and stored.read_text(encoding="utf-8").strip() == key(root):
        return wheels[0]
    return None


def ensure(downloads: Path = DOWNLOADS, root: Path = ROOT) -> Path:
    """The current wheel in ``downloads``, made first if it is missing or stale (one process at a
    time: the build hook and the tests' builds may ask together)."""
    import fcntl

    found = current(downloads, root)
    if found:
        return found
    downloads.mkdir(parents=True, exist_ok=True)
    with open(downloads / LOCK_FILE, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return current(downloads, root) or _make(downloads, root)


def _make(downloads: Path, root: Path) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "src")
        for p in sources(root):
            (src / p.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, src / p.relative_to(root))
        out = subprocess.run(
            # --ignore-requires-python: the wheel is for readers on Python 3.11+, and `make serve`
            # may run on 3.10 (pure Python: the interpreter that packs it does not matter)
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
             "--no-build-isolation", "--ignore-requires-python", "--wheel-dir", str(Path(tmp, "dist")), str(src)],
            capture_output=True, text=True, timeout=300)
        if out.returncode:
            raise RuntimeError(f"making the wheel of the snippets package failed (pip wheel, exit {out.returncode}):\n"
                               f"{out.stdout[-2000:]}{out.stderr[-2000:]}")
        [made] = Path(tmp, "dist").glob(GLOB)
        downloads.mkdir(parents=True, exist_ok=True)
        for old in downloads.glob(GLOB):
            old.unlink()
        shutil.copyfile(made, downloads / made.name)
        (downloads / KEY_FILE).write_text(key(root) + "\n", encoding="utf-8")
        return downloads / made.name


if __name__ == "__main__":
    print(ensure().relative_to(ROOT))
