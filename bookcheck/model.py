"""The page model: a page of docs/ read once into nodes with spans.

``Page.parse(path)`` scans the Markdown line by line, once, for exactly the constructs the book
uses, and every check, the build hooks, the deck, the indexes and the tests read the result:

- ``fences``: every fence (```` ``` ```` or ``~~~``, of any length, also indented under
  ``!!!``, ``???``, ``===`` or a list item), with its span, indentation, container, info string,
  body (the fence's indentation removed, blank lines kept), the marker comments above it and the
  label of the content tab it opens (``=== "label"``);
- ``blocks``: the code blocks the checks see (Block), each with its output fence;
- ``tables``: every table after a marker comment of bookcheck.markers.TABLE_MARKERS, with its
  kind, header and rows; ``slots``: the markers of generated slots (a build hook writes the table);
- ``front_matter``: how many lines the page's front matter takes (as mkdocs reads it); they are
  not prose, and nothing in them is a fence, a marker or a heading;
- ``headings``: every ATX heading outside fences and front matter, with the anchor the site's
  table of contents gives it (Python-Markdown's toc, configured as mkdocs.yml configures it;
  attr_list's ``{ #id }`` wins); ``title``: the first level-1 heading (``notebook_title(path)``:
  a notebook's); and ``sections``: each heading's span, to the next heading of its level or above.

A fence closes on a line of the same character, at least as long, and nothing else (as
pymdownx.superfences closes it). The markers follow pytest-codeblocks' syntax: marker comments
(``<!--pytest.mark.NAME(...)-->``) above a fence are its markers; ``<!--pytest-codeblocks:cont-->``
makes it continue the previous run block; ``<!--pytest-codeblocks:expected-output-->`` makes the
next fence the output of the block above. What the model cannot read is listed in
``Page.errors`` (``file:line: what``); the guard reports it and ``Page.blocks`` raises it.

``Page.kept(path)`` is the same model, kept while the page's text is unchanged (its docstring
says who asks for it and why).

``config()`` is the one reader of mkdocs.yml (tests/test_one_reader.py keeps it so; only
bookcheck/versions.py, which runs before mkdocs is installed, reads it with the standard
library); ``extension_config``, ``markdown_extensions``, ``plugin_config``, ``nav_entries`` and
``nav_pages`` are the views of it that several readers share.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT, HarnessError, markers, rel

OPENER = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
CODEBLOCKS = re.compile(r"^<!--[-\s]*pytest-codeblocks:(.*)-->")
MARK = re.compile(r"^<!--[-\s]*(pytest\.mark\..*)-->")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
CONTAINER = re.compile(r"^[ \t]*(!!!|\?\?\?\+?|===\+?)(?:[ \t]|$)")
TAB = re.compile(r'^\s*===\+?\s+"(.*)"\s*$')
PIPE = re.compile(r"(?<!\\)\|")


@functools.lru_cache(maxsize=1)
def config() -> dict:
    """The book's mkdocs.yml (read_config): the one reader of it for the checks, the hooks'
    helpers and the tests."""
    return read_config(ROOT / "mkdocs.yml")


class PythonName(str):
    """The dotted name a ``!!python/name:`` tag gives, kept as text until ``load()`` imports it."""

    def load(self):
        import importlib

        module, _, attr = self.rpartition(".")
        return getattr(importlib.import_module(module), attr)


def read_config(path) -> dict:
    """A mkdocs.yml, read with mkdocs' own YAML loader (``!ENV`` resolved as mkdocs resolves
    it); a ``!!python/name:`` tag is kept as the dotted name it gives (a PythonName), not imported."""
    import yaml
    from mkdocs.utils.yaml import get_yaml_loader

    loader = get_yaml_loader()
    loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda _loader, suffix, _node: PythonName(suffix))
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=loader)  # noqa: S506 - mkdocs' own loader, the book's own file


def extension_config(name: str) -> dict:
    """The options mkdocs.yml gives the Markdown extension ``name`` ({} when it gives none)."""
    for ext in config().get("markdown_extensions", []):
        if ext == name:
            return {}
        if isinstance(ext, dict) and name in ext:
            return dict(ext[name] or {})
    raise KeyError(f"mkdocs.yml does not enable the Markdown extension {name!r}")


def markdown_extensions(leave_out=()) -> tuple[list[str], dict]:
    """The site's Markdown extensions, in mkdocs.yml's order, and their options as
    ``markdown.Markdown(extensions=..., extension_configs=...)`` takes them: a ``!!python/name:``
    imported, pymdownx.snippets' base_path made absolute (mkdocs builds from the book's root).
    ``leave_out``: names to drop (each must be one the site enables)."""
    import copy

    names, configs = [], {}
    for ext in config().get("markdown_extensions", []):
        name, options = (ext, {}) if isinstance(ext, str) else next(iter(ext.items()))
        names.append(name)
        configs[name] = _loaded(copy.deepcopy(options or {}))
    unknown = sorted(set(leave_out) - set(names))
    if unknown:
        raise ValueError(f"leave_out names extensions mkdocs.yml does not enable: {unknown}; it enables {names}")
    if "pymdownx.snippets" in configs:
        snippets = configs["pymdownx.snippets"]
        snippets["base_path"] = [str(ROOT / p) for p in snippets.get("base_path", ["."])]
    names = [n for n in names if n not in leave_out]
    return names, {n: configs[n] for n in names if configs[n]}


def _loaded(value):
    if isinstance(value, PythonName):
        return value.load()
    if isinstance(value, dict):
        return {k: _loaded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_loaded(v) for v in value]
    return value


def plugin_config(name: str) -> dict:
    """The options mkdocs.yml gives the plugin ``name`` ({} when it gives none)."""
    for plugin in config().get("plugins", []):
        if plugin == name:
            return {}
        if isinstance(plugin, dict) and name in plugin:
            return dict(plugin[name] or {})
    raise KeyError(f"mkdocs.yml does not enable the plugin {name!r}")


def nav_entries(cfg: dict | None = None) -> list[tuple[str | None, str | None, int]]:
    """Every entry of mkdocs.yml's nav (of ``cfg``, a read config, when given), in order:
    (title, page under docs/, depth). A section has no page; a page listed without a title has
    title None (the site takes its first heading)."""
    found = []

    def walk(items, depth):
        for item in items or []:
            if isinstance(item, str):
                found.append((None, item, depth))
                continue
            for title, value in item.items():
                if isinstance(value, list):
                    found.append((title, None, depth))
                    walk(value, depth + 1)
                else:
                    found.append((title, value, depth))

    walk((config() if cfg is None else cfg).get("nav"), 0)
    return found


def nav_pages(cfg: dict | None = None) -> list[tuple[str, str]]:
    """(title, page under docs/) of every page of the nav, in order; a page listed without a
    title is named by its file's stem."""
    return [(title or Path(page).stem, page) for title, page, _ in nav_entries(cfg) if page is not None]


@dataclass
class Fence:
    start: int  # index of the opening line (0-based)
    end: int  # index of the closing line; len(lines) when it is never closed
    indent: int  # columns before the opening characters
    char: str  # "`" or "~"
    width: int  # how many of them open it
    info: str  # the info string ("python", "text", 'python title="x"')
    body: str  # the content, the fence's indentation removed, blank lines kept
    marks: list = field(default_factory=list)  # the marker comments' texts right above it
    container: int | None = None  # the line index of the !!!, ??? or === that holds it
    tab: str | None = None  # the label of the content tab that opens right above it

    @property
    def lineno(self) -> int:
        return self.start + 1

    @property
    def closed(self) -> bool:
        return self.end >= 0 and self.char != ""


@dataclass
class Table:
    kind: str  # the marker's comment, e.g. "hand-trace: forward", "op-table"
    marker: int  # index of the marker's line
    start: int  # index of the header row
    end: int  # index of the last row
    header: list
    rows: list  # cells of each body row (the separator row removed)

    @property
    def lineno(self) -> int:
        return self.marker + 1


@dataclass
class Heading:
    line: int  # index
    level: int
    text: str  # as written, without the attribute list
    anchor: str


@dataclass
class Section:
    heading: Heading
    start: int  # the heading's line index
    end: int  # index of its last line


def _markdown_headings_anchors(texts: list[str]) -> list[str]:
    """The ids the site's toc gives ``texts`` (heading lines, in page order)."""
    if not texts:
        return []
    md = _markdown()
    md.reset()
    import html

    out = md.convert("\n\n".join(texts))
    ids = re.findall(r'<h[1-6][^>]*\bid="([^"]*)"', out)
    if len(ids) != len(texts):
        raise HarnessError(f"{len(texts)} headings rendered {len(ids)} ids")
    return [html.unescape(i) for i in ids]


@functools.lru_cache(maxsize=1)
def _markdown():
    """Python-Markdown with the extensions that shape a heading's id on the site: toc as
    mkdocs.yml configures it, attr_list, and those that change a heading's inline text."""
    import markdown

    names = ["toc", "attr_list", "pymdownx.arithmatex", "pymdownx.inlinehilite", "abbr"]
    configs = {}
    for name in names:
        try:
            configs[name] = extension_config(name)
        except KeyError:
            continue
    return markdown.Markdown(extensions=list(configs), extension_configs=configs)


KINDS = ("run", "skipped", "diagram", "checked diagram", "version output", "unaccounted")


@dataclass
class Block:
    path: Path
    lineno: int
    syntax: str
    code: str  # as written in the page (snippet lines not expanded)
    expected_output: str | None
    marks: list = field(default_factory=list)  # markers.Mark
    cont: bool = False
    kind: str = ""  # one of KINDS, computed once by parse_page
    # What the block prints on another verified torch version, where the page shows it
    # (a "version output" fence after the output fence; bookcheck/versions.py).
    outputs: dict = field(default_factory=dict)
    fence: Fence | None = field(default=None, repr=False, compare=False)  # its node in the page model
    output_fence: Fence | None = field(default=None, repr=False, compare=False)  # its output's node

    def output_for(self, version: str) -> str | None:
        """The output the page shows for ``version`` (the pinned output where it shows no other)."""
        return self.outputs.get(version, self.expected_output)

    @property
    def where(self) -> str:
        return f"{rel(self.path)}:{self.lineno}"

    def mark(self, name):
        found = [m for m in self.marks if m.name == name]
        return found[0] if found else None

    @property
    def runnable(self) -> bool:
        return self.syntax in markers.RUN_SYNTAX

    @property
    def shell(self) -> bool:
        """A runnable block that is not Python: bash runs it (bookcheck.run)."""
        return self.runnable and self.syntax != "python"


def kind_of(block: Block) -> str:
    """The one classification of a fence (guard, collector, stamp and build use it)."""
    if block.mark("skip") is not None:
        return "skipped"
    if block.mark("output_on") is not None and block.syntax not in markers.RUN_SYNTAX | markers.DIAGRAM_SYNTAX:
        return "version output"
    if block.syntax in markers.RUN_SYNTAX:
        return "run"
    if block.syntax in markers.DIAGRAM_SYNTAX:
        if any(block.mark(m) for m in markers.DIAGRAM_MARKS):
            return "checked diagram"
        return "diagram"
    return "unaccounted"


_KEPT: dict[Path, "Page"] = {}  # path -> its model (Page.kept)


def _front_matter_lines(text: str) -> int:
    """How many lines at the top of ``text`` are front matter (mkdocs.utils.meta.get_data, as the
    build reads a page's meta data): 0 when it has none."""
    from mkdocs.utils.meta import get_data

    doc, meta = get_data(text)
    if not meta:
        return 0
    return text[: len(text) - len(doc)].count("\n")


class Page:
    """One page, read once: ``Page.parse(path)`` or ``Page.from_text(text, path)``."""

    def __init__(self, text: str, path: Path, lines: list[str] | None = None):
        self.path = Path(path)
        self.text = text
        self.lines = text.splitlines() if lines is None else list(lines)
        self.errors: list[str] = []
        self.fences: list[Fence] = []
        self.tables: list[Table] = []
        self.slots: list[tuple[str, int]] = []  # generated slots: (marker comment, line index)
        self._headings = None
        self._blocks = None
        # the front matter's lines (YAML between --- lines, as mkdocs reads it): not Markdown, so
        # not prose, and its comments are not headings; a region of a page (from_lines) has none
        self.front_matter = _front_matter_lines(text) if lines is None else 0
        self._scan()

    @classmethod
    def parse(cls, path) -> "Page":
        return cls(Path(path).read_text(encoding="utf-8"), path)

    @classmethod
    def from_text(cls, text: str, path) -> "Page":
        return cls(text, path)

    @classmethod
    def kept(cls, path, text: str | None = None) -> "Page":
        """The model of the page at ``path`` (of ``text``, else of the file), kept while the page
        is unchanged: the build's products (the deck, the indexes) ask for the same pages on
        every build, and `make serve` rebuilds in one process, so only an edited page is parsed
        again. The model is shared: read it, do not change it."""
        path = Path(path)
        text = path.read_text(encoding="utf-8") if text is None else text
        page = _KEPT.get(path)
        if page is None or page.text != text:
            page = _KEPT[path] = cls(text, path)
        return page

    @classmethod
    def from_lines(cls, lines: list[str], path="page.md") -> "Page":
        """A page of ``lines`` (a region of a page, say): its nodes index these lines."""
        return cls("\n".join(lines), path, lines)

    def where(self, index: int) -> str:
        return f"{rel(self.path)}:{index + 1}"

    # -- the one scanner ------------------------------------------------------------------

    def _scan(self):
        lines, i = self.lines, self.front_matter
        table_marker = {c: re.compile(r"^\s*<!--\s*" + re.escape(c).replace(r"\ ", r"\s*") + r"\s*-->\s*$")
                        for c in markers.TABLE_MARKERS}
        self._comments: list[tuple[int, str, str]] = []  # (index, "mark" | "codeblocks", text) in prose
        while i < len(lines):
            line = lines[i]
            opened = OPENER.match(line)
            if opened and not (opened.group("fence")[0] == "`" and "`" in opened.group("info")):
                i = self._fence(i, opened)
                continue
            s = line.strip()
            if (m := CODEBLOCKS.match(s)) is not None:
                self._comments.append((i, "codeblocks", m.group(1).strip("- ")))
            elif (m := MARK.match(s)) is not None:
                self._comments.append((i, "mark", m.group(1)))
            else:
                for comment, pattern in table_marker.items():
                    if pattern.match(line):
                        self._table(i, comment)
                        break
            i += 1

    def _fence(self, i: int, opened) -> int:
        lines = self.lines
        indent = len(opened.group("indent").expandtabs(4))
        run = opened.group("fence")
        char, width = run[0], len(run)
        end = len(lines)
        for j in range(i + 1, len(lines)):
            s = lines[j].strip()
            if len(s) >= width and s == char * len(s):
                end = j
                break
        body = [line[indent:] if line[:indent].strip() == "" else line.lstrip() for line in lines[i + 1:end]]
        fence = Fence(i, end, indent, char, width, opened.group("info").strip(),
                      "\n".join(body) + "\n" if body else "")
        fence.container = self._container(i, indent)
        fence.tab = self._tab_above(i)
        if end == len(lines):
            self.errors.append(f"{self.where(i)}: the fence is never closed")
        self.fences.append(fence)
        return end + 1

    def _container(self, i: int, indent: int) -> int | None:
        if indent == 0:
            return None
        for j in range(i - 1, -1, -1):
            line = self.lines[j]
            if not line.strip():
                continue
            if len(line) - len(line.lstrip()) < indent:
                return j if CONTAINER.match(line) else None
        return None

    def _tab_above(self, i: int) -> str | None:
        j = i - 1
        while j >= 0 and (not self.lines[j].strip() or self.lines[j].strip().startswith("<!--")):
            j -= 1
        found = TAB.match(self.lines[j]) if j >= 0 else None
        return found.group(1) if found else None

    def _table(self, i: int, comment: str):
        if markers.TABLE_MARKERS[comment].slot:
            self.slots.append((comment, i))  # a build hook writes its table here
            return
        lines, j = self.lines, i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        start, body = j, []
        while j < len(lines) and lines[j].strip().startswith("|"):
            cells = PIPE.split(lines[j].strip().strip("|").replace("\\|", "\x00"))
            body.append([c.replace("\x00", "|").strip() for c in cells])
            j += 1
        if len(body) < 3:
            self.errors.append(f"{self.where(i)}: <!-- {comment} --> must be followed by a table "
                               "(header, separator, rows)")
            return
        self.tables.append(Table(comment, i, start, j - 1, body[0], body[2:]))

    # -- derived views --------------------------------------------------------------------

    @property
    def prose(self) -> list[bool]:
        """For each line: True when it is prose (not front matter, not inside a fence, nor a
        fence's own line)."""
        outside = [False] * self.front_matter + [True] * (len(self.lines) - self.front_matter)
        for f in self.fences:
            outside[f.start:f.end + 1] = [False] * (min(f.end, len(self.lines) - 1) - f.start + 1)
        return outside

    def fence_at(self, index: int) -> Fence | None:
        return next((f for f in self.fences if f.start == index), None)

    def tables_of(self, kind: str) -> list[Table]:
        if kind not in markers.TABLE_MARKERS:
            raise ValueError(f"<!-- {kind} --> is not in bookcheck.markers.TABLE_MARKERS")
        return [t for t in self.tables if t.kind == kind]

    @property
    def headings(self) -> list[Heading]:
        if self._headings is None:
            prose, found = self.prose, []
            for i, line in enumerate(self.lines):
                if prose[i] and (m := HEADING.match(line)):
                    found.append((i, len(m.group(1)), m.group(2)))
            anchors = _markdown_headings_anchors([self.lines[i] for i, _, _ in found])
            self._headings = [Heading(i, level, re.sub(r"\s*\{[^}]*\}\s*$", "", text), anchor)
                              for (i, level, text), anchor in zip(found, anchors)]
        return self._headings

    @property
    def title(self) -> str | None:
        """The page's own title: its first level-1 heading (None: it has none)."""
        return next((h.text for h in self.headings if h.level == 1), None)

    @property
    def sections(self) -> list[Section]:
        heads, out = self.headings, []
        for k, h in enumerate(heads):
            end = next((later.line - 1 for later in heads[k + 1:] if later.level <= h.level), len(self.lines) - 1)
            out.append(Section(h, h.line, end))
        return out

    def section_at(self, index: int) -> Heading | None:
        """The heading above line ``index`` (the last one at or before it)."""
        above = [h for h in self.headings if h.line <= index]
        return above[-1] if above else None

    @property
    def blocks(self) -> list:
        """The code blocks the checks see (Block); raises HarnessError with every
        problem of reading them."""
        if self._blocks is None:
            self._blocks, errors = self._read_blocks()
            self._block_errors = errors
        if self._block_errors or self.errors:
            raise HarnessError("\n".join(self.errors + self._block_errors))
        return self._blocks

    def _read_blocks(self):
        events = [(c[0], "comment", c) for c in self._comments] + [(f.start, "fence", f) for f in self.fences]
        pending: list[str] = []
        output_of = None
        blocks, errors = [], []
        for index, what, item in sorted(events, key=lambda e: e[0]):
            if what == "comment":
                _, how, text = item
                if how == "mark":
                    pending.append(text)
                elif text == "cont":
                    pending.append("pytest.mark.cont")
                elif text == "expected-output":
                    if not blocks:
                        errors.append(f"{self.where(index)}: an expected-output marker with no block above it")
                    elif blocks[-1].output_fence is not None:
                        errors.append(f"{self.where(index)}: the block at {blocks[-1].where} already has an output")
                    else:
                        output_of = blocks[-1]
                else:
                    errors.append(f"{self.where(index)}: <!--pytest-codeblocks:{text}--> is not a marker of the book; "
                                  "the markers are in bookcheck/markers.py")
                continue
            fence = item
            if fence.char != "`":
                continue  # a ~~~ fence: the guard rejects it by name
            fence.marks = list(pending)
            if output_of is not None:
                output_of.expected_output = fence.body
                output_of.output_fence = fence
                output_of = None
                continue
            block = Block(self.path, fence.lineno, fence.info, fence.body, None, fence=fence)
            for m in pending:
                try:
                    block.marks.append(markers.eval_mark(m))
                except Exception as exc:  # noqa: BLE001 - reported with its location
                    errors.append(f"{block.where}: cannot read marker <!--{m}-->: {exc}")
            pending = []
            block.cont = block.mark("cont") is not None
            block.kind = kind_of(block)
            if block.kind == "version output" and blocks and blocks[-1].kind == "run" and blocks[-1].expected_output:
                version = block.mark("output_on").args[:1]
                blocks[-1].outputs[str(version[0]) if version else ""] = block.code  # the guard checks the rest
            blocks.append(block)
        return blocks, errors


def notebook_title(path) -> str | None:
    """A notebook's own title: the first level-1 heading of its Markdown cells, each read as a
    page (None: it has none)."""
    import json

    for cell in json.loads(Path(path).read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            title = Page.from_lines("".join(cell["source"]).splitlines(), path).title
            if title is not None:
                return title
    return None


# The page's blocks and lines, for callers that need only those.


def parse_text(text: str, path: Path) -> list[Block]:
    """Every code block of a page's text (bookcheck.model.Page.blocks)."""
    return Page.from_text(text, path).blocks


def parse_page(path: Path) -> list[Block]:
    return Page.parse(path).blocks


def fences(lines: list[str]) -> list[tuple[int, int]]:
    """(index of the opening line, index of the closing line) of every fence of a page's lines,
    as the page model reads them."""
    return [(f.start, f.end) for f in Page.from_lines(lines).fences]


def outside_fences(lines: list[str]) -> list[bool]:
    """For each line: True when it is prose (not inside a fence, nor a fence's own line)."""
    return Page.from_lines(lines).prose


def expand_snippets(code: str) -> str:
    """Expand ``--8<--`` lines with pymdownx.snippets, configured as in mkdocs.yml."""
    if "--8<--" not in code:
        return code
    import markdown

    cfg = extension_config("pymdownx.snippets")
    cfg["base_path"] = [str(ROOT / p) for p in cfg.get("base_path", ["."])]
    md = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": cfg})
    lines = md.preprocessors["snippet"].run(code.splitlines())
    return "\n".join(lines) + "\n"


def snippet_files(code: str) -> list[Path]:
    """The files a block's ``--8<--`` lines include (for test-page and the notebook key)."""
    found = []
    for name in re.findall(r'--8<--\s+"([^":]+)', code):
        found.append(ROOT / name)
    return found
