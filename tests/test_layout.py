"""The project's layout and the test run's topology, as the README states them.

- bookcheck/ (the verifier), bookbuild/ (the build's products), tools/ (maintainers' commands),
  snippets/ (the reader's package): no import cycle inside or between them, counting imports
  inside functions too; bookcheck imports none of bookbuild, tools or tests; snippets imports
  none of the others.
- tests/ holds tests (test_*.py), conftest.py, fixtures and a few small helpers, nothing a page,
  a hook or a make target runs.
- The test session starts no thread and patches nothing of the standard library: parallel work
  is make's (the steps of bookcheck.steps), and every step names its test files.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bookcheck import ROOT, steps

PACKAGES = ("bookcheck", "bookbuild", "tools", "snippets")
HELPERS = {"harness.py", "pastes.py", "square_variants.py"}  # small helpers the tests import


def modules(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports(name: str, path: Path, known: dict) -> set[str]:
    """The modules of ``known`` that module ``name`` imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    found.add(f"{base}.{alias.name}")
                elif base in known:
                    found.add(base)
    found.discard(name)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def import_graph(root: Path = ROOT, packages=PACKAGES) -> dict[str, set[str]]:
    known = modules(root, packages)
    return {name: imports(name, path, known) for name, path in known.items()}


def test_no_import_cycle_between_modules():
    found = cycles(import_graph())
    print("import cycles:", found or "none")
    assert found == []


def test_the_cycle_check_finds_a_cycle_through_an_import_inside_a_function(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def f():\n    from .a import x\n")
    (package / "c.py").write_text("from pkg import a\n")
    assert cycles(import_graph(tmp_path, ("pkg",))) == [["pkg.a", "pkg.b"]]


def test_packages_import_one_way():
    """snippets <- bookcheck <- bookbuild <- tools (and the hooks and tests import any of them)."""
    allowed = {"snippets": {"snippets"}, "bookcheck": {"bookcheck", "snippets"},
               "bookbuild": {"bookbuild", "bookcheck", "snippets"},
               "tools": {"tools", "bookbuild", "bookcheck", "snippets"}}
    wrong = [(m, i) for m, found in import_graph().items() for i in found
             if i.split(".")[0] not in allowed[m.split(".")[0]]]
    assert wrong == []
    for path in modules(ROOT, ("bookcheck", "bookbuild", "tools", "snippets")).values():
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(?:import|from)\s+(?:tests|conftest|harness|pastes)\b", text, re.M), path


def test_tests_holds_tests_fixtures_and_small_helpers_only():
    others = sorted(p.name for p in (ROOT / "tests").glob("*.py")
                    if not p.name.startswith("test_") and p.name != "conftest.py")
    assert others == sorted(HELPERS)
    for name in HELPERS:
        assert len((ROOT / "tests" / name).read_text(encoding="utf-8").splitlines()) < 100, name
    assert sorted(p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name != "__pycache__") == ["fixtures"]


def _code_strings(path: Path) -> str:
    """The string constants of a Python file's code (docstrings and comments left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return "\n".join(n.value for n in ast.walk(tree)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings)


def _not_comments(path: Path) -> str:
    return "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#"))


def test_no_hook_or_make_target_runs_a_file_under_tests():
    """What the build and the make targets run (not what their comments name) is outside tests/;
    make selects a step's tests with --step (bookcheck.steps)."""
    texts = {p: _not_comments(p) for p in (ROOT / "Makefile", ROOT / ".ci" / "run", ROOT / "mkdocs.yml")}
    texts |= {p: _code_strings(p) for p in sorted((ROOT / "overrides").glob("*.py"))}
    found = {str(p.relative_to(ROOT)): re.findall(r"\btests/[\w./-]*", t) for p, t in texts.items()}
    assert {p: f for p, f in found.items() if f} == {}


def threads_started(path: Path) -> list[str]:
    """What in a Python file's code starts a thread, changes a thread's priority or patches
    subprocess.Popen: imports of threading or concurrent.futures, setpriority calls, an
    assignment to Popen.__init__ (strings and comments do not count)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in {"threading", "concurrent"}]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in {"threading", "concurrent"}:
            found.append(node.module)
        elif isinstance(node, ast.Attribute) and node.attr == "setpriority":
            found.append("setpriority")
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "__init__"
                                                  and "Popen" in ast.unparse(t) for t in node.targets):
            found.append("Popen.__init__ =")
    return found


def test_the_test_session_starts_no_thread_and_patches_no_standard_library():
    """The plugin, the conftest, the tests and what they run in-process start no thread (a block
    worker is a process; a server is a process); `make notebooks`' command line may."""
    files = [*sorted((ROOT / "tests").glob("*.py")), *sorted((ROOT / "bookcheck").glob("*.py"))]
    found = {str(p.relative_to(ROOT)): threads_started(p) for p in files}
    found = {p: f for p, f in found.items() if f}
    # bookcheck.notebooks' main() (make notebooks, a command line) runs its kernels from a pool
    assert found == {"bookcheck/notebooks.py": ["concurrent.futures"]}
    text = (ROOT / "bookcheck" / "notebooks.py").read_text(encoding="utf-8")
    assert "ThreadPoolExecutor" not in text[: text.index("def main(")]


@pytest.mark.parametrize("code", ["import threading", "from concurrent.futures import ThreadPoolExecutor",
                                  "def f():\n    from threading import Thread",
                                  "os.setpriority(0, 0, 10)", "subprocess.Popen.__init__ = patched"])
def test_the_thread_check_catches(tmp_path, code):
    path = tmp_path / "m.py"
    path.write_text(f"x = 1\n{code}\ns = 'import threading'  # import threading\n")
    assert len(threads_started(path)) == 1


def test_every_step_names_files_that_exist_and_make_runs_the_test_steps():
    for step, files in steps.STEPS.items():
        for name in files:
            assert (ROOT / name).is_file(), (step, name)
    assert steps.step_of("docs/part1/forks.md::line 12") == "pages"
    assert steps.step_of("tests/test_site.py::test_mkdocs_build_strict") == "site"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    listed = re.search(r"^STEPS\s*:=\s*(.+)$", makefile, re.M)
    assert listed and sorted(listed.group(1).split()) == sorted(steps.TEST_STEPS)
    for step in steps.TEST_STEPS:
        assert re.search(rf"^(?:step-\S+ )*step-{step}\b[^:]*:", makefile, re.M), step
    with pytest.raises(ValueError, match="pass one of pages, site"):
        steps.check_step("browser")


def test_no_test_module_has_a_scheduling_hook():
    """No start_early protocol, no reordering: a module's tests run in pytest's order."""
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert not [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "start_early"], path
    plugin = (ROOT / "bookcheck" / "plugin.py").read_text(encoding="utf-8")
    assert "start_early" not in plugin and "SITE_TESTS" not in plugin
