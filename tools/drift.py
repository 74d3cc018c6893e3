"""`make drift TORCH=2.14.1`: which outputs and errors of the pages change on another torch.

Builds (once) a second venv under .cache/torch-VERSION/ with that torch and the
book's other pins (tools.torch_venvs.venv_for), runs every page's blocks there (each chain once, first seed), and
reports per page the blocks whose output differs from what the page shows for that version,
or which now fail. A report, not a test: nothing is changed. For a verified version
(mkdocs.yml, extra.torch_also) a difference is shown on the page in content tabs
(bookcheck/versions.py) and `make test-torch` checks it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from bookcheck import DOCS, ROOT
from tools.torch_venvs import venv_for

CACHE = ROOT / ".cache" / "drift"


def first_difference(was: str, now: str) -> str:
    """The first line that differs, as ``line N: 'was' -> 'now'``."""
    a, b = was.splitlines(), now.splitlines()
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "(no line)"
        y = b[i] if i < len(b) else "(no line)"
        if x != y:
            return f"line {i + 1}: {x[:90]!r} -> {y[:90]!r}"
    return "only trailing white space differs"


def report(pages: list[Path]) -> tuple[list[str], dict]:
    """Run the pages here; lines of the report and its totals."""
    import torch

    from bookcheck.model import parse_page
    from bookcheck.run import SEEDS, PageRuns
    from bookcheck.versions import running

    lines = [f"torch {torch.__version__}, Python {sys.version.split()[0]}"]
    totals = {"pages": 0, "pages changed": 0, "blocks run": 0, "outputs changed": 0, "new errors": 0}
    for path in pages:
        blocks = parse_page(path)
        runs = PageRuns(blocks)
        changed = []
        for b in blocks:
            if b.kind != "run":
                continue
            totals["blocks run"] += 1
            outcome = runs.outcome(b, SEEDS[0])
            if outcome.error:
                totals["new errors"] += 1
                said = " / ".join(line.strip() for line in outcome.error.splitlines()[:3] if line.strip())
                changed.append(f"  {b.where}: fails: {said[:300]}")
            elif outcome.shown != (b.output_for(running()) or ""):
                totals["outputs changed"] += 1
                shown = b.output_for(running()) or ""
                changed.append(f"  {b.where}: output changes: {first_difference(shown, outcome.shown)}")
        totals["pages"] += 1
        if changed:
            totals["pages changed"] += 1
            lines.append(f"{path.relative_to(ROOT)}: {len(changed)} block(s)")
            lines += changed
    lines.append("summary: " + ", ".join(f"{v} {k}" for k, v in totals.items()))
    return lines, totals


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch", help="the torch version to compare with (builds its venv)")
    parser.add_argument("--here", action="store_true", help="run the pages with this interpreter's torch")
    parser.add_argument("pages", nargs="*", type=Path)
    args = parser.parse_args(argv)
    pages = [p.resolve() for p in args.pages] or sorted(DOCS.rglob("*.md"))
    if args.here:
        lines, _ = report(pages)
        print("\n".join(lines))
        return 0
    python = venv_for(args.torch)
    CACHE.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), str(ROOT)]))
    out = subprocess.run([str(python), "-m", "tools.drift", "--here", *map(str, pages)], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    text = out.stdout + (out.stderr[-3000:] if out.returncode else "")
    path = CACHE / f"report-torch-{args.torch}.txt"
    path.write_text(text, encoding="utf-8")
    print(text)
    print(f"(written to {path.relative_to(ROOT)})")
    return out.returncode


if __name__ == "__main__":
    raise SystemExit(main())
