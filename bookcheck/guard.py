"""The guard: every fence of a page accounted for, or named with ``file:line``."""

from __future__ import annotations

from . import HarnessError, markers, rel
from .model import Page
from .versions import also, pinned, tab_label


def page_check(context, page):
    """The registry's entry for a whole page (bookcheck.markers.CHECKS): its guard."""
    from .markers import PageCheck

    return PageCheck("guard", lambda: _raise(guard(page)))


def _raise(problems):
    if problems:
        raise HarnessError("\n".join(problems))


def guard(path) -> list[str]:
    """Problems with the fences of a page, each as ``file:line: what is wrong; what to do``.
    ``path``: a page's path, or its model (bookcheck.model.Page)."""
    page = path if isinstance(path, Page) else Page.parse(path)
    path, lines, problems = page.path, page.lines, []
    for f in page.fences:
        if f.char == "~":
            problems.append(f"{rel(path)}:{f.lineno}: a ~~~ fence is never run or checked; use ``` fences")
        after = f.end + 1  # f.end indexes the closing fence's line (0-based)
        if f.closed and after < len(lines) and lines[after].strip():
            problems.append(f"{rel(path)}:{after + 1}: text right after a closing fence is joined to the "
                            "block's paragraph (a list item there renders as '- ' text): leave a blank line")
    for i, (line, prose) in enumerate(zip(lines, page.prose), 1):
        s = line.lstrip()
        if prose and markers.TABLE_MARKER_LOOSE.match(s) and not markers.TABLE_MARKER.match(s):
            kinds = " or ".join(f"<!-- hand-trace: {k} -->" for k in markers.TABLE_KINDS)
            problems.append(f"{rel(path)}:{i}: write {kinds}")
        elif prose and (like := markers.MARKER_LIKE.match(line)):
            name = " ".join(like.group(1).replace(":", ": ").split())
            if name not in markers.TABLE_MARKERS:
                known = ", ".join(f"<!-- {c} -->" for c in markers.TABLE_MARKERS)
                problems.append(f"{rel(path)}:{i}: <!-- {like.group(1)} --> is not a marker any check reads; "
                                f"the table markers are {known} (bookcheck/markers.py)")

    try:
        blocks = page.blocks
    except HarnessError as exc:
        return problems + [f"{rel(path)}: cannot read the page: {exc}"]

    previous_run = None
    for i, b in enumerate(blocks):
        if b.kind == "version output":
            problems += _version_output(blocks[i - 1] if i else None, b)
            continue
        unknown = [m.name for m in b.marks if m.name not in markers.KNOWN_MARKS]
        if "xfail" in unknown:
            problems.append(
                f"{b.where}: pytest.mark.xfail accepts any exception; use "
                '<!--pytest.mark.raises("TypeName", match="part of the message")-->'
            )
        elif unknown:
            problems.append(f"{b.where}: unknown marker(s) {unknown}; known: {sorted(markers.KNOWN_MARKS)}")
        skip = b.mark("skip")
        if skip is not None and len(skip.reason) < markers.MIN_REASON:
            problems.append(
                f'{b.where}: a skipped block needs a reason a reader would accept: '
                f'<!--pytest.mark.skip(reason="...")-->'
            )
        if skip is not None and b.expected_output is not None:
            problems.append(f"{b.where}: the output fence under a skipped block is never compared with "
                            "anything: run the block, or show its output in prose")
        if b.runnable:
            if b.cont:
                if previous_run is None:
                    problems.append(f"{b.where}: cont, but no python/sh block above it on this page")
                elif previous_run.mark("skip") is not None and skip is None:
                    problems.append(f"{b.where}: cont continues {previous_run.where}, which is skipped")
            for name in markers.DIAGRAM_MARKS:
                if b.mark(name) is not None:
                    problems.append(f"{b.where}: {name} belongs on a mermaid fence")
            previous_run = b
        elif b.syntax in markers.DIAGRAM_SYNTAX:
            if b.expected_output is not None:
                problems.append(f"{b.where}: an output block follows a diagram; outputs follow a python block")
            for name in markers.RUN_MARKS:
                if b.mark(name) is not None:
                    problems.append(f"{b.where}: {name} does not apply to a diagram")
        elif b.kind == "unaccounted":
            if b.syntax.split()[0:1] in (["python"], ["py"], ["python3"], ["pycon"]):
                why = (
                    f"its info string is {b.syntax!r}, which pytest-codeblocks never runs; "
                    "write exactly ```python"
                )
            else:
                why = f"a {b.syntax or 'plain'!r} fence is neither run, nor an output, nor a diagram"
            problems.append(
                f"{b.where}: {why} (or mark it <!--pytest.mark.skip(reason=\"...\")--> "
                "with a reason a reader would accept)"
            )
        elif b.expected_output is not None:
            problems.append(f"{b.where}: an output block follows a {b.syntax!r} fence that is not run")
    return problems


def _version_output(above, b) -> list[str]:
    """An output_on("V") fence: right after the pinned output of a run block, both in content
    tabs labelled with their versions, V a verified version, and an output that differs."""
    args = b.mark("output_on").args
    version = str(args[0]) if args else ""
    if version not in also():
        return [f'{b.where}: output_on({version!r}): the other verified versions are {list(also())} '
                "(mkdocs.yml, extra.torch_also)"]
    if above is None or above.kind != "run" or not above.expected_output:
        return [f"{b.where}: output_on({version!r}) must follow the output block of a python/sh block"]
    problems = []
    for fence, label in ((above.output_fence, tab_label(pinned())), (b.fence, tab_label(version))):
        where = fence.lineno
        if fence.tab != label:
            problems.append(f'{rel(b.path)}:{where}: put this output in a content tab === "{label}" '
                            "(the reader must see which version prints it)")
    if above.outputs.get(version) == above.expected_output:
        problems.append(f"{b.where}: the same output as on torch {pinned()}; show one output, without tabs")
    return problems
