"""Every file and every object of the project that its prose names exists.

The prose is what a reader or a maintainer reads as text: the README, every page of docs/, the
Makefile, CI's files, mkdocs.yml, the reviews of general sentences, the site's scripts, styles
and templates and the pin files whole, and the docstrings and comments of every Python file
(the code itself is run by the other tests). A file is named by its path from the repository's
root (``bookcheck/results.py``, ``docs/part1/*.md``); an object by its dotted name
(``bookcheck.results.cache_entry``), resolved by importing the longest module it starts with. A
path git ignores (``docs/downloads``, which the build makes) counts as there; one with a
placeholder in capitals (``docs/notebooks/w-TASK.ipynb``) is not checked.
Names that are not the project's (placeholders of examples, other projects' paths) are listed in
NOT_OURS with the reason. A renamed function, a moved file or a removed test left named in
prose fails here with its file and line.
"""

from __future__ import annotations

import ast
import glob
import importlib
import inspect
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

from bookcheck import ROOT, results

WHOLE = ("README.md", "Makefile", ".ci/run", "mkdocs.yml", ".github/workflows/publish.yml")
READ_WHOLE = (".js", ".css", ".html", ".toml", ".txt")  # the site's assets and templates, pins, reviews
PATH = re.compile(r"(?<![\w/.$-])((?:docs|bookcheck|bookbuild|tools|tests|snippets|overrides|\.ci|\.github)/[\w./*-]*[\w*])(?![\w<{-])")
NAME = re.compile(r"(?<![\w./-])((?:bookcheck|bookbuild|tools|snippets)(?:\.\w+)+)(?![\w<{/-])")
FILE_SUFFIX = re.compile(r"\.(py|json|jsonl|md|txt|toml|yml|html|js|css|ipynb|whl|apkg|csv)$")

NOT_OURS = {
    "snippets/module.py": "README's example of an include line (--8<-- \"snippets/module.py\")",
    "docs/page.md": "the form of a review's shown_by (\"docs/page.md#anchor\")",
    "docs/part1/x.md": "round_trip's example of a page name",
    "docs/x/y.md": "tools.related's example of a page argument",
    "tests/test_x.py": "tools.related's example of what it prints",
    "snippets/x.py": "an example file name in a print hook's test",
    "snippets.x": "an example module name in apis.py's comment",
    "docs/notebooks/0N-*.ipynb": "0N stands for the two digits of Part IV's notebooks",
    "docs/source/*.md": "PyTorch's documentation source (torch_docs.py reads it)",
    "docs/source": "PyTorch's documentation source (apis.md names it)",
    "docs/throttling.md": "Lighthouse's documentation, in its repository",
}


def project_files(root: Path = ROOT) -> list[Path]:
    """The project's files (results.project_files) that hold prose, vendored code and fixtures apart."""
    return [root / f for f in results.project_files(root) if (f.endswith((".py", ".md") + READ_WHOLE) or f in WHOLE)
            and "/vendor/" not in f and not f.startswith("tests/fixtures/")]


def prose(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of what is read as text: a Python file's docstrings and comments,
    any other file whole."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return list(enumerate(text.splitlines(), 1))
    found = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
             if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                found += list(enumerate(doc.splitlines(), node.body[0].lineno))
    return found


def path_exists(name: str, root: Path) -> bool:
    """Whether the path is there, or is one git ignores: made by the build or a run (docs/downloads/
    by the build hook), so a fresh clone has it only after them."""
    if glob.glob(str(root / name)) if "*" in name else (root / name).exists():
        return True
    return any(subprocess.run(["git", "check-ignore", "-q", "--no-index", as_named], cwd=root).returncode == 0
               for as_named in (name, name + "/"))  # as a file, or as a folder


def resolves(name: str) -> bool:
    """Whether a dotted name is an object: the longest module it starts with, then attributes
    (an attribute a class's __init__ assigns, ``self.name = ...``, counts)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if hasattr(obj, attr):
                obj = getattr(obj, attr)
            elif inspect.isclass(obj) and re.search(rf"\bself\.{attr}\b", inspect.getsource(obj)):
                return True
            else:
                return False
        return True
    return False


def unresolved(files: list[Path], root: Path = ROOT) -> list[str]:
    """``file:line: name`` for every path or dotted name in the files' prose that is not there."""
    missing = []
    for path in files:
        where = path.relative_to(root) if path.is_relative_to(root) else path
        for line, text in prose(path):
            for m in PATH.finditer(text):
                name = m.group(1)
                if name not in NOT_OURS and not re.search(r"[A-Z]{3,}", name) and not path_exists(name, root):
                    missing.append(f"{where}:{line}: {name}")
            for m in NAME.finditer(text):
                name = m.group(1)
                if name not in NOT_OURS and not FILE_SUFFIX.search(name) and not resolves(name):
                    missing.append(f"{where}:{line}: {name}")
    return missing


def test_every_file_and_object_the_prose_names_exists():
    files = project_files()
    assert len(files) > 200 and ROOT / "README.md" in files
    assert unresolved(files) == []


def test_every_name_not_ours_still_stands_in_the_prose():
    """An entry of NOT_OURS whose name has left the prose goes too."""
    text = "\n".join(t for path in project_files() for _, t in prose(path))
    assert [name for name in NOT_OURS if name not in text] == []


@pytest.mark.parametrize("line, found", [
    ("see bookcheck/results.py and bookcheck.results.cache_entry", False),
    ("tests/test_*.py, docs/part1/*.md and make's STEP in .cache/verified-STEP.json", False),
    ("bookcheck.model.Page.tables: set in Page.__init__", False),
    ("the wheel in docs/downloads, which the build makes", False),
    ("the list is checked by tests/test_steps.py", True),
    ("axe-core vendored in tests/vendor/axe-core", True),
    ("(bookcheck.results.record_step)", True),
    ("such as snippets.scale.ddp.averaged_gradients;", True),
    ("bookcheck.no_such_module.f", True),
])
def test_a_name_that_is_not_there_is_reported(tmp_path, line, found):
    for suffix, text in ((".md", line), (".py", f'"""{line}"""\n'), (".py", f"x = 1  # {line}\n")):
        path = tmp_path / f"probe{suffix}"
        path.write_text(text, encoding="utf-8")
        assert bool(unresolved([path])) is found, (text, unresolved([path]))


def test_code_is_not_prose():
    """A name in a Python file's code (a string a test writes into a fixture) is not read."""
    assert unresolved([ROOT / "tests" / "test_bookcheck.py"]) == []
    assert "snippets/helper.py" in (ROOT / "tests" / "test_bookcheck.py").read_text(encoding="utf-8")
