"""A page as the checks see it: its fences, each with its markers and its kind.

The fences are read by pytest-codeblocks' own parser (the reference for what its markers
mean), loaded from its file so that pytest itself is not imported: the build hooks read
pages too.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT, HarnessError, markers, rel

KINDS = ("run", "skipped", "diagram", "checked diagram", "version output", "unaccounted")


VENDORED_PARSER = Path(__file__).parent / "vendor" / "pytest_codeblocks_main.py"


@functools.lru_cache(maxsize=1)
def _codeblocks_parser():
    """pytest-codeblocks' fence parser, read from its file (the package's __init__ imports
    pytest): the installed one, else the identical copy in bookcheck/vendor/ (the build
    under `make serve`, whose venv holds no test tools)."""
    spec = importlib.util.find_spec("pytest_codeblocks")
    main = Path(spec.submodule_search_locations[0]) / "main.py" if spec else VENDORED_PARSER
    module_spec = importlib.util.spec_from_file_location("bookcheck._codeblocks_main", main)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module.extract_from_buffer


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


def parse_text(text: str, path: Path) -> list[Block]:
    """Every ``` fence of a page's text, with its markers.

    ``<!--pytest-codeblocks:cont-->`` is turned into a marker of the next block (same line
    count), because pytest-codeblocks would paste the code into the previous fence of any
    language and lose the output blocks in between.
    """
    text = markers.CONT.sub("<!--pytest.mark.cont-->", text)
    raw = _codeblocks_parser()(io.StringIO(text))
    lines = text.splitlines()
    blocks = []
    for cb in raw:
        code = fence_body(lines, cb.lineno, cb.code)
        shown = None
        if cb.expected_output is not None:
            shown = fence_body(lines, output_fence(lines, cb.lineno), cb.expected_output)
        block = Block(Path(path), cb.lineno, (cb.syntax or "").strip(), code, shown)
        for m in cb.marks:
            try:
                block.marks.append(markers.eval_mark(m))
            except Exception as exc:  # noqa: BLE001 - reported with its location
                raise HarnessError(f"{block.where}: cannot read marker <!--{m}-->: {exc}") from None
        block.cont = block.mark("cont") is not None
        block.kind = kind_of(block)
        if block.kind == "version output" and blocks and blocks[-1].kind == "run" and blocks[-1].expected_output:
            version = block.mark("output_on").args[:1]
            blocks[-1].outputs[str(version[0]) if version else ""] = block.code  # the guard checks the rest
        blocks.append(block)
    return blocks


TAB = re.compile(r'^\s*===\+?\s+"(.*)"\s*$')


def tab_above(lines: list[str], lineno: int) -> str | None:
    """The label of the content tab (``=== "label"``) that opens right above the fence on
    ``lineno`` (1-based), with only blank lines and marker comments between; else None."""
    i = lineno - 2
    while i >= 0 and (not lines[i].strip() or lines[i].strip().startswith("<!--")):
        i -= 1
    found = TAB.match(lines[i]) if i >= 0 else None
    return found.group(1) if found else None


def fences(lines: list[str]) -> list[tuple[int, int]]:
    """Every fence of a page, ``` or ~~~ of any length: (index of its opening line, index of
    its closing line, or len(lines) when it is never closed). The one scanner of a page's
    fences by lines; parse_page reads their contents through pytest-codeblocks."""
    found, start, char, n = [], None, "", 0
    for i, line in enumerate(lines):
        s = line.lstrip()
        if start is None:
            if s.startswith(("```", "~~~")):
                start, char = i, s[0]
                n = len(s) - len(s.lstrip(char))
        elif s.startswith(char * n) and not s.strip(char).strip():
            found.append((start, i))
            start = None
    if start is not None:
        found.append((start, len(lines)))
    return found


def outside_fences(lines: list[str]) -> list[bool]:
    """For each line: True when it is prose (not inside a fence, nor a fence's own line)."""
    outside = [True] * len(lines)
    for start, end in fences(lines):
        outside[start:end + 1] = [False] * (min(end, len(lines) - 1) - start + 1)
    return outside


def _fence_end(lines: list[str], start: int) -> int:
    """The index of the line that closes the fence opened on ``lines[start]``."""
    fence = lines[start]
    indent = len(fence) - len(fence.lstrip())
    ticks = len(fence.lstrip()) - len(fence.lstrip().lstrip("`"))
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.strip() == "`" * ticks and len(line) - len(line.lstrip()) <= indent + 3:
            return i
    return len(lines)


def fence_body(lines: list[str], lineno: int, parsed: str) -> str:
    """A fence's content exactly as the page holds it, the fence's indentation removed and
    blank lines kept (pytest-codeblocks' parser drops the blank lines of an indented fence,
    e.g. in an admonition, so that the code would run without them while a reader copies them).
    ``lineno``: the fence's line (1-based). Falls back to ``parsed`` if the two disagree on
    anything but blank lines."""
    start = lineno - 1
    if not (0 <= start < len(lines)) or not lines[start].lstrip().startswith("```"):
        return parsed
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = [line[indent:] if line[:indent].strip() == "" else line for line in lines[start + 1:_fence_end(lines, start)]]
    exact = "\n".join(body) + "\n" if body else ""
    if [line for line in exact.splitlines() if line.strip()] != [line for line in parsed.splitlines() if line.strip()]:
        return parsed
    return exact


def output_fence(lines: list[str], lineno: int) -> int:
    """The line (1-based) of the output fence that follows the fence on ``lineno``."""
    i = _fence_end(lines, lineno - 1) + 1
    while i < len(lines) and not lines[i].lstrip().startswith("```"):
        i += 1
    return i + 1


def parse_page(path: Path) -> list[Block]:
    return parse_text(Path(path).read_text(encoding="utf-8"), path)


@functools.lru_cache(maxsize=1)
def _snippet_config():
    import yaml

    # mkdocs.yml holds !ENV and !!python tags: read only the snippets extension's options.
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    for ext in config.get("markdown_extensions", []):
        if isinstance(ext, dict) and "pymdownx.snippets" in ext:
            return dict(ext["pymdownx.snippets"] or {})
    return {}


def expand_snippets(code: str) -> str:
    """Expand ``--8<--`` lines with pymdownx.snippets, configured as in mkdocs.yml."""
    if "--8<--" not in code:
        return code
    import markdown

    cfg = _snippet_config()
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
