"""Pages generated from the page model when the site is built, so they cannot drift from the
pages they index.

    errors(pages)          every error and warning a block of the book demonstrates, one entry per
                           error: its type, every line the pages show for it (for a warning, the
                           part of the message the block asserts), the words it is compared by
                           (snippets.explain.normalise: two blocks whose messages differ only in
                           shapes, numbers or names show one error), its older wordings
                           (snippets.explain.ALIASES), every block that shows it, and the cause
                           and fix of the failure table's row where it has one
    named(page)            the errors only a GPU raises, which the page of errors names by hand
                           (its section NAMED_SECTION) and no block can show
    error_index(page, pages)   the list as Markdown, grouped by type (<!-- error-index -->): each
                           error a heading of its own, with an anchor of its own
    search_data(page, pages, separator, docs)   what the site's search needs to send a pasted
                           message to its heading, and to leave the page's headings out of a
                           sentence that names no error (docs/assets/js/search-query.js)
    packaged(pages)        the index for `python -m snippets.explain` (snippets/error_index.json)
"""

from __future__ import annotations

import os.path
import re
from dataclasses import dataclass, field
from pathlib import Path

from snippets import explain

from bookcheck import DOCS
from bookcheck.versions import pinned
from bookcheck.model import Page

FAILURE_TABLE = DOCS / "part1" / "failure-modes.md"
ERRORS_PAGE = DOCS / "reference" / "errors.md"
NAMED_SECTION = "named-not-shown"  # the anchor of the page of errors' hand-written section

# The English stop words of lunr, the search library of Material's built-in search: they are
# removed from the search index and from a query, so a query that requires one finds nothing.
# tests/test_search.py proves this list equal to the one in Material's installed search worker.
STOP_WORDS = frozenset("""
a able about across after all almost also am among an and any are as at be because been but by
can cannot could dear did do does either else ever every for from get got had has have he her
hers him his how however i if in into is it its just least let like likely may me might most must
my neither no nor not of off often on only or other our own rather said say says she should since
so some than that the their them then there these they this tis to too twas us wants was we were
what when where which while who whom why will with would yet you your
""".split())


def title_of(page: Page) -> str:
    """A page's title: its first level-1 heading (the page model's), else its file's stem."""
    return page.title or page.path.stem


def section_of(page: Page, lineno: int) -> tuple[str, str]:
    """The heading above line ``lineno`` (1-based) of ``page`` (the page model: read once per
    page) and its anchor, as the site's toc makes it."""
    heading = page.section_at(lineno - 1)
    return (heading.text, heading.anchor) if heading is not None else ("", "")


@dataclass
class Shown:
    path: Path
    title: str
    section: str
    anchor: str


@dataclass
class Entry:
    kind: str  # "error" (a block raises it), "warning" (a block warns it) or "named" (a GPU raises it)
    type: str
    message: str  # the line the pages show (an error), or the asserted fragment (a warning only)
    messages: list = field(default_factory=list)  # every line or fragment the pages show for it
    fragments: list = field(default_factory=list)  # those of messages that a warns marker asserts
    where: list = field(default_factory=list)  # Shown
    cause: str = ""
    fix: str = ""
    key: tuple = ()  # the words of `message`, as snippets.explain compares them
    keys: list = field(default_factory=list)  # key, and those of the other lines and older wordings
    aliases: list = field(default_factory=list)  # (older message, the torch versions that printed it)
    anchor: str = ""  # on the page of errors
    heading: str = ""  # Markdown of its heading there (without the anchor)
    check: str = ""  # a named error: what to check


def _error_line(block, type_name: str) -> str:
    for line in reversed((block.expected_output or "").splitlines()):
        head = line.split(":", 1)[0].strip()
        if head == type_name or head.rsplit(".", 1)[-1] == type_name:
            return line.strip()
    return f"{type_name}: (matching {block.mark('raises').kwargs.get('match')!r})"


def _fragments(pattern: str) -> list[str]:
    """The parts of a warns marker's ``match`` pattern (split at an unescaped |), unescaped."""
    return [re.sub(r"\\(.)", r"\1", part) for part in re.split(r"(?<!\\)\|", pattern) if part]


def failure_rows(path: Path = FAILURE_TABLE) -> list[tuple[str, list[str], str, str]]:
    """The rows of the failure table whose symptom is a message: (type, fragments, cause, fix)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 4:
            continue
        code = re.match(r"`([^`]*)`", cells[0])
        if code and ": " in code.group(1):
            type_name, message = code.group(1).split(": ", 1)
            fragments = [f.strip() for f in message.split("...") if f.strip()]
            rows.append((type_name, fragments, cells[1], cells[2]))
    return rows


def _inside(long: tuple, short: tuple) -> bool:
    """Whether the words ``short`` appear in ``long`` one after another."""
    return any(long[i:i + len(short)] == short for i in range(len(long) - len(short) + 1))


def _message_of(line: str) -> str:
    """The message of a line ``Type: message``."""
    return line.split(": ", 1)[1] if ": " in line else line


def _shows(path: str, text: str) -> list[tuple[str, str, str, Shown]]:
    """(kind, type, line or fragment, where) for each error and warning the blocks of one page
    show (its model kept by Page.kept: a build asks twice, the page of errors and the search
    data, and make serve's every rebuild once)."""
    page, shows = Page.kept(path, text), []
    for b in page.blocks:
        if b.kind != "run":
            continue
        for kind, mark in (("error", b.mark("raises")), ("warning", b.mark("warns"))):
            if mark is None or not mark.args:
                continue
            type_name = str(mark.args[0]).rsplit(".", 1)[-1]
            section, anchor = section_of(page, b.lineno)
            shown = Shown(Path(path), title_of(page), section, anchor)
            if kind == "error":
                shows.append((kind, type_name, _error_line(b, type_name), shown))
            else:
                shows += [(kind, type_name, f, shown) for f in _fragments(str(mark.kwargs.get("match", "")))]
    return shows


def errors(pages) -> list[Entry]:
    """Every error and warning the blocks of ``pages`` show: one entry per type and words, with
    the failure table's cause and fix."""
    shows = [s for path in pages for s in _shows(str(path), Path(path).read_text(encoding="utf-8"))]
    # One entry per type and words: blocks that show one error with other shapes or names share it.
    entries: dict[tuple, Entry] = {}
    for kind, type_name, text, shown in shows:
        key = tuple(explain.normalise(_message_of(text) if kind == "error" else text)[1])
        entry = entries.setdefault((type_name, key), Entry(kind, type_name, text, key=key))
        if kind == "error":
            entry.kind = "error"
        if text not in entry.messages:
            entry.messages.append(text)
        if kind == "warning" and text not in entry.fragments:
            entry.fragments.append(text)
        if all((s.path, s.anchor) != (shown.path, shown.anchor) for s in entry.where):
            entry.where.append(shown)
    # A warning's asserted fragment that is a piece of a whole message of its type is that message.
    for (type_name, key), entry in list(entries.items()):
        if entry.kind != "warning":
            continue
        wider = [e for (t, k), e in entries.items() if t == type_name and k != key and _inside(k, key)]
        if wider:
            into = max(wider, key=lambda e: (e.kind == "error", len(e.key)))
            into.messages += [m for m in entry.messages if m not in into.messages]
            into.fragments += [m for m in entry.fragments if m not in into.fragments]
            into.where += [s for s in entry.where if all((t.path, t.anchor) != (s.path, s.anchor) for t in into.where)]
            del entries[(type_name, key)]
    rows = failure_rows()
    for entry in entries.values():
        lines = [m for m in entry.messages if ": " in m] if entry.kind == "error" else entry.messages
        entry.message = min(lines, key=len) if entry.kind == "error" else max(lines, key=len)
        entry.key = tuple(explain.normalise(_message_of(entry.message) if entry.kind == "error" else entry.message)[1])
        texts = [_message_of(m) if entry.kind == "error" and ": " in m else m for m in entry.messages]
        entry.aliases = [(old, torch) for fragment, old, torch in explain.ALIASES if any(fragment in t for t in texts)]
        keys = [entry.key] + [tuple(explain.normalise(t)[1]) for t in texts + [old for old, _ in entry.aliases]]
        entry.keys = [list(k) for i, k in enumerate(keys) if k and k not in keys[:i]]
        for type_name, fragments, cause, fix in rows:
            if type_name == entry.type and any(all(f in m for f in fragments) for m in entry.messages):
                entry.cause, entry.fix = cause, fix
                break
    out = sorted(entries.values(), key=lambda e: (e.type, explain.drop_tails(_message_of(e.message)).lower()))
    _anchor_and_heading(out)
    return out


def _anchor_and_heading(entries: list[Entry]) -> None:
    """Each entry's heading (its message as the pages show it, without torch's hint) and an
    anchor of its own: its type and the first words of its message (at least six), as many as
    no other entry's anchor begins with."""
    words = {id(e): [e.type.lower()] + [w for w in e.key if not re.fullmatch(explain.PLACEHOLDER, w)] for e in entries}
    seen: set[str] = set()
    for e in entries:
        mine = words[id(e)]
        others = [words[id(o)] for o in entries if o is not e]
        n = min(len(mine), 7)
        while n < len(mine) and any(o[:n] == mine[:n] for o in others):
            n += 1
        slug = base = "-".join(mine[:n]).replace("_", "-")
        i = 1
        while slug in seen:
            i += 1
            slug = f"{base}-{i}"
        seen.add(slug)
        e.anchor = slug
        text = explain.drop_tails(_message_of(e.message))
        e.heading = _code(f"{e.type}: {text}" if e.kind == "error" else f"{e.type}: … {text} …")


def named(page: Path = ERRORS_PAGE) -> list[Entry]:
    """The errors the page of errors names in its section NAMED_SECTION: each a heading
    ``### `Type: message` { #anchor }``, a paragraph "What to check: ...", and optionally one
    "Also printed as: `...`, `...`" with other wordings of it."""
    text = page.read_text(encoding="utf-8")
    start = re.search(r"^## .*\{ #" + re.escape(NAMED_SECTION) + r" \}\s*$", text, re.M)
    if start is None:
        return []
    end = re.search(r"^## |^<!-- error-index -->", text[start.end():], re.M)
    section = text[start.end(): start.end() + end.start() if end else len(text)]
    out = []
    for part in re.split(r"^(?=### )", section, flags=re.M)[1:]:
        head = re.match(r"### (`+) ?(.+?) ?\1 \{ #([\w-]+) \}\s*$", part.splitlines()[0])
        if head is None:
            raise ValueError(f"{page}: a heading of the section {NAMED_SECTION} is not "
                             f"### `Type: message` {{ #anchor }}: {part.splitlines()[0]!r}")
        line, anchor = head.group(2), head.group(3)
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", part) if p.strip()]
        check = next((p.split(":", 1)[1].strip() for p in paragraphs if p.startswith("What to check:")), "")
        also = next(([m for m in re.findall(r"`([^`]+)`", p) if ": " in m]  # a message, not a bare name
                     for p in paragraphs if p.startswith("Also printed as")), [])
        if not check:
            raise ValueError(f"{page}: {line!r} needs a paragraph 'What to check: ...'")
        entry = Entry("named", _type_of(line), line, messages=[line] + also, anchor=anchor,
                      heading=_code(line), check=check)
        entry.key = tuple(explain.normalise(_message_of(line))[1])
        keys = [entry.key] + [tuple(explain.normalise(m)[1]) for m in also]
        entry.keys = [list(k) for i, k in enumerate(keys) if k and k not in keys[:i]]
        out.append(entry)
    return out


def _type_of(line: str) -> str:
    return line.split(": ", 1)[0].rsplit(".", 1)[-1] if ": " in line else ""


def _link(shown: Shown, page_path: Path) -> str:
    target = os.path.relpath(shown.path, Path(page_path).parent).replace(os.sep, "/")
    label = f"{shown.title}: {shown.section}" if shown.section and shown.section != shown.title else shown.title
    return f"[{label}]({target}#{shown.anchor})" if shown.anchor else f"[{label}]({target})"


def _code(text: str) -> str:
    ticks = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def error_index(page_path: Path, pages) -> str:
    """Markdown: a section per type, a heading per error (its message, without torch's hint),
    then the lines the pages show where they differ from it, older wordings, cause and fix, and
    the blocks that show it."""
    out, current = [], None
    for e in errors(pages):
        if e.type != current:
            out += [f"## {e.type}", ""]
            current = e.type
        # each error a heading: the site's search ranks a match in a heading first, and a pasted
        # message is sent to this one (docs/assets/js/search-query.js)
        out += [f"### {e.heading} {{ #{e.anchor} }}", ""]
        plain = f"{e.type}: {explain.drop_tails(_message_of(e.message))}"
        asserted = list(dict.fromkeys(explain.drop_tails(m) for m in e.fragments))
        lines = list(dict.fromkeys(explain.drop_tails(m) for m in e.messages))
        printed = [m for m in lines if m != plain and m not in asserted]
        for lead, shown in (("The pages print it as", printed),
                            ("The blocks assert that its message contains", [m for m in asserted if m != plain])):
            if shown:
                out += ([f"{lead} {_code(shown[0])}.", ""] if len(shown) == 1 else
                        [f"{lead}:", ""] + [f"- {_code(m)}" for m in shown] + [""])
        tails = list(dict.fromkeys(t.group().strip() for m in e.messages for p, _ in explain.TAILS
                                   for t in [re.search(p, m, re.ASCII)] if t))
        if tails:
            out += ["Torch appends " + "; or ".join(_code(t) for t in tails) + ".", ""]
        for old, torch in e.aliases:
            out += [f"Printed by {torch} as {_code(old)}.", ""]
        if e.cause:
            cause, fix = (_rebase(cell, FAILURE_TABLE, page_path) for cell in (e.cause, e.fix))
            out += [f"Cause: {cause}. Fix: {fix}.", ""]
        out += ["Shown in " + ", ".join(_link(s, page_path) for s in e.where) + ".", ""]
    return "\n".join(out)


def _title_words(heading: str, separator: str) -> list[str]:
    """The words Material's search takes from a heading (its text split at the separator of
    mkdocs.yml, lower case), stop words included."""
    text = re.sub(r"`+ ?| ?`+", " ", heading)
    return [w.lower() for w in re.split(separator, text) if w]


def _title_keys(entry: Entry, separator: str) -> list[str]:
    """The words of an entry's heading that a query may require: words of its message, in the
    index as they are in the message, and no stop word."""
    return [w for w in dict.fromkeys(_title_words(entry.heading, separator))
            if w in entry.key and w not in STOP_WORDS and re.fullmatch(explain.WORD, w)]


def _queries(entries: list[Entry], separator: str) -> dict[str, str | None]:
    """{anchor: the search query that finds that heading and no other heading of the page}: every
    word of its heading that is a word of its message and no stop word, each required in titles
    (`+title:word`), and for each other heading that holds all of them, one word of it that this
    heading lacks, excluded (`-title:word`). None where no such query exists."""
    titles = {e.anchor: set(_title_words(e.heading, separator)) for e in entries}
    out = {}
    for e in entries:
        usable = _title_keys(e, separator)
        excluded = []
        for other in entries:
            if other is e or not set(usable) <= titles[other.anchor]:
                continue
            extra = sorted(w for w in titles[other.anchor] - titles[e.anchor]
                           if w not in STOP_WORDS and re.fullmatch(explain.WORD, w))
            if not extra:
                break
            excluded.append(extra[0])
        else:
            if usable:
                out[e.anchor] = " ".join([f"+title:{w}" for w in usable] + [f"-title:{w}" for w in dict.fromkeys(excluded)])
                continue
        out[e.anchor] = None
    return out


# The words a sentence pasted with no error's name in it excludes from titles: every heading of
# the page of errors holds one of these (a type's "…Error" or "…Warning" is a word of its own in
# the index), and sections elsewhere that hold one are left out too (measured: five, such as
# "The error, and how to read it"; the index has no stemmer, so "errors" stays).
SENTENCE_EXCLUDES = ("error", "warning")


def index_title_words(title: str, separator: str) -> list[str]:
    """The words of a title of the built search index (HTML: Material's tokenizer drops the
    tags, so <code> adds no word "code")."""
    return _title_words(re.sub(r"<[^>]*>", " ", title), separator)


def _exclusions(page_path: Path, docs, separator: str) -> list[str]:
    """SENTENCE_EXCLUDES, then for each title of the page of errors in ``docs`` (the search
    index's documents) that holds none of them, one word of it that no title elsewhere holds
    (the one most such titles share), so that `-title:word` for each leaves out every heading of
    that page and no other heading. ValueError names a title that has no such word."""
    base = site_address(page_path, "")
    ours = [d["title"] for d in docs if d["location"].split("#")[0] == base]
    holders = {}  # {word: the addresses of the titles elsewhere that hold it}
    for d in docs:
        if d["location"].split("#")[0] != base:
            for w in index_title_words(d["title"], separator):
                holders.setdefault(w, {})[d["location"]] = None
    out = list(SENTENCE_EXCLUDES)
    left = []
    for title in ours:
        words = set(index_title_words(title, separator))
        if words.isdisjoint(out):
            usable = {w for w in words - holders.keys()
                      if w not in STOP_WORDS and re.fullmatch(explain.WORD, w)}
            if not usable:
                taken = {w: list(holders[w]) for w in sorted(words & holders.keys()) if w not in STOP_WORDS}
                raise ValueError(f"the heading {title!r} of {page_path.name} holds neither of "
                                 f"{SENTENCE_EXCLUDES} and no word a query can exclude that is its "
                                 f"own (held elsewhere: {taken}): name the error's type in it, or "
                                 "reword those headings; else a sentence pasted into the search box "
                                 "would list it")
            left.append(usable)
    while left:
        counts = {w: sum(w in u for u in left) for u in left for w in u}
        word = min(counts, key=lambda w: (-counts[w], w))
        out.append(word)
        left = [u for u in left if word not in u]
    return out


def search_data(page_path: Path, pages, separator: str, docs) -> dict:
    """What the site's search box needs to send a pasted error message to its heading on the
    page of errors: the rules snippets.explain normalises a message by, and for each error (a
    named one too) its type, the words of its message and of its other wordings, the words of
    its heading a query may require, and the query that finds its heading alone (None: the
    reader's query is left as it is); and the title words a sentence that names no error
    excludes (``docs``: the search index's documents, see _exclusions)."""
    entries = errors(pages) + named(page_path)
    queries = _queries(entries, separator)
    base = site_address(page_path, "")
    return dict(
        type=explain.TYPE, rules=[list(r) for r in explain.RULES], word=explain.WORD,
        cutoff=explain.CUTOFF, same_start=explain.SAME_START, alone=explain.ALONE, min_fragment=explain.MIN_FRAGMENT,
        entries=[dict(address=f"{base}#{e.anchor}", types=None if e.kind == "named" else [e.type],
                      keys=e.keys, title=_title_keys(e, separator), query=queries[e.anchor]) for e in entries],
        exclude=_exclusions(page_path, docs, separator),
    )


# The same index for the terminal: snippets/error_index.json, read by `python -m snippets.explain`
# (the reader's package cannot import bookcheck). A test proves the file current.
PACKAGED = DOCS.parent / "snippets" / "error_index.json"


def _rebase(markdown: str, source: Path, target: Path) -> str:
    """Markdown written on page ``source``, its relative links rewritten for page ``target``."""
    def moved(m):
        link = m.group(2)
        if re.match(r"[a-z]+:|#|/", link):
            return m.group(0)
        path, _, anchor = link.partition("#")
        new = os.path.relpath(source.parent / path, target.parent).replace(os.sep, "/")
        return f"]({m.group(1)}{new}{'#' + anchor if anchor else ''})"
    return re.sub(r"\]\((\s*)([^)\s]+)\)", moved, markdown)


def _plain(markdown: str) -> str:
    """A table cell or a heading as terminal text: links keep their text, code its text."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)
    return re.sub(r"``\s?(.+?)\s?``|`([^`]*)`", lambda m: m.group(1) or m.group(2), text).strip()


def site_address(path: Path, anchor: str) -> str:
    """The page's address relative to the site's root (directory URLs), with its anchor."""
    rel = Path(path).relative_to(DOCS).with_suffix("")
    url = "" if rel.name == "index" and rel.parent == Path(".") else (
        f"{rel.parent.as_posix()}/" if rel.name == "index" else f"{rel.as_posix()}/")
    return url + (f"#{anchor}" if anchor else "")


def packaged(pages, page_path: Path = ERRORS_PAGE) -> str:
    """The JSON text of snippets/error_index.json: the errors the pages show, then those the page
    of errors names (kind "named")."""
    import json

    title = title_of(Page.kept(page_path))
    data = [dict(kind=e.kind, type=e.type, types=None if e.kind == "named" else [e.type], message=e.message,
                 messages=e.messages, keys=e.keys,
                 aliases=[dict(message=old, torch=torch) for old, torch in e.aliases],
                 cause=_plain(e.cause), fix=_plain(e.fix), check=_plain(e.check),
                 page=title, heading=_plain(e.heading), address=site_address(page_path, e.anchor),
                 shown=[dict(page=s.title, section=s.section, address=site_address(s.path, s.anchor))
                        for s in e.where])
            for e in errors(pages) + named(page_path)]
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bookbuild.indexes",
                                     description="Write snippets/error_index.json from the pages.")
    parser.parse_args(argv)
    PACKAGED.write_text(packaged(sorted(DOCS.rglob("*.md"))), encoding="utf-8")
    print(f"wrote {PACKAGED.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# ---- what differs on the other verified torch versions (the generated table of
# reference/torch-versions; bookcheck.versions says how a page shows it)


def differences(pages) -> list[dict]:
    """Every block of ``pages`` that shows another version's output: where it is (page,
    line, the section it is in) and the lines that differ, per version."""
    import difflib

    found = []
    for path in pages:
        page = Page.kept(path)
        for b in page.blocks:
            for version, other in sorted(b.outputs.items()):
                heading, anchor = section_of(page, b.lineno)
                pinned_lines, other_lines = b.expected_output.splitlines(), other.splitlines()
                diff = [d for d in difflib.ndiff(pinned_lines, other_lines) if d[:1] in "-+"]
                found.append(dict(path=Path(path), title=title_of(page), lineno=b.lineno, section=heading,
                                  anchor=anchor, version=version,
                                  was=[d[2:] for d in diff if d[0] == "-"], now=[d[2:] for d in diff if d[0] == "+"]))
    return found


def differences_table(page_path: Path, pages) -> str:
    """The Markdown table of ``differences(pages)``, with links relative to ``page_path``."""
    import os.path

    def cell(text_lines):
        return "<br>".join(f"`{line}`" if line.strip() else "(empty line)" for line in text_lines) or "(no line)"

    found = differences(pages)
    rows = []
    for d in found:
        target = os.path.relpath(d["path"], Path(page_path).parent).replace(os.sep, "/")
        title = d["title"]
        where = f"[{title}: {d['section']}]({target}#{d['anchor']})" if d["anchor"] else f"[{title}]({target})"
        rows.append(f"| {where} | {cell(d['was'])} | {cell(d['now'])} |")
    if not rows:
        return "No block of the book prints anything different on the other verified versions.\n"
    versions = " / ".join(sorted({d["version"] for d in found}))
    head = f"| Where | torch {pinned()} prints | torch {versions} prints |\n|---|---|---|"
    return head + "\n" + "\n".join(rows) + "\n"
