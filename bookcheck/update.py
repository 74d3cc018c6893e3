"""``pytest --update-outputs``: rewrite the expected-output fences from what blocks print.

Review the result with ``git diff``. A block that prints and has no output block gets one;
a block whose output block no longer matches gets its text replaced; a block that prints
nothing loses its output block.

On another verified torch version (bookcheck.versions.also), the pinned outputs are kept: a
block that prints something else there gets that version's output beside the pinned one, the
two in content tabs (bookcheck/versions.py), or its tab's text replaced.

An output that names a block of its own page by place (a traceback's ``File "page.md:356"``)
follows the block: where a rewrite above it adds or removes lines, the number is renumbered in
the same pass, so one run leaves the page consistent.
"""

from __future__ import annotations

import re
from pathlib import Path

OUTPUT_MARKER = "<!--pytest-codeblocks:expected-output-->"


def _indent(text: str, prefix: str) -> list[str]:
    return [(prefix + line if line.strip() else line) for line in text.splitlines(True)]


def _blocks(path):
    from .model import Page

    return {b.lineno: b for b in Page.parse(path).blocks}


def _apply(path, lines: list[str], edits: list[tuple[int, int, list[str]]], blocks: dict) -> None:
    """Replace ``lines[start:stop]`` by each edit's new lines and write the page; every
    ``page.md:N`` that names a block's opening line is renumbered to where that line moves."""
    from . import rel

    def moved(lineno: int) -> int:
        return lineno + sum(len(new) - (stop - start) for start, stop, new in edits if stop <= lineno - 1)

    for start, stop, new in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[start:stop] = new
    place = re.compile("(" + re.escape(str(rel(Path(path)))) + r":)(\d+)(?!\d)")
    text = place.sub(lambda m: m[1] + str(moved(int(m[2]))) if int(m[2]) in blocks else m[0], "".join(lines))
    Path(path).write_text(text, encoding="utf-8")


def _tabbed_output(blocks: dict, block):
    """The version output fence after ``block``'s output (bookcheck.model.Block), if any."""
    later = [b for n, b in sorted(blocks.items()) if n > block.lineno]
    return later[0] if later and later[0].kind == "version output" else None


def rewrite_version(path: Path, printed: dict[int, str], version: str) -> int:
    """Write what blocks print on torch ``version`` beside their pinned outputs, in tabs."""
    from .versions import pinned, tab_label

    lines = Path(path).read_text(encoding="utf-8").splitlines(True)
    blocks = _blocks(path)
    marker = f'<!--pytest.mark.output_on("{version}")-->'
    edits = []
    for lineno in sorted(printed):
        shown = printed[lineno] if printed[lineno].endswith("\n") else printed[lineno] + "\n"
        block = blocks[lineno]
        out = block.output_fence
        if out is None:
            raise ValueError(f"{path}:{lineno}: the block has no output block to show torch {version}'s beside")
        if out.tab == tab_label(pinned()):  # tabs already: replace this version's text
            other = _tabbed_output(blocks, block)
            if other is None or other.fence.tab != tab_label(version):
                raise ValueError(f"{path}:{lineno}: the block's tabs are not the pinned output then torch {version}")
            f = other.fence
            edits.append((f.start + 1, f.end, _indent(shown, " " * f.indent)))
            continue
        j = out.start - 1  # the output marker's line
        while j > block.fence.end and lines[j].strip() != OUTPUT_MARKER:
            j -= 1
        prefix = lines[j][: len(lines[j]) - len(lines[j].lstrip())]
        inner = prefix + "    "
        pinned_body = [line[len(prefix):] if line.startswith(prefix) else line for line in lines[out.start:out.end + 1]]
        edits.append((j, out.end + 1, [
            f'{prefix}=== "{tab_label(pinned())}"\n', "\n", f"{inner}{OUTPUT_MARKER}\n",
            *_indent("".join(pinned_body), inner), "\n",
            f'{prefix}=== "{tab_label(version)}"\n', "\n", f"{inner}{marker}\n",
            f"{inner}```text\n", *_indent(shown, inner), f"{inner}```\n"]))
    _apply(path, lines, edits, blocks)
    return len(printed)


def rewrite(path: Path, printed: dict[int, str]) -> int:
    """Rewrite the output blocks of the page at ``path`` by their spans in the page model:
    ``printed`` maps the line of a block's opening fence to what it prints. Returns how many
    blocks changed."""
    from .versions import pinned, running

    if running() != pinned():
        return rewrite_version(path, printed, running())
    lines = Path(path).read_text(encoding="utf-8").splitlines(True)
    blocks = _blocks(path)
    edits = []
    for lineno in sorted(printed):
        shown = printed[lineno]
        block = blocks[lineno]
        end, prefix = block.fence.end, " " * block.fence.indent
        out = block.output_fence
        if out is not None:
            if shown:
                edits.append((out.start + 1, out.end,
                              _indent(shown if shown.endswith("\n") else shown + "\n", " " * out.indent)))
            else:
                edits.append((end + 1, out.end + 1, []))
        elif shown:
            body = _indent(shown if shown.endswith("\n") else shown + "\n", prefix)
            edits.append((end + 1, end + 1, ["\n", f"{prefix}{OUTPUT_MARKER}\n", "\n", f"{prefix}```text\n",
                                             *body, f"{prefix}```\n"]))
    _apply(path, lines, edits, blocks)
    return len(edits)
