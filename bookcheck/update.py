"""``pytest --update-outputs``: rewrite the expected-output fences from what blocks print.

Review the result with ``git diff``. A block that prints and has no output block gets one;
a block whose output block no longer matches gets its text replaced; a block that prints
nothing loses its output block.

On another verified torch version (bookcheck.versions.also), the pinned outputs are kept: a
block that prints something else there gets that version's output beside the pinned one, the
two in content tabs (bookcheck/versions.py), or its tab's text replaced.
"""

from __future__ import annotations

from pathlib import Path

OUTPUT_MARKER = "<!--pytest-codeblocks:expected-output-->"


def _indent(text: str, prefix: str) -> list[str]:
    return [(prefix + line if line.strip() else line) for line in text.splitlines(True)]


def _blocks(path):
    from .model import Page

    return {b.lineno: b for b in Page.parse(path).blocks}


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
    for lineno in sorted(printed, reverse=True):
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
            lines[f.start + 1:f.end] = _indent(shown, " " * f.indent)
            continue
        j = out.start - 1  # the output marker's line
        while j > block.fence.end and lines[j].strip() != OUTPUT_MARKER:
            j -= 1
        prefix = lines[j][: len(lines[j]) - len(lines[j].lstrip())]
        inner = prefix + "    "
        pinned_body = [line[len(prefix):] if line.startswith(prefix) else line for line in lines[out.start:out.end + 1]]
        lines[j:out.end + 1] = [
            f'{prefix}=== "{tab_label(pinned())}"\n', "\n", f"{inner}{OUTPUT_MARKER}\n",
            *_indent("".join(pinned_body), inner), "\n",
            f'{prefix}=== "{tab_label(version)}"\n', "\n", f"{inner}{marker}\n",
            f"{inner}```text\n", *_indent(shown, inner), f"{inner}```\n"]
    Path(path).write_text("".join(lines), encoding="utf-8")
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
    changed = 0
    for lineno in sorted(printed, reverse=True):
        shown = printed[lineno]
        block = blocks[lineno]
        end, prefix = block.fence.end, " " * block.fence.indent
        out = block.output_fence
        if out is not None:
            if shown:
                lines[out.start + 1:out.end] = _indent(shown if shown.endswith("\n") else shown + "\n",
                                                       " " * out.indent)
            else:
                del lines[end + 1:out.end + 1]
            changed += 1
        elif shown:
            body = _indent(shown if shown.endswith("\n") else shown + "\n", prefix)
            lines[end + 1:end + 1] = ["\n", f"{prefix}{OUTPUT_MARKER}\n", "\n", f"{prefix}```text\n", *body,
                                      f"{prefix}```\n"]
            changed += 1
    Path(path).write_text("".join(lines), encoding="utf-8")
    return changed
