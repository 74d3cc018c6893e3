"""The book as one PDF (`make pdf`): the site's print page printed by chromium
(bookbuild/pdf.py), read back with pypdfium2 (its text) and pypdf (its links).

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
  site's address or elsewhere on the web, never to the server the page was printed from;
- a cover (the title, the torch version of the project's pin, the date of the build), then
  contents whose every entry gives the page its part or page starts on: the page its link
  goes to, the number printed at that page's foot, the page that shows its heading;
- bookmarks (the PDF's outline) for every part and page, in nav order, and a tagged PDF;
- no page with almost no text (under 80 characters) but a part's title page and the end of
  the contents: a code box's title or an "Output" label is never left alone at a page's end;
- no words meant for a screen ("(click to open)": on paper every block is open);
- code in narrow table columns wrapped between tokens: no PyTorch name split inside a word.
The checks bite: the model page printed before its diagrams are drawn fails the diagram
check, printed with its answers folded fails the answer check, and printed as `make pdf`
prints passes both; the page, outline and contents checks reject the faults they name, each
made in the book's own data (a page left with a title alone, a bookmark dropped, a number
off by one).
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bookbuild import apis, pdf
from bookcheck import DOCS, ROOT
from bookcheck.model import Page, config, nav_entries, notebook_title
from bookcheck.results import chromium, in_ci

PDF = os.environ.get("BOOK_PDF")
pytestmark = pytest.mark.skipif(not PDF, reason="the PDF is made and checked by `make pdf` (BOOK_PDF names it)")

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
    """(title, page source relative to docs/, or None for a part) of mkdocs.yml's nav, in order
    (a page without a title in the nav: its own title)."""
    return [(title(DOCS / page) if name is None else name, page) for name, page, _ in nav_entries()]


def pages() -> list[Path]:
    return [DOCS / src for _, src in nav() if src]


def title(source: Path) -> str:
    """A page's own title: its first level-1 heading, or its notebook's (the page model's)."""
    found = notebook_title(source) if source.suffix == ".ipynb" else Page.parse(source).title
    assert found is not None, f"{source} has no level-1 heading"
    return found


def diagrams(source: Path) -> list[tuple[str, str, list[str]]]:
    """(where, caption in print, labels) of each diagram of a Markdown page."""
    out = []
    fences = Page.parse(source).fences if source.suffix == ".md" else []
    for fence in (f for f in fences if f.info.split()[:1] == ["mermaid"]):
        body = fence.body
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
    fence_lines = {f.start for f in Page.from_text(text, source).fences}
    out = []
    for m in FOLDED.finditer(text):
        body = m.group(2).splitlines()
        k = next(k for k, line in enumerate(body) if line.strip())
        if text[: m.start(2)].count("\n") + k in fence_lines:  # the body opens with code
            continue
        first = re.sub(r"\]\([^)]*\)", "]", body[k].strip())  # a link shows its text only
        if len(norm(first)) < 20 or re.search(r"[\\$<|]|^!|^[-*+] |^\d+\. ", first):
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
    return config()["site_url"]


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
# Cover, contents with page numbers, bookmarks, page fill, screen-only words
# --------------------------------------------------------------------------------------------

MIN_TEXT = 80  # characters of text (white space aside) below which a page is almost empty
FOOT = 40  # points: the page number is printed below this height (print.css: a 16 mm margin)
SCREEN_ONLY = ["click to open", "click to expand", "scroll sideways", "scrolls sideways", "copy to clipboard"]


def body_text(text: str) -> str:
    return re.sub(r"\s+", "", text)


def footers(path: Path) -> list[str]:
    """The text printed at the foot of each page (its page number)."""
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(path))
    try:
        return [doc[i].get_textpage().get_text_bounded(0, 0, doc[i].get_width(), FOOT).strip()
                for i in range(len(doc))]
    finally:
        doc.close()


def outline(path: Path) -> list[tuple[int, str, int]]:
    """(depth, title, page) of each bookmark of the PDF, in order (depth 0: the top level)."""
    from pypdf import PdfReader

    reader = PdfReader(path)
    out = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                out.append((depth, str(item.title), reader.get_destination_page_number(item) + 1))

    walk(reader.outline, 0)
    return out


NUMBER_WIDTH = 40  # points: the page number of a contents entry is printed at its right end


def contents_entries(path: Path, end: int) -> list[tuple[str, int]]:
    """("<title> <number>", page it links to) of each link of the contents (pages 1 to
    ``end`` + 1), in order. The title is the link's text at its left, the number the text at
    its right end (its last NUMBER_WIDTH points), whatever order the PDF draws them in."""
    import pypdfium2
    from pypdf import PdfReader

    reader = PdfReader(path)
    names = reader.named_destinations
    doc = pypdfium2.PdfDocument(str(path))
    out = []
    try:
        for number in range(end + 1):
            textpage = doc[number].get_textpage()
            for annot in reader.pages[number].get("/Annots") or []:
                annot = annot.get_object()
                if annot.get("/Subtype") != "/Link" or "/Dest" not in annot:
                    continue
                dest = annot["/Dest"]
                target = names.get(str(dest)) if isinstance(dest, str) else dest
                page = reader.get_destination_page_number(target) + 1 if target is not None else 0
                left, bottom, right, top = (float(v) for v in annot["/Rect"])
                name = textpage.get_text_bounded(left, bottom, right - NUMBER_WIDTH, top)
                number = textpage.get_text_bounded(right - NUMBER_WIDTH, bottom, right, top)
                out.append((" ".join(f"{name} {number}".split()), page))
    finally:
        doc.close()
    return out


def cover_problems(texts: list[str]) -> list[str]:
    from bookcheck import versions

    cover = norm(texts[0]) if texts else ""
    wanted = {"the title": "Autograd, verified", "the torch version": f"torch {versions.pinned()}",
              "how to read it": "How to read this book"}
    problems = [f"the cover (page 1) lacks {what}: {text!r}" for what, text in wanted.items() if norm(text) not in cover]
    if not re.search(r"Built \d{4}-\d{2}-\d{2}", texts[0] if texts else ""):
        problems.append("the cover (page 1) gives no date of the build")
    return problems


def contents_number_problems(entries: list[tuple[str, int]], feet: list[str], texts: list[str]) -> list[str]:
    """Each nav entry, in nav order, listed in the contents with a number N: its link goes to
    page N, page N's foot says N, and page N shows the part's name or the page's own title."""
    problems, at = [], 0
    for name, source in nav():
        found = next((i for i in range(at, len(entries)) if norm(entries[i][0]).startswith(norm(name))), None)
        if found is None:
            problems.append(f"{name!r}: no link in the contents, or out of nav order")
            continue
        at = found + 1
        text, target = entries[found]
        number = re.search(r"(\d+)$", text)
        if not number:
            problems.append(f"{name!r}: no page number in the contents ({text!r})")
            continue
        n = int(number.group(1))
        heading = name if source is None else title(DOCS / source)
        if n != target:
            problems.append(f"{name!r}: the contents say page {n}, its link goes to page {target}")
        elif not 1 <= n <= len(texts):
            problems.append(f"{name!r}: page {n} is not in the PDF")
        elif feet[n - 1] != str(n):
            problems.append(f"{name!r}: page {n} is numbered {feet[n - 1]!r} at its foot")
        elif norm(heading) not in norm(texts[n - 1]):
            problems.append(f"{name!r}: page {n} does not show its heading {heading!r}")
    return problems


def outline_problems(marks: list[tuple[int, str, int]]) -> list[str]:
    """Every part and page of the nav bookmarked at the top level, in nav order (a part by its
    name, a page by its own title), each going to the page where that title is."""
    top = [(norm(t), page) for depth, t, page in marks if depth == 0]
    problems, at = [], 0
    for name, source in nav():
        wanted = norm(name if source is None else title(DOCS / source))
        found = next((i for i in range(at, len(top)) if top[i][0] == wanted), None)
        if found is None:
            problems.append(f"no bookmark for {name!r}, or out of nav order")
        else:
            at = found + 1
    return problems


def sparse_pages(texts: list[str], end: int) -> list[str]:
    """Pages with under MIN_TEXT characters of text, the page number aside, but a part's title
    page (the part's name alone) and the pages of the contents (up to page ``end`` + 1)."""
    parts = {norm(name) for name, source in nav() if source is None}
    out = []
    for i, text in enumerate(texts):
        body = body_text(re.sub(r"^\s*\d+\s*$", "", text, flags=re.M))  # the page number aside
        if len(body) >= MIN_TEXT or i <= end or norm(body) in parts:
            continue
        out.append(f"page {i + 1}: {len(body)} characters: {body[:60]!r}")
    return out


# A title that belongs with what follows it: an output's label, a folded answer's title, the title
# of a folded box of snippets/ code ("snippets/x.py", "The forward: snippets/x.py, section y").
TITLE_LINE = re.compile(r"Output|Answer|(?:[^:]*: )?snippets/\S+\.py(?: ,.*?)?(?: \(click to open\))?")


def last_lines(path: Path) -> list[str]:
    """The lowest line of text of each page, the page number at its foot aside (by position:
    the PDF draws a block's title after its content)."""
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(path))
    out = []
    try:
        for i in range(len(doc)):
            textpage = doc[i].get_textpage()
            rects = [textpage.get_rect(j) for j in range(textpage.count_rects())]
            rects = [r for r in rects if r[1] > FOOT]
            if not rects:
                out.append("")
                continue
            low = min(rects, key=lambda r: r[1])
            line = textpage.get_text_bounded(0, low[1], doc[i].get_width(), (low[1] + low[3]) / 2)
            out.append(" ".join(line.split()))
    finally:
        doc.close()
    return out


def stranded_titles(lines: list[str]) -> list[str]:
    """Pages whose lowest line of text is such a title: its content is on the next page."""
    return [f"page {i + 1} ends with {line!r}" for i, line in enumerate(lines) if TITLE_LINE.fullmatch(line)]


LINE_BREAK = r"[ \t]*\r?\n[ \t]*"


def api_names() -> list[str]:
    """Every PyTorch name the book's code calls, as the API index prints it (bookbuild/apis.py)."""
    names = json.loads(apis.NAMES_FILE.read_text(encoding="utf-8"))["names"]
    return sorted({name for name in names.values() if name}, key=len, reverse=True)


def split_names(texts: list[str], names: list[str]) -> list[str]:
    """Names printed across a line break that is not between two of their tokens: a break may
    come before a dot or after an underscore ("torch.autograd" / ".grad", "clip_" / "grad_norm_"),
    never inside a word ("torch.use_determini" / "stic_algorithms")."""
    out = []
    for i, text in enumerate(texts):
        flat = re.sub(LINE_BREAK, "", text)
        for name in names:
            if "\n" not in text or name not in flat:
                continue
            chars = [re.escape(c) for c in name]
            pattern = "".join(c + f"(?:{LINE_BREAK})?" for c in chars[:-1]) + chars[-1]
            for m in re.finditer(pattern, text):
                pieces = re.split(LINE_BREAK, m.group(0))
                if any(not (after.startswith(".") or before.endswith("_")) for before, after in zip(pieces, pieces[1:])):
                    out.append(f"page {i + 1}: {' / '.join(pieces)!r}")
    return out


def screen_words(texts: list[str]) -> list[str]:
    return [f"page {i + 1}: {phrase!r}" for i, text in enumerate(texts) for phrase in SCREEN_ONLY
            if norm(phrase) in norm(text)]


def test_the_cover_gives_title_torch_version_date_and_how_to_read(texts):
    assert cover_problems(texts) == []


def test_the_contents_give_each_part_and_page_its_page_number(book_pdf, texts):
    end = contents_end(texts)
    entries = contents_entries(book_pdf, end)
    assert len(entries) >= len(nav())
    assert contents_number_problems(entries, footers(book_pdf), texts) == []


def test_every_part_and_page_is_bookmarked_and_the_pdf_is_tagged(book_pdf):
    from pypdf import PdfReader

    marks = outline(book_pdf)
    assert outline_problems(marks) == []
    assert len(marks) > 2 * len(pages()), "the pages' sections are bookmarked too"
    root = PdfReader(book_pdf).trailer["/Root"]
    assert "/StructTreeRoot" in root and root["/MarkInfo"]["/Marked"], "not a tagged PDF"


def test_no_page_is_almost_empty(texts):
    assert sparse_pages(texts, contents_end(texts)) == []


def test_no_title_or_label_is_left_at_the_foot_of_a_page(book_pdf):
    assert stranded_titles(last_lines(book_pdf)) == []


def test_names_break_between_tokens_only(texts):
    """Code in a narrow table column wraps at token boundaries (overrides/print_hooks.py,
    docs/assets/css/print.css): no name of the API index is split inside a word."""
    names = api_names()
    assert len(names) >= 200
    assert split_names(texts, names) == []


def test_no_words_meant_for_a_screen(texts):
    assert screen_words(texts) == []


def test_new_checks_reject_what_they_name(book_pdf, texts):
    """Each fault made in the book's own data: a page holding only a code box's title (and
    a blank page), pages ending with an "Output" label and with a code box's title, a
    screen-only phrase, a name split inside a word, a bookmark dropped, a contents number off
    by one, a page whose foot gives another number, a cover without its date."""
    end = contents_end(texts)
    n = end + 20
    title_alone = texts[:n] + ["snippets/autograd_graph.py\n", ""] + texts[n:]
    assert len(sparse_pages(title_alone, end)) == len(sparse_pages(texts, end)) + 2
    lines = last_lines(book_pdf)
    stranded = ["Output", "snippets/guards.py , gradient checks"]
    assert len(stranded_titles(lines[:n] + stranded + lines[n + 2:])) == len(stranded_titles(lines)) + 2
    assert screen_words(texts[:n] + ["snippets/x.py (click to open)"]) == ["page %d: 'click to open'" % (n + 1)]
    names = api_names()
    split = ["torch.use_determini\nstic_algorithms(True)", "torch.autograd\n.grad and torch.nn.utils.clip_\ngrad_norm_"]
    assert split_names(split, names) == ["page 1: 'torch.use_determini / stic_algorithms'"]
    marks = outline(book_pdf)
    dropped = [m for m in marks if not (m[0] == 0 and norm(m[1]) == norm(title(pages()[5])))]
    assert len(outline_problems(dropped)) == 1
    entries = contents_entries(book_pdf, end)
    feet = footers(book_pdf)
    shifted = [(re.sub(r"(\d+)$", lambda m: str(int(m.group(1)) + 1), t), page) if i == 7 else (t, page)
               for i, (t, page) in enumerate(entries)]
    assert len(contents_number_problems(shifted, feet, texts)) == 1
    target = entries[7][1]
    renumbered = feet[: target - 1] + [str(target + 1)] + feet[target:]
    assert len(contents_number_problems(entries, renumbered, texts)) == 1
    assert cover_problems([texts[0].replace("Built", "Made")] + texts[1:])


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

# Each scheme and each width once, in one load of the page, a reader's resize and palette toggle
# between the two (site_a11y.axe_in_modes): axe takes about 45 s a mode on this page, whose
# content is every page's, each checked on its own in the light scheme at 390 px and one page per
# template in all four modes (tests/test_site_a11y.py).
MODES = (("light", 1440), ("dark", 390))
MATH_SETTLED = """() => document.readyState === "complete"
  && (!document.fonts || document.fonts.status === "loaded")
  && Array.from(document.querySelectorAll(".arithmatex")).every((el) => el.querySelector(".katex"))
  && Array.from(document.querySelectorAll("div.arithmatex")).every((el) => el.hasAttribute("data-overflow"))"""


def test_the_print_page_has_no_serious_or_critical_axe_violation(book_pdf, browser):
    """The page the PDF is printed from is a page of the site too (print_page/, the whole book):
    axe-core finds no serious or critical violation on it, in each scheme and at
    each width (MODES). Checked here, beside the PDF made from it, since axe takes minutes on it.
    Its notebooks are shown as on their own pages (overrides/site_hooks.py, notebook_html):
    with nbconvert's markup it failed color-contrast (#408080 comments, 3.54:1 on the dark
    scheme's code background) and scrollable-region-focusable (each cell's code)."""
    from bookcheck import site_a11y
    from bookcheck import site_check

    def axe_in(b, url):
        context = b.new_context(viewport={"width": MODES[0][1], "height": 900}, color_scheme=MODES[0][0])
        try:
            page = context.new_page()
            page.goto(url, wait_until="load", timeout=180000)
            # every formula typeset and measured (a wide one is made a scroll region reachable by
            # keyboard once measured); its diagrams, drawn in the PDF's checks and checked by axe
            # on their own pages, are left as they load here (drawing all 47 costs minutes)
            page.wait_for_function(MATH_SETTLED, timeout=180000, polling=200)
            return site_a11y.axe_in_modes(page, MODES)
        finally:
            context.close()

    with site_check.serve(book_pdf.parent) as base:
        found = browser.run(axe_in, f"{base}print_page/")
    assert list(found) == [f"{s}-{w}" for s, w in MODES]
    problems = {mode: p for mode, p in found.items() if p}
    assert problems == {}, "\n".join(f"{mode}: {p}" for mode, ps in problems.items() for p in ps)
