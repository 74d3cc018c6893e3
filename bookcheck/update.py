"""``pytest --update-outputs``: rewrite the expected-output fences from what blocks print.

Review the result with ``git diff``. A block that prints and has no output block gets one;
a block whose output block no longer matches gets its text replaced; a block that prints
nothing loses its output block.
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


def rewrite(path: Path, printed: dict[int, str]) -> int:
    """Rewrite the output blocks of the page at ``path``: ``printed`` maps the line of a
    block's opening fence to what it prints. Returns how many blocks changed."""
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
