"""Build hooks (mkdocs.yml `hooks:`).

0. The page stamp: for every Markdown page with code, how its blocks are verified, counted by
   the harness's own page model (the top-level package bookcheck, installed with the
   book's stack), and the date and commit of the build. The template (overrides/main.html)
   prints it; tests/test_site.py checks it is true.

1. The test markers of a page (HTML comments such as <!--pytest-codeblocks:cont-->) are
   removed from its Markdown before it is rendered. Left in, Markdown wraps such a comment
   (inside an admonition or a list, together with the fence after it) in a <p>, which leaves
   empty paragraphs between a code block and its output.
2. Notebook pages are kept free of requests to a CDN. The notebook HTML template of
   mkdocs-jupyter (nbconvert's) embeds a MathJax loader, and a module script that imports
   mermaid from a CDN when a notebook has a mermaid output. The book typesets math with its
   vendored KaTeX and makes no request off its own origin, so both are removed, with the
   comment that closes the mermaid part. This runs before mermaid2's post_page (event
   priority), which parses with BeautifulSoup every page whose HTML holds the word "mermaid",
   to look for diagrams: a notebook page (none has a diagram) no longer holds it, and is not
   parsed (about 2 s of a build, for the 14 notebooks).
3. Notebooks are shown as committed, with their stored outputs (mkdocs-jupyter's `execute: false`;
   bookcheck.notebooks writes them and the tests prove them current).
4. The search index carries what the site's search box needs to send a pasted error message
   to its heading on the page of errors (below, _add_error_search).

Serving needs no torch: nothing here, in overrides/site_hooks.py or overrides/api_docs.py, nor
what they import of bookcheck, imports it (tests/test_serve_anywhere.py builds without it). The
book's bookcheck is imported from this checkout, whichever venv runs mkdocs.
"""

import re
import subprocess
import sys
from pathlib import Path

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parent.parent
BUILD = {}
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # bookcheck of this checkout (the serve venv does not install it)

# What 2. removes from a notebook page: nbconvert's MathJax loader and its configuration, its
# module script that imports mermaid from a CDN, and the comment that closes the mermaid part.
NOTEBOOK_REMOVED = [
    re.compile(r'<script src="[^"]*"> ?</script>\s*<!-- MathJax configuration -->', re.S),
    re.compile(r'<script type="text/x-mathjax-config">.*?</script>', re.S),
    re.compile(r'<script type="module">(?:(?!</script>).)*?https://cdnjs\.cloudflare\.com.*?</script>', re.S),
    re.compile(r"<!-- End of mermaid configuration -->"),
]


from bookcheck.counts import text_counts  # noqa: E402 - after the module docstring's constants
from bookcheck.markers import MARKER_LINE, TABLE_MARKERS, resolve  # noqa: E402
from bookbuild import indexes, site_build  # noqa: E402
from bookcheck import versions  # noqa: E402

# Pages built from the page model: the line of a generated slot's marker (bookcheck.markers,
# TABLE_MARKERS with ``generate``) is replaced by what its function returns (Markdown), given the
# page's path and every page of docs/.
GENERATED = {t.comment: resolve(t.generate) for t in TABLE_MARKERS.values() if t.generate}
GENERATED_LINE = re.compile(r"^<!--\s*(" + "|".join(map(re.escape, GENERATED)) + r")\s*-->[ \t]*$", re.M)


@event_priority(50)  # before mermaid2's (see 2.)
def on_post_page(output, page, config):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    for pattern in NOTEBOOK_REMOVED:
        output = pattern.sub("", output)
    return output


def on_config(config):
    # The commit and date of the build and the passing runs of exactly these files, which the
    # page stamps print (also part of the built site's key: `make build` reuses a current site).
    BUILD.update(site_build.build_facts())
    return config


def on_page_markdown(markdown, page, config, files):
    if not page.file.src_uri.endswith(".md"):
        return markdown
    if GENERATED_LINE.search(markdown):  # a generated list (what differs on another torch, the errors)
        pages = sorted(Path(config["docs_dir"]).rglob("*.md"))
        here = Path(page.file.abs_src_path)
        markdown = GENERATED_LINE.sub(lambda m: GENERATED[m.group(1)](here, pages), markdown)
    counts, reasons = text_counts(markdown, Path(page.file.abs_src_path))
    blocks = counts["run"] + counts["skipped"]
    if blocks:
        page.meta["book_stamp"] = dict(
            counts,
            blocks=blocks,
            skipped_reasons=[r.split(": ", 1)[1] for r in reasons],
            **BUILD,
        )
    return MARKER_LINE.sub("", markdown)


def on_startup(command, dirty):
    import logging

    if command == "serve" and dirty:
        # `make serve` asks for dirty rebuilds on purpose; mkdocs' notice about them is a
        # warning, which strict mode (mkdocs.yml) would turn into an aborted build.
        logging.getLogger("mkdocs.commands.build").addFilter(lambda r: "'dirty' build" not in r.getMessage())


# 3. The book's `snippets` wheel, and its address in the set-up cell of every notebook offered
#    for download (bookbuild/notebook_gen.py writes the line `WHEEL = None  # ...`; the address is
#    site_url, i.e. SITE_URL, + downloads/<wheel>). The wheel is made before the build's files are
#    collected, when it is missing or was made from other sources than snippets/ holds now
#    (bookbuild.wheel.ensure: `pip wheel`, a few seconds, then nothing until snippets/ changes),
#    into docs/downloads/, which mkdocs copies like any file of docs/. So a plain `mkdocs build
#    --strict` or `mkdocs serve` on a fresh clone works as `make build` and `make serve` do.
#    A wheel that cannot be made (no pip or setuptools in the venv): a warning that says why.
def on_pre_build(config):
    import logging

    from bookbuild import wheel as snippets_wheel

    downloads = Path(config.get("docs_dir") or ROOT / "docs") / "downloads"
    try:
        snippets_wheel.ensure(downloads)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        logging.getLogger("mkdocs.hooks.book").warning(
            "the wheel of the snippets package could not be made in %s: %s", downloads, exc)


def on_post_build(config):
    import json
    import logging

    from bookbuild import wheel as snippets_wheel

    site = Path(config["site_dir"])
    _add_error_search(config)
    (site / "downloads").mkdir(exist_ok=True)
    _write_deck(config, site / "downloads")
    downloads = Path(config.get("docs_dir") or ROOT / "docs") / "downloads"
    made = snippets_wheel.current(downloads)
    if made is None:
        logging.getLogger("mkdocs.hooks.book").warning(
            "the wheel of the snippets package in %s is missing or not made from snippets/ as it is now; "
            "run `python -m bookbuild.wheel` to see why it cannot be made", downloads)
        return
    if not config["site_url"]:
        return  # no address to write: the notebooks' set-up cell then says how to install by hand
    name = made.name
    placeholder = re.compile(r"^WHEEL = None(?=  #)", re.M)
    address = json.dumps(config["site_url"].rstrip("/") + "/downloads/" + name)
    for path in site.rglob("*.ipynb"):
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = [c for c in nb["cells"] if c["cell_type"] == "code" and placeholder.search("".join(c["source"]))]
        for cell in cells:
            cell["source"] = placeholder.sub(lambda m: "WHEEL = " + address, "".join(cell["source"]))
        if cells:
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# 4. The data the site's search box needs to send a pasted error message to its heading on the
#    page of errors (bookbuild.indexes.search_data; docs/assets/js/search.js and search-query.js
#    use it), added to the search index as "book_errors", which Material's worker ignores. The
#    search plugin has written the index before the hooks run.
def _add_error_search(config):
    import json

    index = Path(config["site_dir"]) / "search" / "search_index.json"
    page = Path(config.get("docs_dir") or ROOT / "docs") / "reference" / "errors.md"
    if not index.is_file() or not page.is_file():  # no search plugin, or a site without that page
        return
    full = json.loads(index.read_text(encoding="utf-8"))
    if not full.get("docs"):  # moved already (overrides/site_hooks.py): nothing was written again
        return
    pages = sorted(page.parents[1].rglob("*.md"))
    full["book_errors"] = indexes.search_data(page, pages, full["config"]["separator"], full["docs"])
    index.write_text(json.dumps(full, separators=(",", ":")), encoding="utf-8")


# The drills as an Anki deck and a CSV in downloads/ (bookbuild/deck.py), built from the pages
#    with drills alone, once per content of those pages, the files they include and the site's address.
def _write_deck(config, downloads):
    from bookbuild import deck

    docs = Path(config.get("docs_dir") or ROOT / "docs")
    for name, data in deck.files(docs, config.get("site_url") or "").items():
        (downloads / name).write_bytes(data)
