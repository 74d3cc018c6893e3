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


def _fence_end(lines: list[str], start: int) -> int:
    """Index of the closing fence of the fence opening at ``start``."""
    opening = lines[start].lstrip()
    ticks = len(opening) - len(opening.lstrip("`"))
    for j in range(start + 1, len(lines)):
        s = lines[j].lstrip()
        if s.startswith("`" * ticks):
            return j
    raise ValueError(f"line {start + 1}: the fence is never closed")


def _indent(text: str, prefix: str) -> list[str]:
    return [(prefix + line if line.strip() else line) for line in text.splitlines(True)]


def _next_text(lines, j):
    while j < len(lines) and not lines[j].strip():
        j += 1
    return j


def rewrite_version(path: Path, printed: dict[int, str], version: str) -> int:
    """Write what blocks print on torch ``version`` beside their pinned outputs, in tabs."""
    from .page import TAB
    from .versions import pinned, tab_label

    lines = Path(path).read_text(encoding="utf-8").splitlines(True)
    marker = f'<!--pytest.mark.output_on("{version}")-->'
    for lineno in sorted(printed, reverse=True):
        shown = printed[lineno] if printed[lineno].endswith("\n") else printed[lineno] + "\n"
        j = _next_text(lines, _fence_end(lines, lineno - 1) + 1)
        tab = TAB.match(lines[j]) if j < len(lines) else None
        if tab and tab.group(1) == tab_label(pinned()):  # tabs already: replace this version's text
            # the tab's marker, its fence, the next tab, its marker, its fence
            m = _next_text(lines, _fence_end(lines, _next_text(lines, _next_text(lines, j + 1) + 1)) + 1)
            other = TAB.match(lines[m]) if m < len(lines) else None
            k = _next_text(lines, _next_text(lines, m + 1) + 1)
            if not (other and other.group(1) == tab_label(version) and lines[k].strip().startswith("```")):
                raise ValueError(f"{path}:{lineno}: the block's tabs are not the pinned output then torch {version}")
            prefix = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
            lines[k + 1:_fence_end(lines, k)] = _indent(shown, prefix)
            continue
        if j >= len(lines) or lines[j].strip() != OUTPUT_MARKER:
            raise ValueError(f"{path}:{lineno}: the block has no output block to show torch {version}'s beside")
        k = _next_text(lines, j + 1)
        out_end = _fence_end(lines, k)
        prefix = lines[j][: len(lines[j]) - len(lines[j].lstrip())]
        inner = prefix + "    "
        pinned_body = [line[len(prefix):] if line.startswith(prefix) else line for line in lines[k:out_end + 1]]
        lines[j:out_end + 1] = [
            f'{prefix}=== "{tab_label(pinned())}"\n', "\n", f"{inner}{OUTPUT_MARKER}\n",
            *_indent("".join(pinned_body), inner), "\n",
            f'{prefix}=== "{tab_label(version)}"\n', "\n", f"{inner}{marker}\n",
            f"{inner}```text\n", *_indent(shown, inner), f"{inner}```\n"]
    Path(path).write_text("".join(lines), encoding="utf-8")
    return len(printed)


def rewrite(path: Path, printed: dict[int, str]) -> int:
    """Rewrite the output blocks of the page at ``path``: ``printed`` maps the line of a
    block's opening fence to what it prints. Returns how many blocks changed."""
    from .versions import pinned, running

    if running() != pinned():
        return rewrite_version(path, printed, running())
    lines = Path(path).read_text(encoding="utf-8").splitlines(True)
    changed = 0
    for lineno in sorted(printed, reverse=True):
        shown = printed[lineno]
        start = lineno - 1
        end = _fence_end(lines, start)
        prefix = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        j = end + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines) and lines[j].strip() == OUTPUT_MARKER:
            k = j + 1
            while k < len(lines) and not lines[k].strip():
                k += 1
            out_end = _fence_end(lines, k)
            out_prefix = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
            if shown:
                lines[k + 1:out_end] = _indent(shown if shown.endswith("\n") else shown + "\n", out_prefix)
            else:
                del lines[end + 1:out_end + 1]
            changed += 1
        elif shown:
            body = _indent(shown if shown.endswith("\n") else shown + "\n", prefix)
            lines[end + 1:end + 1] = ["\n", f"{prefix}{OUTPUT_MARKER}\n", "\n", f"{prefix}```text\n", *body,
                                      f"{prefix}```\n"]
            changed += 1
    Path(path).write_text("".join(lines), encoding="utf-8")
    return changed
