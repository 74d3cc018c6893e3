"""A page as the checks see it: its code blocks, each with its markers and its kind.

The page is read once by the page model (bookcheck.model.Page); a Block is one code fence the
checks run, compare or account for, with its output fence. ``parse_page(path)`` and
``parse_text(text, path)`` give a page's blocks.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import ROOT, markers, rel
from .model import KINDS, TAB, Block, Fence, Page, config, extension_config, kind_of  # noqa: F401 - re-exported

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
