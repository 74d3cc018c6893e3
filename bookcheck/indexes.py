"""Pages generated from the page model when the site is built, so they cannot drift from the
pages they index.

    errors(pages)          every error and warning a block of the book demonstrates: its type,
                           the message's line as the page shows it (for a warning, the part of
                           the message the block asserts), every block that shows it, and the
                           cause and fix of the failure table's row where it has one
    error_index(page, pages)   that list as Markdown, grouped by type (<!-- error-index -->)
"""

from __future__ import annotations

import os.path
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import DOCS
from .page import parse_page

FAILURE_TABLE = DOCS / "part1" / "failure-modes.md"


def title_of(lines: list[str], path: Path) -> str:
    return next((line[2:].strip() for line in lines if line.startswith("# ")), Path(path).stem)


def section_of(lines: list[str], lineno: int) -> tuple[str, str]:
    """The heading above line ``lineno`` (1-based) and its anchor, as Python-Markdown's toc makes it."""
    from markdown.extensions.toc import slugify

    from .page import outside_fences

    heading = ""
    for line, prose in zip(lines[:lineno], outside_fences(lines)):
        if prose and re.match(r"#{1,6} ", line):  # a heading, not a comment in a block
            heading = line.lstrip("#").strip()
    return heading, slugify(heading, "-") if heading else ""


@dataclass
class Shown:
    path: Path
    title: str
    section: str
    anchor: str


@dataclass
class Entry:
    kind: str  # "error" or "warning"
    type: str
    message: str  # the line the page shows (an error), or the asserted fragment (a warning)
    where: list = field(default_factory=list)  # Shown
    cause: str = ""
    fix: str = ""


def _error_line(block, type_name: str) -> str:
    for line in reversed((block.expected_output or "").splitlines()):
        head = line.split(":", 1)[0].strip()
        if head == type_name or head.rsplit(".", 1)[-1] == type_name:
            return line.strip()
    return f"{type_name}: (matching {block.mark('raises').kwargs.get('match')!r})"


def failure_rows(path: Path = FAILURE_TABLE) -> list[tuple[str, list[str], str, str]]:
    """The rows of the failure table whose symptom is a message: (type, fragments, cause, fix)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 4:
            continue
        code = re.match(r"`([^`]*)`", cells[0])
        if code and ": " in code.group(1):
            type_name, message = code.group(1).split(": ", 1)
            fragments = [f.strip() for f in message.split("...") if f.strip()]
            rows.append((type_name, fragments, cells[1], cells[2]))
    return rows


def errors(pages) -> list[Entry]:
    entries: dict[tuple, Entry] = {}
    rows = failure_rows()
    for path in pages:
        blocks = parse_page(path)
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        for b in blocks:
            if b.kind != "run":
                continue
            for kind, mark in (("error", b.mark("raises")), ("warning", b.mark("warns"))):
                if mark is None or not mark.args:
                    continue
                type_name = str(mark.args[0]).rsplit(".", 1)[-1]
                message = _error_line(b, type_name) if kind == "error" else str(mark.kwargs.get("match", ""))
                entry = entries.setdefault((kind, type_name, message), Entry(kind, type_name, message))
                section, anchor = section_of(lines, b.lineno)
                shown = Shown(Path(path), title_of(lines, path), section, anchor)
                if all((s.path, s.anchor) != (shown.path, shown.anchor) for s in entry.where):
                    entry.where.append(shown)
    for entry in entries.values():
        for type_name, fragments, cause, fix in rows:
            if entry.kind == "error" and type_name == entry.type and all(f in entry.message for f in fragments):
                entry.cause, entry.fix = cause, fix
                break
    return sorted(entries.values(), key=lambda e: (e.kind, e.type, e.message.lower()))


def _link(shown: Shown, page_path: Path) -> str:
    target = os.path.relpath(shown.path, Path(page_path).parent).replace(os.sep, "/")
    label = f"{shown.title}: {shown.section}" if shown.section and shown.section != shown.title else shown.title
    return f"[{label}]({target}#{shown.anchor})" if shown.anchor else f"[{label}]({target})"


def _code(text: str) -> str:
    ticks = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def error_index(page_path: Path, pages) -> str:
    """Markdown: a section per kind and type, an entry per message."""
    out, current = [], None
    for e in errors(pages):
        heading = f"## {e.type}" + (" (warning)" if e.kind == "warning" else "")
        if heading != current:
            out += [heading, ""]
            current = heading
        # each message a heading: the site's search ranks a match in a heading first
        what = _code(e.message) if e.kind == "error" else f"{e.type} whose message contains {_code(e.message)}"
        out += [f"### {what}", ""]
        out.append("Shown in " + ", ".join(_link(s, page_path) for s in e.where) + ".")
        if e.cause:
            out.append(f"Cause: {e.cause}. Fix: {e.fix}.")
        out.append("")
    return "\n".join(out)


# The same index for the terminal: snippets/error_index.json, read by `python -m snippets.explain`
# (the reader's package cannot import bookcheck). A test proves the file current.
PACKAGED = DOCS.parent / "snippets" / "error_index.json"


def _plain(markdown: str) -> str:
    """A table cell as terminal text: links keep their text."""
    return re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown).strip()


def site_address(path: Path, anchor: str) -> str:
    """The page's address relative to the site's root (directory URLs), with its anchor."""
    rel = Path(path).relative_to(DOCS).with_suffix("")
    url = "" if rel.name == "index" and rel.parent == Path(".") else (
        f"{rel.parent.as_posix()}/" if rel.name == "index" else f"{rel.as_posix()}/")
    return url + (f"#{anchor}" if anchor else "")


def packaged(pages) -> str:
    """The JSON text of snippets/error_index.json."""
    import json

    data = [dict(kind=e.kind, type=e.type, message=e.message, cause=_plain(e.cause), fix=_plain(e.fix),
                 shown=[dict(page=s.title, section=s.section, address=site_address(s.path, s.anchor))
                        for s in e.where])
            for e in errors(pages)]
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bookcheck.indexes",
                                     description="Write snippets/error_index.json from the pages.")
    parser.parse_args(argv)
    PACKAGED.write_text(packaged(sorted(DOCS.rglob("*.md"))), encoding="utf-8")
    print(f"wrote {PACKAGED.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
