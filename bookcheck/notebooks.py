"""The notebooks of docs/notebooks/: executed with their outputs stored in the repository, and
executed again to prove those outputs current.

The site shows each notebook as committed: mkdocs-jupyter does not execute them
(``execute: false`` in mkdocs.yml), so serving the book needs no torch. The outputs are written by

    python -m bookcheck.notebooks [NOTEBOOK ...]   execute, store the outputs (default: every one)

(``make notebooks`` runs the generator first). ``differences(stored, executed)`` is what the
tests check: the stored outputs against those of a fresh execution, execution counts, timings
and memory addresses aside. Each notebook is executed once per test run: a generated one
(bookbuild.notebook_gen) as a reader runs it, downloaded from the built site into a venv of its
own (tests/test_notebooks_anywhere.py); any other with ``stale(path)``, which executes it here
(tests/test_notebook_outputs.py). Tests of what a notebook prints read its stored outputs.

An execution is cached per content key. The key is the notebook's sources (not its stored
outputs), the data files in its folder, every file under
``snippets/`` (a notebook may load any of them: a workshop notebook loads its task with
importlib), ``constraints.txt`` and ``pyproject.toml``, and the torch and Python versions: a
change to any of them executes the notebook afresh. Executed notebooks are kept in
``.cache/notebooks/`` (ignored by git; a test run with --fresh or under CI=true keeps its own:
cache_dir). A notebook whose execution fails fails again from the cache, with the same message,
until its key changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
from pathlib import Path

from . import ROOT

CACHE = ROOT / ".cache" / "notebooks"


# The first words of a generated notebook's set-up cell (bookbuild.notebook_gen.SETUP, which
# installs, imports and prints torch's version): the general-sentence scan (bookcheck.claims)
# and the site's search (overrides/rewrites.py, which keeps the cell out) know the cell by them.
SETUP_MARK = "# Set-up:"


def cache_dir() -> Path:
    """Where executions are kept: .cache/notebooks/, or BOOK_NOTEBOOK_CACHE. A test run that
    reuses nothing from earlier runs (--fresh, CI=true) points it at a folder of its own, so its
    notebook tests still share one execution per notebook but none from before."""
    return Path(os.environ.get("BOOK_NOTEBOOK_CACHE") or CACHE)


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


def sources(path: Path) -> str:
    """The notebook's cells (type and source) and metadata: what executing it reads of it."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = [[c["cell_type"], "".join(c["source"])] for c in nb["cells"]]
    return json.dumps({"cells": cells, "metadata": nb.get("metadata", {})}, sort_keys=True)


def content_key(path: Path) -> str:
    h = hashlib.sha256()
    h.update(sources(path).encode())
    for dep in key_inputs(path):
        h.update(str(dep).encode() + b"\0" + dep.read_bytes())
    h.update(versions().encode())
    return h.hexdigest()[:32]


@contextlib.contextmanager
def _locked(key):
    import fcntl  # here, not at the top: the site's build hooks import this module (SETUP_MARK)

    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the build and the tests may ask at the same time
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def kernel_config():
    """nbclient's configuration for one kernel that listens on Unix sockets in a temporary folder
    of its own, not on TCP ports: kernels start side by side in a test run, and a TCP port found
    free can be taken by another process before the kernel binds it ("Address already in use").
    The folder's path is absolute because the kernel runs in its notebook's folder."""
    import tempfile

    from traitlets.config import Config

    with tempfile.TemporaryDirectory(prefix="kernel-") as folder:
        config = Config()
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = os.path.join(folder, "ipc")
        yield config


def execute(path: Path, timeout: int = 120):
    """The notebook at ``path``, executed (from the cache when its key is unchanged).

    Raises nbclient's CellExecutionError when a cell fails.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    path = Path(path)
    key = content_key(path)
    done = cache_dir() / f"{path.stem}-{key}.ipynb"
    failed = cache_dir() / f"{path.stem}-{key}.failed.json"
    with _locked(key):
        if done.is_file():
            return nbformat.read(done, as_version=4)
        if failed.is_file():
            error = json.loads(failed.read_text(encoding="utf-8"))
            raise CellExecutionError(error["traceback"], error["ename"], error["evalue"])
        nb = without_outputs(nbformat.read(path, as_version=4))
        try:
            with kernel_config() as config:
                NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                               config=config, resources={"metadata": {"path": str(path.parent)}}).execute()
        except CellExecutionError as exc:
            failed.write_text(json.dumps({"traceback": exc.traceback, "ename": exc.ename, "evalue": exc.evalue}),
                              encoding="utf-8")
            raise
        tmp = done.with_suffix(".tmp")
        nbformat.write(nb, tmp)
        tmp.replace(done)
        for old in [*cache_dir().glob(f"{path.stem}-*.ipynb"), *cache_dir().glob(f"{path.stem}-*.failed.json")]:
            if old != done:
                old.unlink(missing_ok=True)
        return nb


# ------------------------------------------------------------------ stored outputs

ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")


def without_outputs(nb):
    """A copy of ``nb`` with no outputs and no execution counts (what the generator writes)."""
    import copy

    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
    return nb


def with_outputs(committed, executed):
    """``committed`` with the outputs and execution counts of ``executed`` (the same cells);
    the committed metadata is kept (an execution adds the kernel's Python version to it), and a
    stream's consecutive chunks are stored as one output (joined_streams), so that storing an
    unchanged notebook again writes the same file."""
    import copy

    import nbformat

    nb = copy.deepcopy(committed)
    for cell, done in zip(nb.cells, executed.cells, strict=True):
        if cell.cell_type == "code":
            cell.outputs = [nbformat.from_dict(o) for o in joined_streams(done.outputs)]
            cell.execution_count = done.execution_count
            cell.metadata.pop("execution", None)
    return nb


def outputs(nb) -> list:
    """What a reader sees of each code cell's outputs: no execution counts, no metadata, memory
    addresses as 0x..., a stream's consecutive chunks joined, so that two executions of an
    unchanged notebook compare equal."""
    def plain(value):
        if isinstance(value, str):
            return ADDRESS.sub("0x...", value)
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items() if k not in {"execution_count", "metadata"}}
        return value

    return [plain(joined_streams(c.outputs)) for c in nb.cells if c.cell_type == "code"]


def joined_streams(outs) -> list[dict]:
    """A cell's outputs with consecutive prints to one stream as one output: where the kernel
    splits them depends on timing, not on what the cell prints."""
    joined = []
    for o in outs:
        o = dict(o)
        if o.get("output_type") == "stream" and joined and joined[-1].get("output_type") == "stream" \
                and joined[-1].get("name") == o.get("name"):
            joined[-1] = dict(joined[-1], text="".join((joined[-1]["text"], o["text"])))
        else:
            joined.append(o)
    return joined


def differences(stored, executed) -> list[str]:
    """How the outputs stored in notebook ``stored`` differ from those of ``executed``, an
    execution of the same cells (empty: they are current), one text per code cell that differs."""
    import difflib

    problems = []
    code = [c for c in stored.cells if c.cell_type == "code"]
    for i, (cell, mine, theirs) in enumerate(zip(code, outputs(stored), outputs(executed), strict=True)):
        if mine != theirs:
            diff = difflib.unified_diff(json.dumps(mine, indent=1).splitlines(), json.dumps(theirs, indent=1).splitlines(),
                                        "stored", "executed", lineterm="", n=1)
            first = cell.source.splitlines()[0] if cell.source else ""
            problems.append(f"code cell {i + 1} ({first!r}):\n" + "\n".join(diff))
    return problems


# ------------------------------------------------------------------ the second configuration


def shown_text(outputs_of_cell: list) -> str:
    """What a code cell shows as text, in order: its stdout and the text of its result."""
    parts = []
    for o in outputs_of_cell:
        if o.get("output_type") == "stream" and o.get("name") == "stdout":
            parts.append(o["text"])
        elif o.get("output_type") == "execute_result":
            parts.append(o.get("data", {}).get("text/plain", "") + "\n")
    return "".join(parts)


def displayed(source: str) -> str:
    """``source`` with its last statement, when that is an expression, printed as a notebook shows
    it (the repr of a value that is not None): the kernel's display, for a run by ``exec``."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source  # the run reports it
    if not tree.body or not isinstance(tree.body[-1], ast.Expr) or source.rstrip().endswith(";"):
        return source
    last = tree.body[-1]
    lines = source.splitlines()
    head = "\n".join(lines[:last.lineno - 1] + [lines[last.lineno - 1][:last.col_offset]])
    expression = ast.get_source_segment(source, last)
    return (f"{head}__shown__ = ({expression})\n"
            "if __shown__ is not None:\n    print(repr(__shown__))\n")


def cell_blocks(path: Path) -> list:
    """The notebook's code cells as one chain of python blocks (bookcheck.model.Block), each
    with the text its stored outputs show."""
    import nbformat

    from .model import Block, kind_of

    nb = nbformat.read(Path(path), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    blocks = []
    for i, (cell, outs) in enumerate(zip(code, outputs(nb), strict=True)):
        block = Block(Path(path), i + 1, "python", displayed(cell.source), shown_text(outs) or None, cont=i > 0)
        block.kind = kind_of(block)
        blocks.append(block)
    return blocks


def second_configuration(path: Path) -> list[str]:
    """How what the notebook's code cells print under the harness's second configuration (the
    second seed, on torch's plain kernels and MKL's path for any x86-64 CPU: bookcheck.run.RUNS)
    differs from the outputs stored in it (empty: it prints the same), one text per cell. Its
    cells run in order in one namespace, in the block worker of that configuration, as a page's
    chain of blocks does: a value a cell prints that is rounding noise, which a reader's CPU
    prints otherwise, fails here as on a page."""
    import difflib

    from .run import RUNS, SECOND
    from .run import run_chain

    blocks = cell_blocks(path)
    seed, kernels = RUNS[1]
    results, _ = run_chain(blocks, list(range(len(blocks))), seed, False, kernels)
    problems = []
    for block, (shown, error) in zip(blocks, results):
        where = f"code cell {block.lineno}"
        if error:
            problems.append(f"{where} failed on {SECOND}, seed {seed}:\n{error}")
        elif shown != (block.expected_output or ""):
            diff = difflib.unified_diff((block.expected_output or "").splitlines(), shown.splitlines(),
                                        "stored", "second configuration", lineterm="", n=1)
            problems.append(f"{where} prints something else on {SECOND}, seed {seed}: print a bound, "
                            "a rounded value or an order of magnitude instead of rounding noise:\n" + "\n".join(diff))
    return problems


def stale(path: Path) -> list[str]:
    """How the outputs stored in the notebook at ``path`` differ from a fresh execution of it
    (empty: they are current). Raises CellExecutionError when a cell fails."""
    import nbformat

    return differences(nbformat.read(Path(path), as_version=4), execute(Path(path)))


def store(path: Path) -> bool:
    """Execute the notebook at ``path`` and write its outputs into it; True if the file changed."""
    import nbformat

    path = Path(path)
    committed = nbformat.read(path, as_version=4)
    text = nbformat.writes(with_outputs(committed, execute(path))) + "\n"
    if text == path.read_text(encoding="utf-8"):
        return False
    path.write_text(text, encoding="utf-8")
    return True


def main(argv=None):
    """Execute the book's notebooks and store their outputs in them (default: every notebook of
    docs/notebooks/)."""
    import argparse
    from concurrent.futures import ThreadPoolExecutor

    from bookcheck import own_workshop_record

    cli = argparse.ArgumentParser(prog="python -m bookcheck.notebooks", description=main.__doc__)
    cli.add_argument("notebooks", nargs="*", type=Path)
    paths = cli.parse_args(argv).notebooks or sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))
    own_workshop_record()  # the workshop notebooks check their starters; the kernels inherit it
    with ThreadPoolExecutor(4) as pool:  # kernel start-up and the torch import dominate
        for path, changed in zip(paths, pool.map(store, paths)):
            print(f"{path}: {'outputs written' if changed else 'outputs current'}")


if __name__ == "__main__":
    main()
