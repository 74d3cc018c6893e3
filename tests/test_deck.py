"""The drills as a deck (bookbuild/deck.py): every drill of every drill page, and of the ``## Drills``
section a chapter ends with, is a note of the .apkg and a row of the CSV, and its back holds what
the page shows for the answer.

Drills are enumerated here from the pages' text (on a drill page every ``### `` heading under a
``## `` section, on any other page those under ``## Drills``, outside fences) and their blocks and
outputs read with the page model, not with the deck's code.
"""

from __future__ import annotations

import csv
import html
import re
import sqlite3
import tempfile
import zipfile
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

from bookcheck import DOCS, HarnessError

from bookbuild import deck
from bookcheck.model import expand_snippets, outside_fences, parse_page

DRILL_PAGES = sorted((DOCS / "reference").glob("drills*.md"))
BASE = "https://example.org/book/"
LABELS = ("Predict", "Write", "Derive", "Diagnose", "Explain", "Fix")  # a heading's "Kind: ..."
DEFAULT = {"drills.md": "Predict", "drills-accumulation.md": "Predict", "drills-functions.md": "Predict",
           "drills-failures.md": "Predict", "drills-write-it.md": "Write", "drills-fix.md": "Write"}  # else the section
# The pages of a series, in order: their drills are numbered on from one page to the next.
SERIES = [["drills.md", "drills-accumulation.md", "drills-functions.md", "drills-failures.md"],
          ["drills-diagnose.md", "drills-diagnose-2.md", "drills-diagnose-3.md", "drills-diagnose-4.md"],
          ["drills-write-it.md", "drills-fix.md"]]


def page_drills(path: Path) -> list[dict]:
    """Each drill of a page: heading, section, line range, and its question and answer lines. On a
    page that is no drill page, the drills are those under ``## Drills`` and their section is the
    page's title up to its first colon (its code marks removed)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    heads = [i for i, (line, prose) in enumerate(zip(lines, outside_fences(lines)))
             if prose and re.match(r"#{1,6} ", line)]
    chapter = path not in DRILL_PAGES
    found, section, page_title = [], None, None
    for n, i in enumerate(heads):
        level, text = lines[i].split(" ", 1)
        page_title = text.strip() if level == "#" else page_title
        section = text.strip() if level == "##" else section
        if level != "###" or section is None or (chapter and section != "Drills"):
            continue
        stop = heads[n + 1] if n + 1 < len(heads) else len(lines)
        answer = [j for j in range(i, stop) if lines[j].startswith('??? question "Answer"')]
        assert answer, f"{path.name}:{i + 1}: a drill without an answer"
        number, title = re.match(r"(\d+)\. (.*)", text.strip()).groups()
        topic = page_title.split(": ")[0].replace("`", "") if chapter else section
        found.append(dict(page=path, number=int(number), title=title, section=topic, heading=text.strip(),
                          question=(i + 1, answer[0] + 1), answer=(answer[0] + 1, stop), lines=lines))
    return found


CHAPTERS = [path for path in sorted(DOCS.rglob("*.md")) if path not in DRILL_PAGES and page_drills(path)]
PAGES = DRILL_PAGES + CHAPTERS
DRILLS = [d for path in PAGES for d in page_drills(path)]


def link(drill) -> str:
    """The drill's address on the site: directory URL and the anchor toc makes of its heading."""
    page = drill["page"].relative_to(DOCS).with_suffix("").as_posix()
    return f"{BASE}{page}/#{slugify(drill['heading'].replace('`', ''), '-')}"


def blocks_in(drill, part):
    start, stop = drill[part]
    return [b for b in parse_page(drill["page"]) if start < b.lineno <= stop]


def plain(markdown_text: str) -> str:
    """Prose as a reader sees it: without Markdown's code, link and emphasis syntax."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown_text)
    text = re.sub(r"(\*\*|\*|`)", "", text)
    return " ".join(text.split())


def text_of(html_text: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", html_text)).replace("`", "").replace("*", "").split())


def answer_prose(drill) -> list[str]:
    """The answer's paragraphs, without its fences and marker comments."""
    start, stop = drill["answer"]
    lines, paragraphs, current = drill["lines"], [], []
    prose = outside_fences(lines)
    for i in range(start, stop):
        s = lines[i].strip()
        if not prose[i] or s.startswith("<!--"):
            continue
        fold = re.match(r'\?\?\?\+? \w+ "(.*)"$', s)  # a fold inside the answer shows its title
        if fold:
            if current:
                paragraphs.append(plain(" ".join(current)))
            paragraphs.append(plain(fold.group(1)))
            current = []
            continue
        if not s:
            if current:
                paragraphs.append(plain(" ".join(current)))
            current = []
        else:
            current.append(re.sub(r"^(-|\d+\.) ", "", s))  # a list item reads as its text
    if current:
        paragraphs.append(plain(" ".join(current)))
    return paragraphs


def read_apkg(path: Path) -> list[dict]:
    with zipfile.ZipFile(path) as z:
        name = next(n for n in ("collection.anki21", "collection.anki2") if n in z.namelist())
        db = path.parent / f"{path.stem}-{name}"
        db.write_bytes(z.read(name))
    con = sqlite3.connect(db)
    try:
        rows = con.execute("select guid, flds, tags from notes").fetchall()
    finally:
        con.close()
    notes = []
    for guid, flds, tags in rows:
        front, back = flds.split("\x1f")
        url = re.findall(r'href="([^"]*)"', back)[-1]
        notes.append(dict(guid=guid, front=front, back=back, tags=tags.split(), url=html.unescape(url)))
    return notes


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    runs = []
    for n in range(2):
        out = tmp_path_factory.mktemp(f"deck{n}")
        apkg, table = deck.write(out, DOCS, BASE)
        runs.append((read_apkg(apkg), table))
    return runs


@pytest.fixture(scope="module")
def notes(built):
    return {n["url"]: n for n in built[0][0]}


def test_every_drill_is_one_note(built, notes):
    assert len(built[0][0]) == len(notes), "two notes link to the same drill"
    expected = {link(d) for d in DRILLS}
    assert len(expected) == len(DRILLS)
    assert sorted(set(expected) - set(notes)) == [], "drills of the pages missing from the deck"
    assert sorted(set(notes) - set(expected)) == [], "notes that are no drill of a page"
    for path in PAGES:
        assert any(d["page"] == path for d in DRILLS), f"{path.name}: no drill found"


@pytest.mark.parametrize("drill", DRILLS, ids=lambda d: f"{d['page'].stem}-{d['number']}")
def test_note_shows_the_drill(drill, notes):
    note = notes[link(drill)]
    assert f"{drill['number']}. {plain(drill['title'])}" in text_of(note["front"])
    for block in blocks_in(drill, "question"):  # the question's code, and its output where shown
        assert html.escape(expand_snippets(block.code).rstrip("\n")) in note["front"], block.where
        if block.expected_output is not None:
            assert html.escape(block.expected_output.rstrip("\n")) in note["front"], block.where
    answer = blocks_in(drill, "answer")
    assert [b for b in answer if b.runnable], f"{drill['page'].name} drill {drill['number']}: no block in the answer"
    for block in answer:
        assert html.escape(expand_snippets(block.code).rstrip("\n")) in note["back"], block.where
        if block.expected_output is not None:  # the verified output, exactly as the page shows it
            assert f"<code>{html.escape(block.expected_output.rstrip(chr(10)))}</code>" in note["back"], block.where
    back = text_of(note["back"])
    for paragraph in answer_prose(drill):
        assert paragraph in back, f"answer text missing from the back: {paragraph!r}"
    label = re.match(r"(\w+)\b[^:`]*: ", drill["title"])
    kind = label.group(1) if label and label.group(1) in LABELS else DEFAULT.get(drill["page"].name, drill["section"])
    assert sorted(note["tags"]) == sorted([
        f"page::{drill['page'].stem}", "kind::" + kind.replace(" ", "_"),
        "section::" + drill["section"].replace(" ", "_")])


def test_guids_are_stable(built):
    first, second = ({n["url"]: n["guid"] for n in run[0]} for run in built)
    assert first == second
    assert len(set(first.values())) == len(first)


def test_numbers_run_on_across_the_pages_of_a_series():
    alone = [[p.name] for p in PAGES if not any(p.name in s for s in SERIES)]
    assert sorted(name for s in SERIES + alone for name in s) == sorted(p.name for p in PAGES)
    for series in SERIES + alone:
        numbers = [d["number"] for name in series for d in DRILLS if d["page"].name == name]
        assert numbers == list(range(1, len(numbers) + 1)), series


def test_a_continuing_page_names_the_page_before_it_at_the_top():
    for series in SERIES:
        for before, name in zip(series, series[1:]):
            text = (DOCS / "reference" / name).read_text(encoding="utf-8")
            top = text.split("\n## ", 1)[0]
            assert f"]({before})" in top, f"{name}: no link to {before} above its first section"
            first = min(d["number"] for d in DRILLS if d["page"].name == name)
            assert f"drills {first} to " in " ".join(top.split()), f"{name}: does not say where its numbers start"


def test_a_drill_keeps_its_guid_on_any_page_of_its_series(built):
    """A note's guid is made with the series' first page, so splitting a page keeps a reader's history."""
    import genanki

    guids = {n["url"]: n["guid"] for n in built[0][0]}
    first = {name: series[0] for series in SERIES for name in series}
    for d in DRILLS:
        name = d["page"].name
        page = "reference/" + first[name] if name in first else d["page"].relative_to(DOCS).as_posix()
        title = re.sub(r"^(" + "|".join(LABELS) + r")\b[^:`]*:\s+", "", d["title"])
        assert guids[link(d)] == genanki.guid_for(page, d["number"], " ".join(title.split()).casefold()), link(d)


def test_csv_has_the_same_notes(built):
    apkg, table = built[0]
    with open(table, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["front", "back", "tags"]
    assert sorted((r[0], r[1], tuple(r[2].split())) for r in rows[1:]) == \
        sorted((n["front"], n["back"], tuple(n["tags"])) for n in apkg)


def test_every_drill_page_links_to_the_deck():
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        for name in (deck.APKG, deck.CSV):  # the page's URL is reference/<page>/
            assert f'href="../../downloads/{name}"' in text, f"{path.name}: no link to downloads/{name}"


NEW_PAGE = '''# Drills: new

## Losses

### 1. Diagnose: the loss is flat

A prompt.

```python
print(1)
```

<!--pytest-codeblocks:expected-output-->
```text
1
```

??? question "Answer"

    The reason, with `code`.

    <!--pytest-codeblocks:cont-->
    ```python
    print(2)
    ```

    <!--pytest-codeblocks:expected-output-->
    ```text
    2
    ```

### 2. A second drill

Prompt.

```python
x = 1
```
'''


def test_a_new_page_and_a_drill_without_answer(tmp_path):
    page = tmp_path / "reference" / "drills-new.md"
    page.parent.mkdir()
    page.write_text(NEW_PAGE.split("### 2.")[0], encoding="utf-8")
    [note] = deck.deck(tmp_path)
    assert note.kind == "Diagnose" and note.section == "Losses"
    assert "<pre class=\"output\"><code>1</code></pre>" in note.front
    assert "<pre class=\"output\"><code>2</code></pre>" in note.back and "The reason" in note.back
    page.write_text(NEW_PAGE, encoding="utf-8")
    with pytest.raises(HarnessError, match="drills-new.md:.*without a"):
        deck.deck(tmp_path)


def test_writing_the_deck_leaves_nothing_in_the_temporary_folder(tmp_path, monkeypatch):
    """genanki writes the collection into a file of tempfile's folder and leaves it there;
    deck.write gives it a folder of its own, removed after the call."""
    page = tmp_path / "docs" / "reference" / "drills-new.md"
    page.parent.mkdir(parents=True)
    page.write_text(NEW_PAGE.split("### 2.")[0], encoding="utf-8")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    apkg, _ = deck.write(tmp_path / "out", tmp_path / "docs")
    assert len(read_apkg(apkg)) == 1
    assert list(scratch.iterdir()) == []


def test_a_card_renders_prose_with_the_sites_markdown_extensions():
    """The deck's Markdown is the site's (mkdocs.yml's extensions and options), but for
    deck.NOT_ON_A_CARD: an admonition and a formula render as on the site; a heading takes no id."""
    from bookcheck.model import markdown_extensions

    site, _ = markdown_extensions()
    assert set(deck.NOT_ON_A_CARD) < set(site)
    md = deck._markdown()
    out = md.convert('!!! note "Why"\n    It is saved.\n\nThe slope \\(a\\) is kept.')
    assert 'class="admonition note"' in out and 'class="arithmatex"' in out, out
    md.reset()
    assert "id=" not in md.convert("### 3. A drill") and "headerlink" not in md.convert("### 3. A drill")


CHAPTER = '''# Losses: the flat ones

## Why a loss is flat

### 1. A subsection, not a drill

Text.

## Drills

Find the cause.

### 1. Diagnose: the loss is flat
''' + NEW_PAGE.split("### 1. Diagnose: the loss is flat", 1)[1].split("### 2.")[0]


def test_a_chapter_gives_the_drills_of_its_drills_section(tmp_path):
    """On a page that is no drill page, only the ``### N.`` headings under ``## Drills`` are drills,
    tagged with the page's topic; a ``## Drills`` section that only links to drill pages gives none."""
    page = tmp_path / "part9" / "losses.md"
    page.parent.mkdir()
    page.write_text(CHAPTER, encoding="utf-8")
    (tmp_path / "part9" / "path.md").write_text("# A path\n\n## Drills\n\nThe [drills](x.md).\n", encoding="utf-8")
    [note] = deck.deck(tmp_path)
    assert (note.page, note.number, note.kind, note.section) == ("part9/losses.md", 1, "Diagnose", "Losses")
    assert note.url == "part9/losses/#1-diagnose-the-loss-is-flat" and "The reason" in note.back
    assert deck.pages(tmp_path) == [page]


def test_the_decks_sources_follow_an_edit_and_parse_only_the_edited_page(tmp_path, monkeypatch):
    """make serve asks for the deck's key on every rebuild: deck._page keeps each page's model by
    its text, so an edit is seen (a drill that includes a new file) and nothing else is parsed."""
    from bookcheck.model import Page

    page = tmp_path / "part9" / "losses.md"
    page.parent.mkdir()
    page.write_text(CHAPTER, encoding="utf-8")
    other = tmp_path / "reference" / "drills-new.md"
    other.parent.mkdir()
    other.write_text(NEW_PAGE.split("### 2.")[0], encoding="utf-8")
    before = deck.sources(tmp_path)
    assert page in before and other in before
    parsed = []

    class Counted(Page):
        def __init__(self, text, path, lines=None):
            parsed.append(Path(path))
            super().__init__(text, path, lines)

    monkeypatch.setattr(deck, "Page", Counted)
    assert deck.sources(tmp_path) == before and parsed == []
    included = tmp_path / "part9" / "extra.py"
    edited = CHAPTER.replace("```python\nprint(1)\n```", f'```python\n--8<-- "{included}"\nprint(1)\n```')
    assert edited != CHAPTER
    page.write_text(edited, encoding="utf-8")
    after = deck.sources(tmp_path)
    assert parsed == [page] and included in after, (parsed, after)
