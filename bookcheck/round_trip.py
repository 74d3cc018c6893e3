"""Round trip from the built site: what a reader copies is what the harness ran and compared.

For each page, the text of every code block is taken from the browser exactly as the copy
button gives it (site_check.COPY_READER), and paired with the page's Markdown fences. Each
runnable block's copied code must equal, as text, the code the harness ran (the fence with its
``--8<--`` lines expanded by pymdownx.snippets, as the build expands them), and each output
block's copied text must equal the output the harness compared. The blocks themselves are run
once, by the pages' checks (bookcheck.run); running the copied text again would only run the
same text a second time.

This is the page model's contract test: the model (bookcheck.model, the one scanner of the
pages) and Python-Markdown with the site's extensions read the same Markdown independently, and
every fence the model finds must be, in order and to the character, a code block the site shows.
A fence the scanner misreads (its indentation under ``!!!``, ``???`` or ``===``, a tab's label, a
closing rule) fails here on the built site.
"""

from __future__ import annotations

from pathlib import Path

from . import DOCS, ROOT
from .markers import DIAGRAM_SYNTAX, RUN_SYNTAX
from .model import expand_snippets, parse_page



def source_of(rel: str) -> Path | None:
    """The Markdown source of a built page (``part1/x/index.html`` -> docs/part1/x.md)."""
    if not rel.endswith("index.html"):
        return None
    stem = rel[: -len("index.html")].rstrip("/")
    for candidate in (DOCS / f"{stem}.md", DOCS / stem / "index.md") if stem else (DOCS / "index.md",):
        if candidate.is_file():
            return candidate
    return None


def pair_blocks(copies: list[dict], md: Path) -> tuple[list[dict], list[str]]:
    """Match the page's copyable blocks (HTML order) with its Markdown fences.

    Returns ``[{"block", "where", "code", "shown", "skip"}]`` for the runnable blocks (python and
    shell), with the copied code and the copied output block under it, and problems.
    """
    expected = []
    for b in parse_page(md):
        if b.syntax in DIAGRAM_SYNTAX:
            continue  # rendered as a diagram: no copy button
        expected.append(("code", b))
        if b.expected_output is not None:
            expected.append(("output", b))
    if len(expected) != len(copies):
        return [], [
            f"the HTML has {len(copies)} copyable blocks, the Markdown {len(expected)}: "
            "something between the two adds or drops a block"
        ]
    blocks, problems = [], []
    for (kind, b), copied in zip(expected, copies):
        if b.kind == "version output":  # another torch version's output of the block above (a tab)
            if blocks:
                blocks[-1]["others"][b.mark("output_on").args[0]] = copied["text"]
            continue
        if kind == "output":
            if blocks and blocks[-1]["block"] is b:
                blocks[-1]["shown"] = copied["text"]
            continue
        if b.syntax in RUN_SYNTAX:
            if copied["lang"] != b.syntax:
                problems.append(f"{b.where}: the HTML block in its place is {copied['lang'] or 'plain'}, not {b.syntax}")
                continue
            blocks.append({"block": b, "where": b.where, "code": copied["text"], "shown": None, "others": {},
                           "skip": b.mark("skip") is not None})
    return blocks, problems


def copied_pages(inspected: dict) -> tuple[dict, dict]:
    """{page: runnable blocks as copied from the site}, and structural problems, from
    site_check.inspect_site()'s result."""
    pages, problems = {}, {}
    for rel, (result, _) in inspected.items():
        md = source_of(rel)
        if md is None or result.copies is None:
            continue
        blocks, found = pair_blocks(result.copies, md)
        if found:
            problems[rel] = found
        if blocks:
            pages[rel] = blocks
    return pages, problems


def _first_difference(copied: str, ran: str) -> str:
    a, b = copied.splitlines(), ran.splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: copied {x!r}, ran {y!r}"
    return f"copied {len(a)} lines, ran {len(b)} lines"


def round_trip(pages: dict[str, list[dict]]) -> dict[str, list[str]]:
    """{page: problems} for pages where what a reader copies is not what the harness ran and
    compared: a block's copied code differs from the code that ran, or a copied output block
    from the output the harness compared."""
    problems: dict[str, list[str]] = {}
    for rel, blocks in pages.items():
        for b in blocks:
            block = b["block"]
            ran = expand_snippets(block.code).rstrip()
            if b["code"].rstrip() != ran:
                problems.setdefault(rel, []).append(
                    f"{b['where']}: the code a reader copies from the site is not the code that ran "
                    f"({_first_difference(b['code'].rstrip(), ran)})")
            compared = (block.expected_output or "").rstrip()
            if (b["shown"] or "").rstrip() != compared:
                problems.setdefault(rel, []).append(
                    f"{b['where']}: the output a reader sees on the site is not the output that was compared "
                    f"({_first_difference((b['shown'] or '').rstrip(), compared)})")
            for version, copied in b["others"].items():
                other = (block.outputs.get(version) or "").rstrip()
                if copied.rstrip() != other:
                    problems.setdefault(rel, []).append(
                        f"{b['where']}: the torch {version} output a reader sees on the site is not the one compared "
                        f"({_first_difference(copied.rstrip(), other)})")
    return problems
