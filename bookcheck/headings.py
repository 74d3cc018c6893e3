"""Headings: every heading of a page has an anchor of its own.

Two headings whose text gives the same anchor get ``anchor`` and ``anchor_1`` from the site's
table of contents: a link to ``#anchor`` then reaches the first one whichever was meant, and the
second one's address changes when a heading above it changes. The anchors are the model's
(bookcheck.model.Page.headings: Python-Markdown's toc as mkdocs.yml configures it).
"""

from __future__ import annotations

from . import HarnessError


def duplicates(page) -> list[str]:
    """``file:line`` problems, one per heading whose anchor an earlier heading already gives."""
    seen, problems = {}, []
    for h in page.headings:
        base = h.anchor
        while base not in seen and base.rpartition("_")[2].isdigit() and base.rpartition("_")[0] in seen:
            base = base.rpartition("_")[0]  # toc's de-duplicated form: anchor_1, anchor_2
        if base in seen:
            problems.append(f"{page.where(h.line)}: the heading {h.text!r} has the anchor #{base} of the heading "
                            f"at line {seen[base] + 1}; reword one of them, or give it {{ #an-anchor-of-its-own }}")
        else:
            seen[h.anchor] = h.line
    return problems


def page_check(context, page):
    """The registry's entry for a page's headings (bookcheck.markers.CHECKS)."""
    from .markers import PageCheck

    def run():
        problems = duplicates(page)
        if problems:
            raise HarnessError("\n".join(problems))

    return PageCheck("headings", run, line=page.headings[0].line + 1)
