"""A page as the checks see it: its code blocks, each with its markers and its kind.

The page is read once by the page model (bookcheck.model.Page); a Block is one code fence the
checks run, compare or account for, with its output fence. ``parse_page(path)`` and
``parse_text(text, path)`` give a page's blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT, markers, rel
from .model import TAB, Fence, Page, config, extension_config  # noqa: F401 - re-exported

KINDS = ("run", "skipped", "diagram", "checked diagram", "version output", "unaccounted")


@dataclass
class Block:
    path: Path
    lineno: int
    syntax: str
    code: str  # as written in the page (snippet lines not expanded)
    expected_output: str | None
    marks: list = field(default_factory=list)  # markers.Mark
    cont: bool = False
    kind: str = ""  # one of KINDS, computed once by parse_page
    # What the block prints on another verified torch version, where the page shows it
    # (a "version output" fence after the output fence; bookcheck/versions.py).
    outputs: dict = field(default_factory=dict)
    fence: Fence | None = field(default=None, repr=False, compare=False)  # its node in the page model
    output_fence: Fence | None = field(default=None, repr=False, compare=False)  # its output's node

    def output_for(self, version: str) -> str | None:
        """The output the page shows for ``version`` (the pinned output where it shows no other)."""
        return self.outputs.get(version, self.expected_output)

    @property
    def where(self) -> str:
        return f"{rel(self.path)}:{self.lineno}"

    def mark(self, name):
        found = [m for m in self.marks if m.name == name]
        return found[0] if found else None

    @property
    def runnable(self) -> bool:
        return self.syntax in markers.RUN_SYNTAX


def kind_of(block: Block) -> str:
    """The one classification of a fence (guard, collector, stamp and build use it)."""
    if block.mark("skip") is not None:
        return "skipped"
    if block.mark("output_on") is not None and block.syntax not in markers.RUN_SYNTAX | markers.DIAGRAM_SYNTAX:
        return "version output"
    if block.syntax in markers.RUN_SYNTAX:
        return "run"
    if block.syntax in markers.DIAGRAM_SYNTAX:
        if any(block.mark(m) for m in markers.DIAGRAM_MARKS):
            return "checked diagram"
        return "diagram"
    return "unaccounted"


def parse_text(text: str, path: Path) -> list[Block]:
    """Every code block of a page's text (bookcheck.model.Page.blocks)."""
    return Page.from_text(text, path).blocks


def parse_page(path: Path) -> list[Block]:
    return Page.parse(path).blocks


def fences(lines: list[str]) -> list[tuple[int, int]]:
    """(index of the opening line, index of the closing line) of every fence of a page's lines,
    as the page model reads them."""
    return [(f.start, f.end) for f in Page.from_lines(lines).fences]


def outside_fences(lines: list[str]) -> list[bool]:
    """For each line: True when it is prose (not inside a fence, nor a fence's own line)."""
    return Page.from_lines(lines).prose


def expand_snippets(code: str) -> str:
    """Expand ``--8<--`` lines with pymdownx.snippets, configured as in mkdocs.yml."""
    if "--8<--" not in code:
        return code
    import markdown

    cfg = extension_config("pymdownx.snippets")
    cfg["base_path"] = [str(ROOT / p) for p in cfg.get("base_path", ["."])]
    md = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": cfg})
    lines = md.preprocessors["snippet"].run(code.splitlines())
    return "\n".join(lines) + "\n"


def snippet_files(code: str) -> list[Path]:
    """The files a block's ``--8<--`` lines include (for test-page and the notebook key)."""
    found = []
    for name in re.findall(r'--8<--\s+"([^":]+)', code):
        found.append(ROOT / name)
    return found
