"""General sentences of the prose, and whether a block shows each one.

A *general sentence* states what torch, or the book's code, does in general: it holds, outside
inline code, one of the words of ``STRONG`` (always, never, only, generally, in general,
cannot, can't, raise, raises, whenever, regardless) anywhere, or a ``QUANTIFIER`` (every,
any, all, none, nothing, no + a word) where it opens a clause.
The prose is every line of a page in docs/ that is not in a fence (code, output, diagram),
not front matter, not an HTML comment, not a heading, not an admonition's or a tab's title,
not display math, not the list of what a page teaches (the items under "After this page you
can:", which the page's sections show); each cell of a Markdown table is prose on its own,
placed at its whole table (a block right after a table is next to every cell). A notebook of
docs/ is read as ``notebook_text`` gives it: its Markdown cells are prose, its code cells run
blocks (the set-up cell aside), and a sentence is placed at its cell ("notebook, cell N").

A general sentence is

- *shown* when a block the harness runs (a ``python``, ``sh`` or ``bash`` fence) opens at most
  ``WINDOW`` prose lines after it, or closes (its output block included) at most ``WINDOW``
  prose lines before it, with no heading in between;
- *linked* when it, or the paragraph, list item or table cell it is in, links to a section
  (``page.md#anchor`` or ``#anchor``, not a page's title) that holds a block the harness runs;
- *reviewed* when ``claims_reviewed.toml`` holds an entry for its page (``page``, or one of
  ``pages`` for a sentence several pages share, such as a generated notebook cell) and its
  normalised text (``normalise``: Markdown marks and link targets removed, spaces collapsed,
  case folded), with
  a resolution: ``shown_by = "docs/page.md#anchor"`` (a section that holds a run block, checked)
  or ``kind`` (definition, advice, reader, book, not-general) and ``why``;
- else *open*.

Each page is read by the page model (bookcheck.model.Page): its prose lines, its headings with
the anchors the site's table of contents gives them, their sections, and its run blocks.

``python -m bookcheck.claims`` prints every open entry as ``file:line: sentence``, every stale
review (its sentence is no longer on its page, or its ``shown_by`` holds no run block), and a
count summary. It reads the pages only (no torch): a second or two for the whole book.
"""

from __future__ import annotations

import bisect
import json
import re
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import DOCS, ROOT, model, notebooks, rel

REVIEWED = Path(__file__).with_name("claims_reviewed.toml")

# Pages being rewritten: their open entries are listed but do not fail tests/test_claims.py.
# Empty it once their rewrites have landed and their entries are resolved.
PAGES_UNDER_REWRITE = (
)

# The words that make a sentence general. STRONG words count anywhere outside inline code.
# A quantifier (every, any, all, none, nothing, no + a word) counts where it opens a clause:
# at the start of the sentence, after , ; : ( or a dash, or after and, but, so, then, that,
# where, because, when, while ("Every tensor carries ...", "..., and no error is raised").
# Inside a phrase ("for every element", "checks every value") it only quantifies, and
# "no" before longer, grad, more than or deadline is not general. "must" is left out: in
# this book it prescribes to the reader ("you must ...") far more often than it states a rule.
STRONG = re.compile(r"\b(always|never|only|generally|in general|cannot|can't|raises?|whenever|regardless)\b",
                    re.IGNORECASE)
QUANTIFIER = re.compile(
    r"(?:^|[,;:(—]\s*|\b(?:and|but|so|then|that|where|because|when|while)\s+)"
    r"(every(?:one|thing)?|any(?:one|thing)?|all|none|nothing|no(?= (?!longer\b|grad\b|more than\b|deadline\b)\w))\b",
    re.IGNORECASE,
)


def is_general(masked: str) -> bool:
    """Whether a sentence (its inline code masked) holds a generality word, as defined above."""
    return bool(STRONG.search(masked) or QUANTIFIER.search(masked))


KINDS = {
    "definition": "defines a word or names a thing; it states no behaviour",
    "advice": "tells the reader what to do; it states no behaviour of torch or the book's code",
    "reader": "a statement about the reader, a model or a training run, not about torch",
    "book": "a statement about the book (its pages, its checks, what it shows)",
    "not-general": "the generality word does not make a general claim here (a count, a quote, a name)",
}
WINDOW = 6  # prose lines between a sentence and a block that shows it
KINDS_OF_RESULT = ("shown", "linked", "reviewed", "open")

ADMONITION = re.compile(r'^\s*(?:!!!|\?\?\?\+?)\s*[\w-]+(?:\s+"[^"]*")?\s*$')
TAB = re.compile(r'^\s*===\+?\s+"')
LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+\.)\s+")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[A-Z`\[*(\"“])")


@dataclass
class Sentence:
    page: str  # relative path
    line: int  # 1-based line where it starts
    text: str  # as written (one line)
    end_line: int = 0
    section: int = 0  # index of the section (headings split sections)
    links: list = field(default_factory=list)  # link targets
    result: str = ""
    how: str = ""  # the block, the link or the review
    where: str = ""  # "page:line", or "notebook, cell N" (the cell counted from 1)

    @property
    def key(self) -> str:
        return normalise(self.text)


def normalise(text: str) -> str:
    """The sentence as a review entry keys it: link targets, Markdown marks and HTML tags
    removed, spaces collapsed, case folded (a moved line keeps its entry, a reworded one does not)."""
    text = LINK.sub(r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"[`*]", "", text)
    return re.sub(r"\s+", " ", text).strip().casefold()


def _mask_code(text: str) -> str:
    """The text with inline code replaced by x's of the same length (code is not prose)."""
    return CODE_SPAN.sub(lambda m: "`" + "x" * (len(m.group(0)) - 2) + "`", text)


@dataclass
class ClaimsPage:
    """A page's general sentences, with what the page model gives to place them."""
    path: Path
    lines: list
    sentences: list
    run_lines: list  # (first, last) 0-based line ranges of run blocks, output fence included
    sections: list  # bookcheck.model.Section of each heading (its anchor, level and span)
    section_of: list  # section index of each line (how many headings open at or above it)
    cell_of: list | None = None  # a notebook: the cell (from 1) of each line of notebook_text

    def place(self, index: int) -> str:
        """Where line ``index`` (0-based) is, as a reader finds it: page:line, or notebook, cell N."""
        page = rel(self.path).as_posix()
        return f"{page}, cell {self.cell_of[index]}" if self.cell_of else f"{page}:{index + 1}"


def _units(page: model.Page):
    """Prose units (paragraphs, list items, table cells) as lists of (line index, text)."""
    lines, prose = page.lines, page.prose
    headings = {h.line for h in page.headings}
    in_comment = in_math = in_goals = False
    unit: list = []
    table: list = []
    for i, line in enumerate(lines):
        s = line.strip()
        if table and not s.startswith("|"):  # a table ends: each cell spans the whole table
            for _, cell in table:
                yield [(table[0][0], cell), (table[-1][0], "")]
            table = []
        if in_goals:
            if not s or LIST_ITEM.match(s) or line.startswith(" "):
                continue
            in_goals = False
        if s.endswith("you can:") and prose[i]:
            in_goals = True
            if unit:
                yield unit
                unit = []
            continue
        if in_comment:
            in_comment = "-->" not in s
            continue
        if s.startswith("<!--"):
            in_comment = "-->" not in s
            if unit:
                yield unit
                unit = []
            continue
        if s == "$$" or (s.startswith("$$") and not s.endswith("$$")) or (in_math and s.endswith("$$")):
            in_math = not in_math
            continue
        if in_math or s.startswith("$$"):
            continue
        if not prose[i] or not s or i in headings or ADMONITION.match(line) or TAB.match(line) \
                or s.startswith(("--8<--", "<", "*[")):
            if unit:
                yield unit
                unit = []
            continue
        s = re.sub(r"^(>\s*)+", "", s)
        if s.startswith("|"):
            if unit:
                yield unit
                unit = []
            if re.fullmatch(r"[|\s:-]+", s):
                continue
            for cell in re.split(r"(?<!\\)\|", s.strip("|")):
                if cell.strip():
                    table.append((i, cell.strip()))
            continue
        item = LIST_ITEM.match(s)
        if item:
            if unit:
                yield unit
            unit = [(i, s[item.end():])]
            continue
        unit.append((i, s))
    for _, cell in table:
        yield [(table[0][0], cell), (table[-1][0], "")]
    if unit:
        yield unit


def _split(unit):
    """Sentences of a unit: (first line, last line, text)."""
    text, starts = "", []
    for i, s in unit:
        if text:
            text += " "
        starts.append((len(text), i))
        text += s
    masked = _mask_code(text)
    masked = LINK.sub(lambda m: "[" + m.group(1) + "](" + "x" * len(m.group(2)) + ")", masked)

    def line_at(pos):
        found = starts[0][1]
        for offset, i in starts:
            if offset <= pos:
                found = i
        return found

    spans_to = unit[-1][0] if len(unit) > 1 and unit[-1][1] == "" else None  # a table cell
    pos = 0
    cuts = [m.end() for m in SENTENCE_END.finditer(masked)] + [len(text)]
    for cut in cuts:
        piece = text[pos:cut].strip()
        if piece:
            last = spans_to if spans_to is not None and cut == len(text) else line_at(max(pos, cut - 1))
            yield line_at(pos), last, piece, masked[pos:cut]
        pos = cut


def notebook_text(path: Path, text: str | None = None) -> tuple[str, list[int]]:
    """A notebook as this scan reads it, and the cell (from 1) of each of its lines: its Markdown
    cells as written, each code cell as a python fence (the notebooks step runs every code cell
    and compares its output), cells apart by a blank line. A fence inside a Markdown cell (a
    reference solution shown folded, a task's signature) is not run there: it is read as text;
    so is the set-up cell (its first line starts with notebooks.SETUP_MARK), which installs,
    imports and prints torch's version and so shows none of the sentences around it."""
    cells = json.loads(Path(path).read_text(encoding="utf-8") if text is None else text)["cells"]
    out, cell_of = [], []
    for n, cell in enumerate(cells, 1):
        source = "".join(cell["source"]).splitlines()
        if cell["cell_type"] == "code":
            set_up = source[:1] and source[0].startswith(notebooks.SETUP_MARK)
            source = ["```text" if set_up else "```python", *source, "```"]
        elif cell["cell_type"] == "markdown":
            fences = {f.start: f for f in model.Page.from_lines(source, path).fences}
            source = [" " * f.indent + f.char * f.width + "text" if (f := fences.get(i)) else line
                      for i, line in enumerate(source)]
        else:
            continue
        out += source + [""]
        cell_of += [n] * (len(source) + 1)
    return "\n".join(out), cell_of


def read_page(path: Path, text: str | None = None) -> ClaimsPage:
    cell_of = None
    if Path(path).suffix == ".ipynb":
        text, cell_of = notebook_text(path, text)
    page_model = model.Page.parse(path) if text is None else model.Page.from_text(text, path)
    lines = page_model.lines
    run_lines = [(b.fence.start, (b.output_fence or b.fence).end)  # the output fence belongs to the block
                 for b in page_model.blocks if b.kind == "run"]
    starts = [h.line for h in page_model.headings]
    section_of = [bisect.bisect_right(starts, i) for i in range(len(lines))]
    page = rel(path).as_posix()
    where = ClaimsPage(Path(path), lines, [], [], [], [], cell_of).place
    sentences = []
    for unit in _units(page_model):
        unit_links = [m.group(2) for m in LINK.finditer("\n".join(text for _, text in unit))]  # a link may wrap
        for first, last, piece, masked in _split(unit):
            if not is_general(masked.strip()):
                continue
            sentences.append(Sentence(page, first + 1, piece, last + 1, section_of[first] if section_of else 0,
                                      unit_links, where=where(first)))
    return ClaimsPage(Path(path), lines, sentences, run_lines, page_model.sections, section_of, cell_of)


def _prose_between(page: ClaimsPage, a: int, b: int) -> int:
    """Non-blank lines strictly between line indexes a and b that are not marker comments."""
    return sum(1 for i in range(a + 1, b) if page.lines[i].strip() and not page.lines[i].strip().startswith("<!--"))


def shown_nearby(page: ClaimsPage, s: Sentence) -> str | None:
    first, last = s.line - 1, s.end_line - 1
    for start, end in page.run_lines:
        if start > last and page.section_of[start] == page.section_of[last] \
                and _prose_between(page, last, start) <= WINDOW:
            return page.place(start)
        if end < first and page.section_of[end] == page.section_of[first] \
                and _prose_between(page, end, first) <= WINDOW:
            return page.place(start)
    return None


def section_has_run_block(page: ClaimsPage, anchor: str) -> bool:
    for section in page.sections:
        if section.heading.anchor == anchor and section.heading.level > 1:  # a title spans the whole page
            return any(section.start <= start <= section.end for start, _ in page.run_lines)
    return False


class Book:
    """Every page of docs/, read once."""

    def __init__(self, paths=None):
        self.paths = sorted(paths) if paths is not None else sorted([*DOCS.rglob("*.md"), *DOCS.rglob("*.ipynb")])
        self.pages = {rel(p).as_posix(): read_page(p) for p in self.paths}

    def page_for(self, target: str, origin: str):
        if target.startswith(("http:", "https:", "mailto:")):
            return None, None
        target_path, _, anchor = target.partition("#")
        if target_path:
            # a page links a page's source (part1/forks.md); a notebook links the site's address
            # of a page (../../part1/forks/), from its own address (notebooks/<name>/)
            base = (ROOT / origin).parent
            if origin.endswith(".ipynb"):
                base = base / Path(origin).stem
            try:
                key = rel((base / target_path).resolve()).as_posix()
            except ValueError:
                return None, None
            if not key.endswith(".md"):
                key = key + ".md" if key + ".md" in self.pages else key + "/index.md"
        else:
            key = origin
        return self.pages.get(key), anchor

    def linked(self, s: Sentence) -> str | None:
        for target in s.links:
            page, anchor = self.page_for(target, s.page)
            if page is not None and anchor and section_has_run_block(page, anchor):
                return target
        return None

    def anchor_holds_block(self, where: str) -> bool:
        page_path, _, anchor = where.partition("#")
        page = self.pages.get(page_path)
        return page is not None and bool(anchor) and section_has_run_block(page, anchor)


def load_reviews(path: Path = REVIEWED) -> list[dict]:
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return data.get("claim", [])


def _per_page(reviews: list[dict]):
    """(entry number, review of one page): an entry that names ``pages`` (a list) stands for
    one review per page, each of which must hold the sentence."""
    for n, r in enumerate(reviews, 1):
        pages = r.get("pages")
        if pages is None or "page" in r:
            yield n, r
        elif isinstance(pages, list) and pages and all(isinstance(page, str) and page for page in pages):
            for page in pages:
                yield n, {**{k: v for k, v in r.items() if k != "pages"}, "page": page}
        else:
            yield n, {**r, "page": None}


def classify(book: Book, reviews: list[dict]):
    """Each general sentence with its result; and the stale or malformed reviews."""
    index, problems = {}, []
    for n, r in _per_page(reviews):
        where = f"{rel(REVIEWED)} entry {n} ({r.get('page') or r.get('pages')})"
        if not r.get("page") or not r.get("sentence") or "pages" in r:
            problems.append(f"{where}: an entry needs a sentence and either page (a path) or pages "
                            "(a list of paths)")
            continue
        if "shown_by" in r:
            if not book.anchor_holds_block(r["shown_by"]):
                problems.append(f"{where}: shown_by {r['shown_by']!r} is not a section that holds a run block")
        elif r.get("kind") not in KINDS or not str(r.get("why", "")).strip():
            problems.append(f"{where}: give shown_by = \"page.md#anchor\", or kind (one of "
                            f"{', '.join(KINDS)}) and why")
        index[(r["page"], normalise(r["sentence"]))] = r
    used = set()
    sentences = []
    for page in book.pages.values():
        for s in page.sentences:
            near = shown_nearby(page, s)
            link = None if near else book.linked(s)
            review = index.get((s.page, s.key))
            if near:
                s.result, s.how = "shown", near
            elif link:
                s.result, s.how = "linked", link
            elif review:
                s.result = "reviewed"
                s.how = review.get("shown_by") or review.get("kind")
            else:
                s.result = "open"
            if review:
                used.add((s.page, s.key))
            sentences.append(s)
    for key, r in index.items():
        if key not in used and r["page"] in book.pages:
            problems.append(f"{rel(REVIEWED)}: stale review, no longer on {r['page']}: {r['sentence']!r}")
        elif r["page"] not in book.pages and (Path(r["page"]).parent == Path("docs") or r["page"].startswith("docs/")):
            problems.append(f"{rel(REVIEWED)}: stale review, no page {r['page']}")
    return sentences, problems


def under_rewrite(page: str) -> bool:
    return any(page == p or (p.endswith("/") and page.startswith(p)) for p in PAGES_UNDER_REWRITE)


def summary(sentences) -> str:
    counts = Counter(s.result for s in sentences)
    kinds = Counter(s.how if s.how in KINDS else "shown by a named section's block"
                    for s in sentences if s.result == "reviewed")
    by_kind = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    held = sum(1 for s in sentences if s.result == "open" and under_rewrite(s.page))
    return (f"{len(sentences)} general sentences: {counts['shown']} shown by a nearby block, "
            f"{counts['linked']} linked to a section with a block, {counts['reviewed']} reviewed"
            f"{' (' + by_kind + ')' if by_kind else ''}, {counts['open']} open"
            f" ({held} on pages under rewrite)")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    book = Book()
    sentences, problems = classify(book, load_reviews())
    show_all = "--all" in argv
    for s in sentences:
        if s.result == "open" or show_all:
            tag = "" if s.result == "open" else f" [{s.result}: {s.how}]"
            print(f"{s.where}: {s.text}{tag}")
    for p in problems:
        print(p)
    print(summary(sentences))
    failing = [s for s in sentences if s.result == "open" and not under_rewrite(s.page)]
    return 1 if failing or problems else 0


if __name__ == "__main__":
    sys.exit(main())
