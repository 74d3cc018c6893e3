"""One reader of each source: bookcheck.model reads mkdocs.yml and scans a page's fences.

Both tests read the Python of bookcheck/, tests/ and overrides/ (and snippets/ for fences) with
``ast``, so comments, docstrings and Markdown written as test data never count.

**mkdocs.yml.** A module *reads* mkdocs.yml when it calls ``open``, ``.open``, ``.read_text``,
``.read_bytes``, ``yaml.load`` (or ``safe_load``, ``full_load``, ``unsafe_load``) or mkdocs'
``load_config`` on an expression that holds the string literal ``"mkdocs.yml"`` (a path ending
in it), directly or through a name the module binds to such an expression (an assignment or a
parameter's default). Calling the model (``config()``, or ``read_config(path)`` for another
project's mkdocs.yml), writing a config (``write_text``, an ``INHERIT:`` line of a fixture),
passing its path to ``mkdocs build`` and naming it in text are not reads. Only
bookcheck/model.py (mkdocs' own loader) and bookcheck/versions.py (the standard library: it runs
before the venv with mkdocs exists) read it, and each function of ``TEXT_READERS``, which
checks how the text is written, not a value.

**Fences.** A module *scans for fence openers* when it calls a function of ``re`` with a
pattern (a literal, or a name the module binds to one) that holds three backticks or three
tildes, literally, escaped (``\\```) or as a repeat (`` `{3 ``, ``~{3``). Only bookcheck/model.py
does (``Page.fences``), and this module, whose pattern finds such regexes in Python source.
Markdown in strings (fixtures, generated cells) is not a pattern and does not count; a string
method such as ``startswith`` is not a regex and is not counted.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READERS_OF_CONFIG = {"bookcheck/model.py", "bookcheck/versions.py"}
# (module, function): why it reads the text of mkdocs.yml rather than a value of it
TEXT_READERS = {
    ("tests/test_site_a11y.py", "test_site_url_defaults_to_the_local_address_and_is_published_from_one_place"):
        "site_url's !ENV default is how the text is written; the loaded value depends on SITE_URL",
}
READ_CALLS = {"open", "read_text", "read_bytes", "load", "safe_load", "full_load", "unsafe_load", "load_config"}
# the model, and this module: its FENCE_PATTERN finds fence regexes in Python source, not in pages
FENCE_SCANNERS = {"bookcheck/model.py", "tests/test_one_reader.py"}
RE_CALLS = {"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
FENCE_PATTERN = re.compile(r"```|~~~|(?:\\`){3}|(?:\\~){3}|`\{3|~\{3")


def _name(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bindings(tree: ast.AST) -> list[tuple[str, ast.expr]]:
    """(name, value) of every assignment and parameter default of a module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(t.id, node.value) for t in targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = args.posonlyargs + args.args
            found += [(a.arg, d) for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)]
            found += [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return found


def _calls_in_functions(tree: ast.AST):
    """(call, name of the innermost enclosing function or None) of every call of a module."""
    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call):
                yield child, inner
            yield from visit(child, inner)

    yield from visit(tree, None)


def config_reads(source: str) -> list[tuple[int, str | None]]:
    """(line, enclosing function) of every read of mkdocs.yml in a module's source (rule above)."""
    tree = ast.parse(source)

    def is_config_path(node):
        return any(s.endswith("mkdocs.yml") for s in _strings(node))

    paths = {name for name, value in _bindings(tree) if is_config_path(value)}
    found = []
    for call, function in _calls_in_functions(tree):
        if _name(call.func) not in READ_CALLS:
            continue
        parts = [*call.args, *(k.value for k in call.keywords)]
        if isinstance(call.func, ast.Attribute):
            parts.append(call.func.value)
        if any(is_config_path(p) or _names(p) & paths for p in parts) and (call.lineno, function) not in found:
            found.append((call.lineno, function))  # once per line: yaml.load(path.read_text()) is one read
    return found


def fence_scans(source: str) -> list[int]:
    """Lines of every regex call of a module whose pattern holds a fence opener (rule above)."""
    tree = ast.parse(source)
    constants = {name: value.value for name, value in _bindings(tree)
                 if isinstance(value, ast.Constant) and isinstance(value.value, str)}
    found = []
    for call, _ in _calls_in_functions(tree):
        if _name(call.func) not in RE_CALLS or not isinstance(call.func, ast.Attribute) \
                or _name(call.func.value) != "re" or not call.args:
            continue
        pattern = call.args[0]
        texts = _strings(pattern) + ([constants[pattern.id]] if isinstance(pattern, ast.Name) and pattern.id in constants else [])
        if any(FENCE_PATTERN.search(t) for t in texts):
            found.append(call.lineno)
    return found


def modules(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py") if ".venv" not in p.parts)


def test_only_the_model_reads_mkdocs_yml():
    files = modules("bookcheck", "bookbuild", "tools", "tests", "overrides")
    assert len(files) > 50
    readers, unused = [], set(TEXT_READERS)
    for path in files:
        name = path.relative_to(ROOT).as_posix()
        for line, function in config_reads(path.read_text(encoding="utf-8")):
            if name in READERS_OF_CONFIG:
                continue
            if (name, function) in TEXT_READERS:
                unused.discard((name, function))
                continue
            readers.append(f"{name}:{line} ({function or 'module level'})")
    assert not readers, ("mkdocs.yml read outside bookcheck/model.py: use bookcheck.model.config() or its "
                         "helpers (nav_pages, plugin_config, extension_config, markdown_extensions):\n"
                         + "\n".join(readers))
    assert not unused, f"TEXT_READERS names functions that no longer read mkdocs.yml: {sorted(unused)}"


def test_only_the_model_scans_for_fence_openers():
    files = modules("bookcheck", "bookbuild", "tools", "tests", "overrides", "snippets")
    assert fence_scans((ROOT / "bookcheck" / "model.py").read_text(encoding="utf-8")), "the model's scanner was not found"
    scanners = [f"{path.relative_to(ROOT).as_posix()}:{line}" for path in files
                if path.relative_to(ROOT).as_posix() not in FENCE_SCANNERS
                for line in fence_scans(path.read_text(encoding="utf-8"))]
    assert not scanners, ("a regex for fence openers outside bookcheck/model.py: read the page model's "
                          "fences (Page.parse(path).fences) instead:\n" + "\n".join(scanners))


@pytest.mark.parametrize("source, expected", [
    ('text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")\n', [(1, None)]),
    ('def f():\n    with open(ROOT / "mkdocs.yml") as h:\n        return h.read()\n', [(2, "f")]),
    ('import yaml\ndef f():\n    return yaml.safe_load(Path("mkdocs.yml").read_bytes())\n', [(3, "f")]),
    ('CONFIG = ROOT / "mkdocs.yml"\ndef f():\n    return CONFIG.read_text()\n', [(3, "f")]),
    ('def nav(config=ROOT / "mkdocs.yml"):\n    return yaml.load(open(config), Loader=Loader)\n', [(2, "nav")]),
    # the model's reader, given another project's mkdocs.yml, is the model
    ('def parent(checkout):\n    return model.read_config(checkout / "mkdocs.yml")\n', []),
    # not reads: a comment, a docstring, a write, a path given to mkdocs, a fixture's INHERIT line
    ('# (ROOT / "mkdocs.yml").read_text()\n"""open(mkdocs.yml)"""\n', []),
    ('(tmp / "mkdocs.yml").write_text(f"INHERIT: {ROOT / \'mkdocs.yml\'}")\n', []),
    ('subprocess.run(["mkdocs", "build", "-f", str(ROOT / "mkdocs.yml")])\n', []),
    ('(ROOT / "pyproject.toml").read_text()\n', []),
])
def test_what_counts_as_reading_mkdocs_yml(source, expected):
    assert config_reads(source) == expected


@pytest.mark.parametrize("source, expected", [
    ('import re\nFENCE = re.compile(r"^([ \\t]*)```mermaid")\n', [2]),
    ('import re\nOPENER = r"^\\s*(`{3,}|~{3,})"\nm = re.match(OPENER, line)\n', [3]),
    ('import re\nre.search(r"^~~~", line)\n', [1 + 1]),
    ('import re\nre.findall(r"^\\`\\`\\`python", text)\n', [2]),
    # not scans: Markdown written as data, a regex without a fence, a string method
    ('page.write_text("# A\\n\\n```python\\nx = 1\\n```\\n")\n', []),
    ('import re\nre.compile(r"<!--\\s*op-table\\s*-->")\n', []),
    ('line.startswith("```")\n', []),
])
def test_what_counts_as_scanning_for_fences(source, expected):
    assert fence_scans(source) == expected
