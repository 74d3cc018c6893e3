"""The book as one PDF (`make pdf`): the site's print page printed by chromium
(bookcheck/pdf.py), read back with pypdfium2 (its text) and pypdf (its links).

`make pdf` builds the site, writes site/autograd-book.pdf and runs these tests with BOOK_PDF
naming it (the built site is the folder that holds it). `make test` does not make the PDF
(minutes of printing): without BOOK_PDF these tests are skipped, and CI runs `make pdf`.

What a reader of the PDF gets, each read from the sources (mkdocs.yml's nav, the pages), not
from the print page:
- a table of contents listing every part and page of the nav, in order; then every page, in
  nav order, under its own title;
- every diagram drawn: no diagram's source left as text, each diagram printed with its
  caption (its title, which the page gives it once drawn) and its labels;
- every folded answer open;
- links that work: a link within the book goes to a place in the PDF, a link out goes to the
  site's address or elsewhere on the web, never to the server the page was printed from.
The checks bite: the model page printed before its diagrams are drawn fails the diagram
check, printed with its answers folded fails the answer check, and printed as `make pdf`
prints passes both.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bookcheck import DOCS, ROOT, pdf
from bookcheck.results import chromium, in_ci

PDF = os.environ.get("BOOK_PDF")
pytestmark = pytest.mark.skipif(not PDF, reason="the PDF is made and checked by `make pdf` (BOOK_PDF names it)")

FENCE = re.compile(r"^([ \t]*)```mermaid\n(.*?)^\1```", re.M | re.S)
# A diagram's label in its source: "quoted" inside a node's brackets, or the bare text of one.
LABEL = re.compile(r'[\[({>]+"([^"]+)"[\])}]+|\[([^\]"\[]+)\]|\(\(([^)"(]+)\)\)')
# What only a diagram left as source shows at the start of a line (every diagram has accTitle
# and accDescr: tests/test_site_a11y.py). A code block that writes mermaid shows them in quotes.
SOURCE_LINE = re.compile(r"^\s*(accTitle\s*:|accDescr\s*:|sequenceDiagram\s*$)", re.M)
FOLDED = re.compile(r"^([ \t]*)\?\?\?\+? \w+.*\n((?:\1[ \t]+.*\n|[ \t]*\n)+)", re.M)


def norm(text: str) -> str:
    """Letters and digits only, lower case: text compared across line breaks, fonts and markup."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text)).lower()


# --------------------------------------------------------------------------------------------
# What the sources say the book holds
# --------------------------------------------------------------------------------------------


def nav() -> list[tuple[str, str | None]]:
    """(title, page source relative to docs/, or None for a part) of mkdocs.yml's nav, in order."""
    import yaml

    class Loader(yaml.SafeLoader):  # mkdocs.yml holds !ENV and !!python tags
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    out = []

    def walk(items):
        for item in items:
            for title, value in item.items():
                out.append((title, None if isinstance(value, list) else value))
                if isinstance(value, list):
                    walk(value)

    walk(config["nav"])
    return out


def pages() -> list[Path]:
    return [DOCS / src for _, src in nav() if src]


def title(source: Path) -> str:
    """A page's own title: the first `# ` heading of its Markdown, or of its notebook's first
    Markdown cell."""
    if source.suffix == ".ipynb":
        cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
        text = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])
    else:
        text = re.sub(r"\A---\n.*?^---\n", "", source.read_text(encoding="utf-8"), flags=re.M | re.S)  # front matter
    return re.search(r"^# (.+)$", text, re.M).group(1)


def diagrams(source: Path) -> list[tuple[str, str, list[str]]]:
    """(where, caption in print, labels) of each diagram of a Markdown page."""
    out = []
    for fence in FENCE.finditer(source.read_text(encoding="utf-8") if source.suffix == ".md" else ""):
        body = fence.group(2)
        name = re.search(r"^\s*accTitle\s*:\s*(.+)$", body, re.M)
        labels = [next(g for g in m.groups() if g) for m in LABEL.finditer(body)]
        # not a chart's data (a list of numbers), nor a label with markup or an escape
        labels = [label for label in labels if len(norm(label)) >= 3 and not re.search(r"[<#&\\]", label)
                  and not re.fullmatch(r"[-\d.,\s]+", label)]
        title = name.group(1).strip() if name else ""
        out.append((f"{source.relative_to(DOCS)}: {title or 'a diagram'}", f"Diagram: {title}" if title else "Diagram", labels))
    return out


def answers(source: Path) -> list[tuple[str, str]]:
    """(where, first line of text) of each folded block (`???`) of a Markdown page whose body
    opens with a line of plain prose (no math, code or markup to render)."""
    if source.suffix != ".md":
        return []
    text = source.read_text(encoding="utf-8")
    out = []
    for m in FOLDED.finditer(text):
        first = m.group(2).strip().splitlines()[0].strip()
        first = re.sub(r"\]\([^)]*\)", "]", first)  # a link shows its text only
        if len(norm(first)) < 20 or re.search(r"[\\$<|]|^```|^!|^[-*+] |^\d+\. ", first):
            continue
        line = text[: m.start()].count("\n") + 1
        out.append((f"{source.relative_to(DOCS)}:{line}", first))
    return out


# --------------------------------------------------------------------------------------------
# The checks, on the text of a PDF's pages
# --------------------------------------------------------------------------------------------


def source_left(texts: list[str]) -> list[str]:
    return [f"page {i + 1}: {m.group(0).strip()!r}" for i, t in enumerate(texts) for m in SOURCE_LINE.finditer(t)]


def diagram_problems(texts: list[str], sources: list[Path]) -> list[str]:
    """A diagram left as source, one not drawn (a drawn diagram is printed with the caption
    "Diagram: <its accTitle>", docs/assets/css/book.css), or one whose labels are not in the PDF."""
    problems = [f"a diagram left as mermaid source, {p}" for p in source_left(texts)]
    whole = norm(" ".join(texts))
    found = [d for s in sources for d in diagrams(s)]
    for caption in sorted({c for _, c, _ in found}):
        drawn, wanted = whole.count(norm(caption)), sum(1 for _, c, _ in found if c == caption)
        if drawn < wanted:
            problems.append(f"{caption!r}: {wanted - drawn} of {wanted} such diagram(s) not drawn (no caption)")
    for name, _, labels in found:
        missing = [label for label in labels if norm(label) not in whole]
        if missing:
            problems.append(f"{name}: labels not in the PDF: {missing}")
    return problems


def answer_problems(texts: list[str], sources: list[Path]) -> list[str]:
    whole = norm(" ".join(texts))
    return [f"{where}: the folded block's text is not in the PDF (folded?): {first!r}"
            for s in sources for where, first in answers(s) if norm(first) not in whole]


# --------------------------------------------------------------------------------------------
# The book's PDF
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def book_pdf() -> Path:
    path = Path(PDF)
    assert path.is_file(), f"{path} is missing: `make pdf` makes it"
    return path


@pytest.fixture(scope="module")
def texts(book_pdf) -> list[str]:
    return pdf.page_texts(book_pdf)


def contents_end(texts: list[str]) -> int:
    """The index of the last page of the table of contents: the first that lists the nav's last
    title (len(texts) if none does)."""
    last = norm(nav()[-1][0])
    return next((i for i, t in enumerate(texts) if last in norm(t)), len(texts))


def contents_problems(texts: list[str]) -> list[str]:
    end = contents_end(texts)
    if end >= 10:
        return [f"no table of contents in the first ten pages (the nav's last title is first on page {end + 1})"]
    listed = norm(" ".join(texts[: end + 1]))
    at, missing = 0, []
    for name, _ in nav():
        found = listed.find(norm(name), at)
        if found < 0:
            missing.append(name)
        else:
            at = found + len(norm(name))
    return [f"not in the contents, or out of nav order: {name}" for name in missing]


def order_problems(texts: list[str]) -> list[str]:
    """Each page of the nav, found by its title in the pages after the contents, in nav order."""
    body = texts[contents_end(texts) + 1:]
    at, missing = 0, []
    for source in pages():
        heading = norm(title(source))
        found = next((i for i in range(at, len(body)) if heading in norm(body[i])), None)
        if found is None:
            missing.append(f"{source.relative_to(DOCS)}: {title(source)!r}")
        else:
            at = found
    return [f"not in the PDF after the contents, or out of nav order: {m}" for m in missing]


def test_page_count_is_sane(texts):
    """An A4 page of this book holds about a screen of text: a page of the nav gives a few PDF
    pages (the longest about twenty). Far fewer: pages went missing; far more: a layout broke."""
    n = len(pages())
    assert 3 * n <= len(texts) <= 20 * n, (len(texts), n)


def test_contents_list_every_part_and_page_in_nav_order(texts):
    assert contents_problems(texts) == []


def test_every_page_is_in_nav_order_under_its_own_title(texts):
    assert order_problems(texts) == []


def test_every_diagram_is_drawn(texts):
    sources = pages()
    assert sum(len(diagrams(s)) for s in sources) >= 40
    assert sum(1 for s in sources for _, _, labels in diagrams(s) if labels) >= 30
    assert diagram_problems(texts, sources) == []


def test_every_folded_answer_is_open(texts):
    sources = pages()
    assert sum(len(answers(s)) for s in sources) >= 100
    assert answer_problems(texts, sources) == []


def site_address() -> str:
    """The site's address, as mkdocs.yml reads it (SITE_URL, else the local one of make serve)."""
    default = re.search(r'^site_url: !ENV \[SITE_URL, "([^"]+)"\]', (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    return os.environ.get("SITE_URL") or default.group(1)


def test_links_work_from_the_pdf(book_pdf):
    from pypdf import PdfReader

    reader = PdfReader(book_pdf)
    names = set(reader.named_destinations)
    inside, outside, lost = 0, set(), []
    for number, page in enumerate(reader.pages, 1):
        for annot in page.get("/Annots") or []:
            annot = annot.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            action = annot["/A"].get_object() if "/A" in annot else {}
            if action.get("/S") == "/URI":
                outside.add(str(action["/URI"]))
            elif "/Dest" in annot:
                inside += 1
                dest = annot["/Dest"]
                if isinstance(dest, str) and dest not in names:
                    lost.append(f"page {number}: {dest}")
    assert inside >= len(pages()), f"only {inside} links within the PDF"  # the contents link every page
    assert lost == []
    site = site_address()
    local = sorted(u for u in outside if urlsplit(u).hostname in {"127.0.0.1", "localhost"} and not u.startswith(site))
    assert local == [], f"links to the server the page was printed from: {local[:5]}"
    assert any(u.startswith(site + "downloads/") for u in outside), "no link to the site's downloads"


# --------------------------------------------------------------------------------------------
# The checks bite
# --------------------------------------------------------------------------------------------


def test_checks_reject_a_book_without_contents_or_out_of_order(texts):
    """The book's own pages, with the contents dropped, or with its first forty pages after the
    contents moved to the end."""
    body = contents_end(texts) + 1
    assert contents_problems(texts[body:])
    moved = order_problems(texts[:body] + texts[body + 40:] + texts[body:body + 40])
    assert len(moved) >= 10, moved  # the moved pages come last: every page after them is "out of order"


def test_checks_reject_a_page_printed_before_its_diagrams_are_drawn_or_with_its_answers_folded(book_pdf, tmp_path):
    """The model page (two diagrams, folded answers) printed three ways: as soon as its HTML is
    parsed (its diagrams not drawn), with its answers folded (as a printer that ignored them
    would leave them), and as `make pdf` prints. Only the last passes."""
    if chromium() is None:
        message = "Debian chromium is not installed"
        if in_ci():
            pytest.fail("CI=true: " + message)
        pytest.skip(message)
    site, model = book_pdf.parent, [DOCS / "part1" / "hand-trace.md"]
    page = "part1/hand-trace/"
    hasty = pdf.page_texts(pdf.make_pdf(site, tmp_path / "hasty.pdf", page, ready=False).path)
    folded = pdf.page_texts(pdf.make_pdf(site, tmp_path / "folded.pdf", page,
                                         style="details > :not(summary) { display: none !important; }").path)
    careful = pdf.page_texts(pdf.make_pdf(site, tmp_path / "careful.pdf", page).path)
    # Printed that early, a diagram is still its source (accTitle and accDescr lines) or an
    # empty box Material has made for it; either way it has no caption.
    not_drawn = [p for p in diagram_problems(hasty, model) if "not drawn" in p]
    assert len(not_drawn) == 2, diagram_problems(hasty, model)
    assert diagram_problems(folded, model) == []
    assert len(answer_problems(folded, model)) == len([a for s in model for a in answers(s)]) >= 2
    assert diagram_problems(careful, model) == []
    assert answer_problems(careful, model) == []


# --------------------------------------------------------------------------------------------
# The print page itself, on screen
# --------------------------------------------------------------------------------------------

MODES = (("light", 390), ("light", 1440), ("dark", 390), ("dark", 1440))
MATH_SETTLED = """() => document.readyState === "complete"
  && (!document.fonts || document.fonts.status === "loaded")
  && Array.from(document.querySelectorAll(".arithmatex")).every((el) => el.querySelector(".katex"))
  && Array.from(document.querySelectorAll("div.arithmatex")).every((el) => el.hasAttribute("data-overflow"))"""


def test_the_print_page_has_no_serious_or_critical_axe_violation(book_pdf, browser):
    """The page the PDF is printed from is a page of the site too (print_page/, the whole book,
    about 4 MB): axe-core finds no serious or critical violation on it, in both schemes at both
    widths. Checked here, beside the PDF made from it, since one pass over it takes about 40 s.
    Its notebooks are shown as on their own pages (overrides/site_hooks.py, notebook_html):
    with nbconvert's markup it failed color-contrast (#408080 comments, 3.54:1 on the dark
    scheme's code background) and scrollable-region-focusable (each cell's code)."""
    import site_a11y
    import site_check

    def axe_in(b, url, scheme, width):
        context = b.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
        try:
            page = context.new_page()
            page.goto(url, wait_until="load", timeout=180000)
            # every formula typeset and measured (a wide one is made a scroll region reachable by
            # keyboard once measured); its diagrams, drawn in the PDF's checks and checked by axe
            # on their own pages, are left as they load here (drawing all 47 costs minutes)
            page.wait_for_function(MATH_SETTLED, timeout=180000, polling=200)
            return site_a11y.axe_problems(page)
        finally:
            context.close()

    with site_check.serve(book_pdf.parent) as base:
        found = {f"{scheme}-{width}": browser.run(axe_in, f"{base}print_page/", scheme, width)
                 for scheme, width in MODES}
    problems = {mode: p for mode, p in found.items() if p}
    assert problems == {}, "\n".join(f"{mode}: {p}" for mode, ps in problems.items() for p in ps)
