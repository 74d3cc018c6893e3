"""The source map (docs/reference/source-map.md): every link resolves to a page and a heading,
every section of both sources has a row, and every correction of the errata has a row.

Heading ids are the page model's (bookcheck.model.Page.headings), computed as the site's table
of contents computes them (Python-Markdown's ``toc`` extension as mkdocs.yml configures it:
``_1``, ``_2`` ... for repeats on a page; an explicit ``{#id}`` wins), so a renamed heading
breaks this test, not only the strict build.
"""

import re
from pathlib import Path

import pytest

from bookcheck.model import Page

DOCS = Path(__file__).resolve().parent.parent / "docs"
MAP = DOCS / "reference" / "source-map.md"

# The sections of the two source documents, in their order ("Autograd intuition", then
# "PyTorch and autograd fluency"); each must be the first cell of a row of the map.
SOURCE_SECTIONS = [
    "What autograd does for you",
    "Callout: autograd is not magic, it is bookkeeping",
    "Computation graphs: a concrete example",
    "Verify in PyTorch",
    "The chain rule is the whole game",
    "A slightly larger example: two paths",
    "What PyTorch tracks (and what it ignores)",
    "Common bugs",
    "Vectors, matrices, and Jacobian intuition",
    "Autograd vs manual gradients",
    "Engineering problem (staff framing)",
    "Diagram: forward/backward",
    "Precise definitions & mental model",
    "Tradeoffs: when to use what",
    "Failure modes (interview + on-call)",
    "Production & OSS practices",
    "Deep dive (FAANG / OSS bar)",
    "Micro-project: Mini autograd exercises",
    "Checklist",
    "Why it matters",
    "Core ideas: Tensors and views",
    "Core ideas: Broadcasting",
    "Core ideas: The graph",
    "Core ideas: In-place operations",
    "Core ideas: Turning tracking off",
    "Core ideas: Custom gradients",
    "Core ideas: Gradient checking",
    "Core ideas: Determinism",
    "Common misconceptions",
    "How to approach it: build a small engine, then a tensor engine",
]

# The ids of the measured errors of the two sources: A1-A10 ("PyTorch and autograd
# fluency") and B1-B12 ("Autograd intuition").
ERRATA = [f"A{i}" for i in range(1, 11)] + [f"B{i}" for i in range(1, 13)]

LINK = re.compile(r"\[(?P<text>(?:[^\[\]]|\[[^\]]*\])*)\]\((?P<target>[^)\s]+)\)")
def anchors(page):
    """The heading ids of a Markdown page, as the site's table of contents assigns them (the
    page model's: bookcheck.model.Page.headings)."""
    return [h.anchor for h in Page.parse(page).headings]


def rows(text):
    """First cell and links of each table row (header and rule rows left out)."""
    out = []
    for line in text.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        out.append((cells, [m.group("target") for m in LINK.finditer(line)]))
    return out


def map_links():
    text = MAP.read_text(encoding="utf-8")
    return sorted({m.group("target") for m in LINK.finditer(text)})


def test_anchor_computation_matches_the_toc_extension(tmp_path):
    """The helper agrees with Python-Markdown on headings like the book's."""
    import markdown

    sample = "\n\n".join([
        "## `.detach()` is caught, `.data` is not",
        "## The (N, 1) − (N,) loss bug",
        "## A real fork: L = a·b + a",
        "## Step 3: backward, in reverse topological order, with +=",
        "## Pitfalls",
        "## Pitfalls",
        "## Kept {#kept-id}",
    ])
    md = markdown.Markdown(extensions=["toc", "attr_list"])
    md.convert(sample)
    want = [token["id"] for token in md.toc_tokens]
    page = tmp_path / "sample.md"
    page.write_text(sample, encoding="utf-8")
    assert anchors(page) == want


@pytest.mark.parametrize("target", map_links())
def test_link_resolves_to_a_page_and_a_heading(target):
    path, _, anchor = target.partition("#")
    assert not target.startswith(("http:", "https:", "/")), f"{target}: link within the book, relatively"
    page = (MAP.parent / path).resolve()
    assert page.is_file(), f"{target}: no page {page.relative_to(DOCS.parent)}"
    assert anchor, f"{target}: link to a heading (page.md#heading), not only a page"
    have = anchors(page)
    assert anchor in have, f"{target}: no heading with id {anchor!r} on {path}; its ids: {have}"


def test_every_source_section_has_a_row_with_a_link():
    first_cells = {cells[0]: links for cells, links in rows(MAP.read_text(encoding="utf-8"))}
    missing = [s for s in SOURCE_SECTIONS if s not in first_cells]
    assert missing == [], f"sections of the sources with no row in the source map: {missing}"
    unlinked = [s for s in SOURCE_SECTIONS if not first_cells[s]]
    assert unlinked == [], f"rows with no link to where the book teaches them: {unlinked}"


def test_every_correction_has_a_row_with_a_link():
    by_id = {cells[0]: links for cells, links in rows(MAP.read_text(encoding="utf-8"))
             if re.fullmatch(r"[AB]\d+", cells[0])}
    assert sorted(by_id) == sorted(ERRATA), (sorted(set(ERRATA) - set(by_id)), sorted(set(by_id) - set(ERRATA)))
    assert all(by_id[i] for i in ERRATA), [i for i in ERRATA if not by_id[i]]


def test_a_broken_link_would_be_caught(tmp_path):
    """The check can fail: a renamed heading and a missing page are both reported."""
    page = tmp_path / "p.md"
    page.write_text("# Title\n\n## `clone()` is recorded\n\n```python\n# not a heading\n```\n", encoding="utf-8")
    assert anchors(page) == ["title", "clone-is-recorded"]
    assert "not-a-heading" not in anchors(page)


def corrections_section():
    text = MAP.read_text(encoding="utf-8")
    return text[text.index("## Corrections"):]


def test_no_correction_stands_open_in_the_main_flow():
    """A correction of a source is a folded note after the rule, never an open admonition."""
    open_notes = [
        f"{page.relative_to(DOCS)}:{n}"
        for page in sorted(DOCS.rglob("*.md"))
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r'\s*!!!\+? note "Corrected from the source"', line)
    ]
    assert open_notes == [], f"fold these with ??? note: {open_notes}"


def test_every_page_with_a_correction_is_listed():
    listed = {(MAP.parent / m.group("target").partition("#")[0]).resolve()
              for m in LINK.finditer(corrections_section())}
    pages = {page.resolve() for page in DOCS.rglob("*.md")
             if '??? note "Corrected from the source"' in page.read_text(encoding="utf-8")}
    missing = sorted(str(p.relative_to(DOCS)) for p in pages - listed)
    assert missing == [], f"pages that correct a source but are not in the source map: {missing}"
