"""What `make test-page PAGE=docs/x/y.md` runs: the page itself (its guard, blocks,
diagrams checked against code and hand-trace tables) and the test files of the snippets it
includes or imports.

    python -m tools.related docs/part1/forks.md   ->  docs/part1/forks.md tests/test_x.py ...
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from bookcheck import ROOT
from bookcheck.notebooks import imported_snippets
from bookcheck.model import parse_page, snippet_files


def snippets_of(page: Path) -> list[Path]:
    found: dict[Path, None] = {}
    for b in parse_page(page):
        if not b.runnable:
            continue
        for path in snippet_files(b.code):
            found[path.resolve()] = None
        for path in imported_snippets(b.code):
            found[path.resolve()] = None
    for path in list(found):
        if path.suffix == ".py" and path.is_file():
            for dep in imported_snippets(path.read_text(encoding="utf-8")):
                found[dep.resolve()] = None
    return [p for p in found if p.name != "__init__.py"]


def tests_of(snippets: list[Path]) -> list[Path]:
    """Test files under tests/ that import one of ``snippets`` (by its module name)."""
    modules = []
    for path in snippets:
        try:
            parts = path.relative_to(ROOT).with_suffix("").parts
        except ValueError:
            continue
        modules.append((".".join(parts), parts[-1], ".".join(parts[:-1])))
    found = []
    for test in sorted((ROOT / "tests").glob("test_*.py")):
        text = test.read_text(encoding="utf-8")
        for dotted, name, package in modules:
            if re.search(rf"\b{re.escape(dotted)}\b", text) or re.search(
                rf"from\s+{re.escape(package)}\s+import\s+[^\n]*\b{re.escape(name)}\b", text
            ):
                found.append(test)
                break
    return found


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m tools.related docs/part/page.md", file=sys.stderr)
        return 2
    page = Path(argv[0])
    if not page.is_file() or page.suffix != ".md":
        print(f"PAGE={argv[0]}: no such Markdown page; pass e.g. PAGE=docs/part1/forks.md", file=sys.stderr)
        return 2
    args = [str(page)] + [str(t.relative_to(ROOT)) for t in tests_of(snippets_of(page))]
    print(" ".join(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
