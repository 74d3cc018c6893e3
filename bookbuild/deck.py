"""The drills as a spaced-repetition deck: an Anki package (.apkg) and a CSV (front, back, tags).

A drill is a ``### N. Title`` heading under a ``## section`` of a drill page
(``docs/reference/drills*.md``), or under the ``## Drills`` section of any other page (a chapter
that ends with its own drills, CHAPTER_SECTION): a prompt and its code, then a folded
``??? question "Answer"`` block. One note per drill:

    front   the heading, the prompt, its code (``--8<--`` lines expanded, as the site shows it)
            and what that code prints where the page shows it
    back    the answer block as the page shows it: its text, its code and the verified output
            of each block (``Block.expected_output`` of the page model), then a link to the drill
    tags    page::<page>, kind::<kind>, section::<section> (on a chapter page, its title up to
            the first colon: the chapter's drills are one topic)

Each page is read by the page model (bookcheck.model.Page: its headings and their anchors, its
fences and blocks); its prose is rendered with the site's Markdown extensions and options
(mkdocs.yml, bookcheck.model.markdown_extensions), but for those of NOT_ON_A_CARD.

The kind is the heading's label where it has one (``### 3. Predict: ...``, ``### 9. Write the
line: ...``: the first word, one of KINDS), else its series' default (DEFAULT_KIND), else the section.
A note's guid comes from the page's path, the drill's number and its title without the label,
case-folded: rebuilding, or labelling a heading, keeps a reader's review history. A page that
continues a series (its numbers go on from the page before it, SERIES) gives its notes the guid
of the series' first page, where its drills were before the series was split: moving a drill
between the pages of one series keeps its history too.

Used by the build (overrides/hooks.py writes both files into the site's downloads/) and by
tests/test_deck.py.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import posixpath
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bookcheck import DOCS, HarnessError, rel
from bookcheck.markers import MARKER_LINE
from bookcheck.model import Page
from bookcheck.model import expand_snippets, snippet_files

PAGES = "reference/drills*.md"  # relative to docs/
CHAPTER_SECTION = "Drills"  # on any other page, the ## section whose ### N. headings are drills
APKG = "autograd-drills.apkg"
CSV = "autograd-drills.csv"
DECK_ID = 1_733_510_417  # fixed: Anki matches an imported deck and its note type by id
MODEL_ID = 1_733_510_418
DECK_NAME = "Autograd, verified: drills"
KINDS = ("Predict", "Write", "Derive", "Diagnose", "Explain", "Fix")  # a heading's label starts with one
# A series of drill pages: its first page, then the pages that continue it, in order. Numbers go on
# across the pages of a series and are unique in it (tests/test_deck.py).
SERIES = {
    "reference/drills.md": ["reference/drills-accumulation.md", "reference/drills-functions.md",
                            "reference/drills-failures.md"],
    "reference/drills-diagnose.md": ["reference/drills-diagnose-2.md", "reference/drills-diagnose-3.md",
                                     "reference/drills-diagnose-4.md"],
    "reference/drills-write-it.md": ["reference/drills-fix.md"],
}
FIRST_PAGE = {page: first for first, rest in SERIES.items() for page in rest}
# The kind of an unlabelled drill, per series (its first page; every page of the series): else the section.
DEFAULT_KIND = {"reference/drills.md": "Predict", "reference/drills-write-it.md": "Write"}

HEADING = re.compile(r"^(#{1,6}) (.*?)\s*$")
DRILL = re.compile(r"^(\d+)\. (.+)$")
LABEL = re.compile(r"^(" + "|".join(KINDS) + r")\b[^:`]*:\s+(.+)$")
ANSWER = re.compile(r'^\?\?\?\+? question "Answer"\s*$')
TAB = re.compile(r'^===\+?\s+"(.*)"\s*$')
NESTED = re.compile(r'^\?\?\?\+? \w+ "(.*)"\s*$')

CSS = """\
.card { font-family: system-ui, sans-serif; font-size: 17px; text-align: left; max-width: 46em;
        margin: 0 auto; line-height: 1.45; }
pre { text-align: left; white-space: pre; overflow-x: auto; padding: .5em .7em; font-size: 14px;
      background: rgba(127, 127, 127, .12); border-radius: 4px; }
pre.output { border-left: 3px solid rgba(127, 127, 127, .6); }
code { font-family: ui-monospace, Menlo, Consolas, monospace; }
"""


@dataclass
class Drill:
    page: str  # the page's path under docs/, e.g. "reference/drills.md"
    number: int
    title: str  # as the heading writes it (Markdown), without "N. "
    kind: str
    section: str
    url: str  # of the drill on the site: the page's URL and the heading's anchor
    front: str  # HTML
    back: str  # HTML
    blocks: list = field(default_factory=list)  # model.Block of the answer, in order

    @property
    def guid(self) -> str:
        import genanki

        return genanki.guid_for(FIRST_PAGE.get(self.page, self.page), self.number, _unlabelled(self.title))

    @property
    def tags(self) -> list[str]:
        def tag(text):
            return re.sub(r"\s+", "_", text.strip())

        return [f"page::{tag(Path(self.page).stem)}", f"kind::{tag(self.kind)}", f"section::{tag(self.section)}"]


def _unlabelled(title: str) -> str:
    """The title that names a drill in its guid: without its label, or a leading kind word
    ("Write: the copy" and "Write the copy" give "the copy"), case-folded."""
    label = LABEL.match(title)
    if label:
        title = label.group(2)
    else:
        title = re.sub(r"^(" + "|".join(KINDS) + r")\s+", "", title)
    return " ".join(title.split()).casefold()


def pages(docs: Path = DOCS) -> list[Path]:
    """The drill pages, then the other pages with drills under a ``## Drills`` section."""
    docs = Path(docs)
    drill_pages = sorted(docs.glob(PAGES))
    chapters = []
    for path in sorted(docs.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if path not in drill_pages and f"\n## {CHAPTER_SECTION}\n" in text and _chapter_drills(Page.kept(path, text)):
            chapters.append(path)
    return drill_pages + chapters


def _chapter_drills(model: Page) -> list:
    """The level-3 headings of a page's ``## Drills`` section."""
    section, found = None, []
    for head in model.headings:
        if head.level <= 2:
            section = head.text if head.level == 2 else None
        elif head.level == 3 and section == CHAPTER_SECTION:
            found.append(head)
    return found


# The site's Markdown extensions (mkdocs.yml) that a card leaves out, and why.
NOT_ON_A_CARD = {
    "toc": "a card's heading takes no id and no permalink: the card links to the drill on the site",
}


def _markdown():
    """Python-Markdown with the site's extensions and options (bookcheck.model.markdown_extensions)."""
    import markdown

    from bookcheck.model import markdown_extensions

    names, configs = markdown_extensions(leave_out=NOT_ON_A_CARD)
    return markdown.Markdown(extensions=names, extension_configs=configs)


def _url(page: str, target: str, base_url: str) -> str:
    """The site's address of a link written on ``page`` (directory URLs, as mkdocs.yml builds)."""
    path, _, anchor = target.partition("#")
    if path:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    else:
        path = page
    if path.endswith(".md"):
        path = path[:-3]
        path = path[: -len("index")] if path == "index" or path.endswith("/index") else path + "/"
    return base_url + path + ("#" + anchor if anchor else "")


def _site_links(html_text: str, page: str, base_url: str) -> str:
    def fix(m):
        target = html.unescape(m.group(2))
        if re.match(r"^[a-z][a-z0-9+.-]*:|^/", target):
            return m.group(0)
        return f'{m.group(1)}="{html.escape(_url(page, target, base_url))}"'

    return re.sub(r'\b(href|src)="([^"]*)"', fix, html_text)


def _pre(text: str, syntax: str, output: bool = False) -> str:
    cls = ' class="output"' if output else ""
    lang = f' class="language-{syntax}"' if syntax and not output else ""
    return f"<pre{cls}><code{lang}>{html.escape(text.rstrip(chr(10)))}</code></pre>"


def _anchors(page) -> dict[int, str]:
    """The id the site's toc gives each heading, by line index (the page model's; ``page``: a
    Page, or a page's lines)."""
    if not isinstance(page, Page):
        page = Page.from_lines(page)
    return {h.line: h.anchor for h in page.headings if HEADING.match(page.lines[h.line])}


class _Renderer:
    """Turns a region of a page (line indices) into HTML: prose through Markdown, every fence
    from the page model (code as the site shows it, each verified output under its block)."""

    def __init__(self, model: Page, page: str, base_url: str):
        self.path, self.page, self.lines, self.base_url = model.path, page, model.lines, base_url
        self.title = model.title or page
        self.blocks = {b.lineno: b for b in model.blocks}
        self.fences = {f.start: f for f in model.fences}
        self.md = _markdown()

    def prose(self, chunk: list[str]) -> str:
        text = "\n".join(chunk).strip("\n")
        if not text.strip():
            return ""
        self.md.reset()
        return _site_links(self.md.convert(text), self.page, self.base_url)

    def region(self, start: int, stop: int, indent: int = 0) -> tuple[str, list]:
        out, chunk, shown, i = [], [], [], start
        while i < stop:
            line = self.lines[i]
            body = line[indent:] if line[:indent].strip() == "" else line.lstrip()
            s = body.strip()
            if i in self.fences:
                out.append(self.prose(chunk))
                chunk = []
                block = self.blocks.get(i + 1)
                end = self.fences[i].end
                if block is None:
                    raise HarnessError(f"{rel(self.path)}:{i + 1}: a fence the page model does not read")
                code = expand_snippets(block.code) if block.runnable else block.code
                out.append(_pre(code, block.syntax, output=block.kind == "version output"))
                if block.output_fence is not None:
                    out.append(_pre(block.expected_output, "text", output=True))
                    end = block.output_fence.end
                shown.append(block)
                i = end + 1
                continue
            if MARKER_LINE.match(line + "\n"):
                pass
            elif NESTED.match(s):  # a fold inside the answer (a follow-up's answer): its title, then its body
                out.append(self.prose(chunk))
                chunk = []
                out.append(f"<p><strong>{html.escape(NESTED.match(s).group(1))}</strong></p>")
                indent += 4
            elif TAB.match(s):  # a content tab's label (e.g. an output per torch version)
                chunk += ["", f"*{TAB.match(s).group(1)}*", ""]
            else:
                chunk.append(body)
            i += 1
        out.append(self.prose(chunk))
        return "\n".join(part for part in out if part), shown


def drills(path: Path, docs: Path = DOCS, base_url: str = "") -> list[Drill]:
    """Every drill of one page (a drill page, or a chapter's ``## Drills`` section), in page order."""
    path, docs = Path(path), Path(docs)
    page = path.relative_to(docs).as_posix()
    model = Page.kept(path)
    lines = model.lines
    anchors = _anchors(model)
    render = _Renderer(model, page, base_url)
    heads = [h for h in model.headings if h.line in anchors]  # the page model's headings, in order
    chapter = None if path.match(PAGES) else {h.line for h in _chapter_drills(model)}
    topic = render.title.split(": ")[0].replace("`", "")  # a chapter's drills: the chapter's topic
    found, section = [], ""
    for n, head in enumerate(heads):
        i, level, text = head.line, head.level, head.text
        if level == 2:
            section = text
        if level != 3 or not section or (chapter is not None and i not in chapter):
            continue
        where = f"{rel(path)}:{i + 1}"
        drill = DRILL.match(text)
        if not drill:
            raise HarnessError(f"{where}: a drill's heading is '### N. Title', not '### {text}'")
        stop = heads[n + 1].line if n + 1 < len(heads) else len(lines)
        answer = next((j for j in range(i + 1, stop) if ANSWER.match(lines[j])), None)
        if answer is None:
            raise HarnessError(f'{where}: drill without a ??? question "Answer" block')
        end = answer + 1  # the answer's body: its indented lines and the blank lines between them
        while end < stop and (not lines[end].strip() or lines[end].startswith("    ")):
            end += 1
        number, title = int(drill.group(1)), drill.group(2)
        label = LABEL.match(title)
        kind = label.group(1) if label else DEFAULT_KIND.get(FIRST_PAGE.get(page, page), section)
        heading = render.prose([f"### {text}"])
        question, _ = render.region(i + 1, answer)
        back, shown = render.region(answer + 1, end, indent=4)
        url = _url(page, "#" + anchors[i], base_url)
        link = f'<p>On the site: <a href="{html.escape(url)}">{html.escape(render.title)}, drill {number}</a></p>'
        found.append(Drill(page, number, title, kind, section if chapter is None else topic, url,
                           front=heading + "\n" + question, back=back + "\n" + link, blocks=shown))
    return found


def deck(docs: Path = DOCS, base_url: str = "") -> list[Drill]:
    """Every drill of every page that has drills (``pages``)."""
    return [d for path in pages(docs) for d in drills(path, docs, base_url)]


def sources(docs: Path = DOCS) -> list[Path]:
    """The files the deck is built from: the pages with drills, the files their blocks include, this module."""
    files = {Path(__file__)}
    for path in pages(docs):
        files.add(path)
        files.update(f for b in Page.kept(path).blocks for f in snippet_files(b.code))
    return sorted(files)


def key(docs: Path = DOCS, base_url: str = "") -> str:
    digest = hashlib.sha256(base_url.encode())
    for f in sources(docs):
        digest.update(str(f).encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


_BUILT: dict = {}  # key -> {file name: bytes}; kept across the rebuilds of `make serve`


def files(docs: Path = DOCS, base_url: str = "") -> dict[str, bytes]:
    """The .apkg and the CSV as bytes, built once per content of their sources and the site's
    address (the build hook writes them into downloads/ on every build; this module, unlike the
    hooks, is imported once per process)."""
    k = key(docs, base_url)
    if k not in _BUILT:
        with tempfile.TemporaryDirectory() as tmp:
            _BUILT.clear()
            _BUILT[k] = {p.name: p.read_bytes() for p in write(Path(tmp), docs, base_url)}
    return _BUILT[k]


def write(out_dir: Path, docs: Path = DOCS, base_url: str = "") -> tuple[Path, Path]:
    """Writes the .apkg and the CSV into ``out_dir``; returns their paths."""
    import genanki

    notes = deck(docs, base_url)
    model = genanki.Model(
        MODEL_ID, "Autograd, verified: drill",
        fields=[{"name": "Front"}, {"name": "Back"}],
        templates=[{"name": "Drill", "qfmt": "{{Front}}", "afmt": '{{FrontSide}}\n<hr id="answer">\n{{Back}}'}],
        css=CSS)
    anki = genanki.Deck(DECK_ID, DECK_NAME, description="Every drill of the book: the question on the "
                        "front; the answer, its code and its verified output on the back.")
    for d in notes:
        anki.add_note(genanki.Note(model=model, fields=[d.front, d.back], tags=d.tags, guid=d.guid))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # genanki 0.13.1 writes the collection into a file of tempfile's folder and leaves it there
    # (about 500 KB a build): pointed at a folder of its own for the call, removed after it.
    with tempfile.TemporaryDirectory() as scratch:
        saved, tempfile.tempdir = tempfile.tempdir, scratch
        try:
            genanki.Package(anki).write_to_file(str(out_dir / APKG))
        finally:
            tempfile.tempdir = saved
    buf = io.StringIO()
    table = csv.writer(buf, lineterminator="\n")
    table.writerow(["front", "back", "tags"])
    for d in notes:
        table.writerow([d.front, d.back, " ".join(d.tags)])
    (out_dir / CSV).write_text(buf.getvalue(), encoding="utf-8")
    return out_dir / APKG, out_dir / CSV
