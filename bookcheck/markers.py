"""The one registry of the markers a page may carry.

A new marker is added here (name, where it applies, what it means); the guard, the pytest
plugin (marker help and collection), the page stamp and the build hook (which strips marker
comments from the HTML) all derive from this table. Its check goes in the module named by
``check`` (run.py for run markers, diagrams.py for diagram markers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

RUN_SYNTAX = frozenset({"python", "sh", "bash"})
DIAGRAM_SYNTAX = frozenset({"mermaid"})
MIN_REASON = 12  # characters of a skip reason; "because" alone is not a reason


@dataclass(frozen=True)
class Marker:
    name: str
    applies_to: str  # "run" (python/sh/bash), "diagram" (mermaid), "output" (an output fence) or "any"
    help: str
    counted_as: str | None = None  # the stamp's counter for blocks carrying it


MARKERS = {
    m.name: m
    for m in (
        Marker("skip", "any", 'skip(reason="..."): not run; the reason is shown on the page\'s stamp', "skipped"),
        Marker("raises", "run", 'raises("TypeName", match="regex"): the block must raise exactly that, and shows it',
               "expected errors"),
        Marker("warns", "run", 'warns("TypeName", match="regex"): the block must emit that warning',
               "expected warnings"),
        Marker("cont", "run", "the block continues the previous python block of the page (same namespace)"),
        Marker("graph_of", "diagram", 'graph_of("name"): a mermaid diagram that must equal the autograd graph of name',
               "diagrams checked against code"),
        Marker("output_on", "output",
               'output_on("2.14.1"): what the block above prints on that torch version, where it differs from '
               'the pinned version (the two outputs in content tabs; bookcheck/versions.py)', "outputs of another torch"),
        Marker("diagram_from", "diagram",
               'diagram_from("expr"): a mermaid diagram that must equal expr, evaluated after the block above',
               "diagrams checked against code"),
    )
}
KNOWN_MARKS = frozenset(MARKERS)
DIAGRAM_MARKS = tuple(n for n, m in MARKERS.items() if m.applies_to == "diagram")
RUN_MARKS = tuple(n for n, m in MARKERS.items() if m.applies_to == "run")

# Table markers: an HTML comment on its own line before a Markdown table, naming the check
# that reads the table from the page model (bookcheck.model.Page.tables). Every one is here: the
# guard rejects any other comment of this form, and the build hook removes all of them from the
# HTML (MARKER_LINE). A generated slot (``slot``) is a marker with no table under it: a build
# hook writes the table in its place (``generate``: that function, given the page and every page).
@dataclass(frozen=True)
class TableMarker:
    comment: str  # the text between <!-- and -->
    checked_by: str  # what the check does, for a reader of this table
    check: str | None = None  # "module:function", called with (page context, table); raises HarnessError
    counter: str | None = None  # the stamp's counter of these tables
    slot: bool = False  # a generated slot: no table follows the marker in the Markdown
    generate: str | None = None  # "module:function(path, pages) -> Markdown" that fills a slot


CHECKED = "tables checked against torch"
TABLE_MARKERS = {
    t.comment: t
    for t in (
        TableMarker("hand-trace: forward", "bookcheck.tables (every value recomputed with torch)",
                    "bookcheck.tables:check_forward", "hand-trace tables"),
        TableMarker("hand-trace: backward", "bookcheck.tables (every local derivative, upstream gradient and product)",
                    "bookcheck.tables:check_backward_table", "hand-trace tables"),
        TableMarker("forward-trace", "snippets.forward_trace (every value and tangent on dual tensors)",
                    "bookcheck.table_kinds:forward_trace", CHECKED),
        TableMarker("op-table", "bookcheck.table_kinds (each rule's gradient against autograd)",
                    "bookcheck.table_kinds:op_table", CHECKED),
        TableMarker("compat-table", "bookcheck.table_kinds (each cell against what torch does)",
                    "bookcheck.table_kinds:compat_table", CHECKED),
        TableMarker("broadcast-table", "bookcheck.table_kinds (each shape pair with torch.broadcast_shapes)",
                    "bookcheck.table_kinds:broadcast_table", CHECKED),
        TableMarker("torch-differences", "overrides/hooks.py (writes the table of bookbuild.indexes.differences here)",
                    slot=True, generate="bookbuild.indexes:differences_table"),
        TableMarker("error-index", "overrides/hooks.py (writes the list of bookbuild.indexes.errors here)",
                    slot=True, generate="bookbuild.indexes:error_index"),
        TableMarker("api-index", "overrides/hooks.py (writes the table of bookbuild.apis.entries here)",
                    slot=True, generate="bookbuild.apis:api_index"),
        TableMarker("section-pages", "overrides/site_hooks.py (writes the list of the nav section's pages here)",
                    slot=True),
    )
}


# The checks of a page, one entry per kind of node: the dispatcher (bookcheck.check.page_checks)
# iterates this table, and the stamp (bookcheck.counts) counts each entry's nodes under its
# counter. A new kind of check is an entry here and its module's function, called with the page's
# context and one node, returning a PageCheck (or None: nothing to check on that node).
@dataclass(frozen=True)
class Check:
    node: str  # "page", "fence", "table" or "heading" (bookcheck.model.Page)
    syntax: tuple  # a fence's info strings, a table's marker comment; () for any
    check: str  # "module:function"
    counter: str | None = None  # the stamp's counter of the nodes it checks (fences: bookcheck.counts)


@dataclass
class PageCheck:
    """What a check function returns for one node: a named check of the page (the pytest plugin
    makes each one a test item)."""
    name: str  # "guard", "line 12", "line 30 diagram", "line 40 backward table"
    run: Callable[[], None]  # raises HarnessError on failure
    skip: str | None = None  # the reason a reader sees, for a skipped block
    line: int = 0  # where it sits in the page (1-based; 0: the whole page), for page order


CHECKS = (
    Check("page", (), "bookcheck.guard:page_check"),
    Check("fence", tuple(sorted(RUN_SYNTAX)), "bookcheck.run:page_check"),
    Check("fence", tuple(sorted(DIAGRAM_SYNTAX)), "bookcheck.diagrams:page_check"),
    *(Check("table", (t.comment,), t.check, t.counter) for t in TABLE_MARKERS.values() if t.check),
    Check("heading", (), "bookcheck.headings:page_check", "headings with distinct anchors"),
)


def resolve(dotted: str):
    """``"module:function"`` -> the function."""
    import importlib

    module, _, name = dotted.partition(":")
    return getattr(importlib.import_module(module), name)


TABLE_KINDS = ("forward", "backward")
TABLE_MARKER = re.compile(r"\s*<!--\s*hand-trace:\s*(" + "|".join(TABLE_KINDS) + r")\s*-->")
TABLE_MARKER_LOOSE = re.compile(r"<!--\s*hand-trace")
# A comment alone on its line that looks like a marker (a word, maybe "word: word").
MARKER_LIKE = re.compile(r"^\s*<!--\s*((?!pytest)[A-Za-z][\w-]*(?::\s*[\w-]+)?)\s*-->\s*$")

# Every marker comment on a line of its own (the build hook removes these before rendering).
MARKER_LINE = re.compile(
    r"^[ \t]*<!--\s*(?:pytest[-.].*?|"
    + "|".join(re.escape(c).replace(r"\ ", r"\s*") for c in TABLE_MARKERS)
    + r")\s*-->[ \t]*\n", re.M)
CONT = re.compile(r"<!--[-\s]*pytest-codeblocks:\s*cont[-\s]*-->")


@dataclass(frozen=True)
class Mark:
    """One parsed marker: ``raises("RuntimeError", match="x")`` -> name, args, kwargs."""

    name: str
    args: tuple = ()
    kwargs: dict | None = None

    def __post_init__(self):
        if self.kwargs is None:
            object.__setattr__(self, "kwargs", {})

    @property
    def reason(self) -> str:
        return str(self.kwargs.get("reason") or (self.args[0] if self.args else "")).strip()


class _MarkNamespace:
    """Stands in for ``pytest.mark`` when a marker's text is evaluated (no pytest needed)."""

    def __getattr__(self, name):
        return _Bare(name)  # ``pytest.mark.name``, called or not

    def __repr__(self):
        return "pytest.mark"


class _Bare(Mark):
    def __call__(self, *args, **kwargs):
        return Mark(self.name, args, kwargs)


class _Pytest:
    mark = _MarkNamespace()


def eval_mark(text: str) -> Mark:
    """``pytest.mark.raises("E", match="m")`` -> Mark; raises ValueError if unreadable."""
    import sys

    value = eval(text, {"pytest": _Pytest(), "sys": sys})  # noqa: S307 - a page's own marker
    if not isinstance(value, Mark):
        raise ValueError(f"{text!r} is not a marker")
    return Mark(value.name, tuple(value.args), dict(value.kwargs))


def pytest_marker_lines():
    """Lines for pytest's ``markers`` ini value (the plugin registers them)."""
    return [f"{name}: {m.help}" for name, m in MARKERS.items() if name != "skip"]
