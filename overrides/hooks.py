"""Build hooks (mkdocs.yml `hooks:`).

0. The page stamp: for every Markdown page with code, how its blocks are verified, counted by
   the test harness's own classification (tests/harness.py), and the date and commit of the
   build. The template (overrides/main.html) prints it; tests/test_site.py checks it is true.

1. The test markers of a page (HTML comments such as <!--pytest-codeblocks:cont-->) are
   removed from its Markdown before it is rendered. Left in, Markdown wraps such a comment
   (inside an admonition or a list, together with the fence after it) in a <p>, which leaves
   empty paragraphs between a code block and its output.
2. Notebook pages are kept free of requests to a CDN. The notebook HTML template of
   mkdocs-jupyter (nbconvert's) embeds a MathJax loader, and a module script that imports
   mermaid from a CDN when a notebook has a mermaid output. The book typesets math with its
   vendored KaTeX and makes no request off its own origin, so both are removed.
"""

import datetime
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = {}

CDN_SCRIPTS = [
    re.compile(r'<script src="[^"]*"> ?</script>\s*<!-- MathJax configuration -->', re.S),
    re.compile(r'<script type="text/x-mathjax-config">.*?</script>', re.S),
    re.compile(r'<script type="module">(?:(?!</script>).)*?https://cdnjs\.cloudflare\.com.*?</script>', re.S),
]


MARKER_LINE = re.compile(r"^[ \t]*<!--\s*(?:pytest[-.]|hand-trace:).*?-->[ \t]*\n", re.M)


def on_post_page(output, page, config):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    for pattern in CDN_SCRIPTS:
        output = pattern.sub("", output)
    return output


def _git(*args):
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def on_config(config):
    commit = _git("rev-parse", "--short=10", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    BUILD["commit"] = (commit + (" with local changes" if dirty else "")) if commit else "unknown (not a git checkout)"
    BUILD["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    return config


def on_page_markdown(markdown, page, config, files):
    if not page.file.src_uri.endswith(".md"):
        return markdown
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    import harness

    counts, reasons = harness.fence_counts([Path(page.file.abs_src_path)])
    blocks = counts["run"] + counts["skipped"]
    if blocks:
        page.meta["book_stamp"] = dict(
            counts,
            blocks=blocks,
            skipped_reasons=[r.split(": ", 1)[1] for r in reasons],
            **BUILD,
        )
    return MARKER_LINE.sub("", markdown)
