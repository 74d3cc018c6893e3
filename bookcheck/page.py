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

KINDS = ("run", "skipped", "diagram", "checked diagram", "unaccounted")


@functools.lru_cache(maxsize=1)
def _codeblocks_parser():
    spec = importlib.util.find_spec("pytest_codeblocks")
    main = Path(spec.submodule_search_locations[0]) / "main.py"
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
    blocks = []
    for cb in raw:
        block = Block(Path(path), cb.lineno, (cb.syntax or "").strip(), cb.code, cb.expected_output)
        for m in cb.marks:
            try:
                block.marks.append(markers.eval_mark(m))
            except Exception as exc:  # noqa: BLE001 - reported with its location
                raise HarnessError(f"{block.where}: cannot read marker <!--{m}-->: {exc}") from None
        block.cont = block.mark("cont") is not None
        block.kind = kind_of(block)
        blocks.append(block)
    return blocks


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
