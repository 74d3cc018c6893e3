"""The built site: `mkdocs build --strict` passes, and every page works in a real browser
(diagrams rendered, math rendered, no request off the site's origin, no JavaScript error).
Fixture sites prove that the browser checks reject what they claim to reject.

The book is the site `make build` made (BOOK_SITE, make's step-site) or one this session builds
(the ``book`` fixture); one browser serves every check (the ``browser`` fixture; ``inspected``
holds every page of the book as the browser showed it, for checks that look at all pages)."""

import re
from pathlib import Path

import torch

import harness
from bookcheck import markers
from bookbuild.pdf import PDF_NAME
from bookcheck import round_trip, site_check
from bookcheck.model import config, notebook_title

FIXTURES = Path(__file__).parent / "fixtures" / "site"


def test_mkdocs_build_strict(book):
    assert book.returncode == 0, book.log[-3000:]


def test_stated_torch_version_is_the_installed_one():
    assert config()["extra"]["torch_version"] == torch.__version__.split("+")[0]


def test_test_markers_do_not_reach_the_html(book):
    """Markers are for the harness; in the HTML they would leave empty paragraphs between a
    block and its output (inside admonitions and lists)."""
    for page in site_check.site_pages(book.site):
        html = (book.site / page).read_text(encoding="utf-8")
        assert "<!--pytest" not in html, page
        for comment in markers.TABLE_MARKERS:
            assert f"<!-- {comment} -->" not in html, (page, comment)
        assert "<p></p>" not in html and "<p>\n<div" not in html, page
        assert not re.search(r"</div>\s*</p>", html), f"{page}: a code block wrapped in a paragraph"


def test_notebook_page_shows_its_stored_outputs_and_is_downloadable(book):
    page = (book.site / "notebooks" / "first-notebook" / "index.html").read_text(encoding="utf-8")
    assert "tensor(12.)" in page  # the stored output (test_notebook_outputs.py: it is current)
    assert 'href="first-notebook.ipynb"' in page and "download" in page
    assert (book.site / "notebooks" / "first-notebook" / "first-notebook.ipynb").is_file()


def test_a_notebook_outside_the_nav_is_titled_by_its_first_heading(book):
    """The workshop's notebooks are not in the nav: each page's title (the header, the browser's
    tab, the search result) is its notebook's first heading, not its file's name ("W attention");
    a notebook in the nav keeps its nav title (mkdocs-jupyter's ignore_h1_titles)."""
    import json

    index = {d["location"]: d["title"] for d in
             json.loads((book.site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]}
    notebooks = sorted((harness.DOCS / "notebooks").glob("w-*.ipynb"))
    assert len(notebooks) >= 9, notebooks
    for path in notebooks:
        heading = notebook_title(path)
        html = (book.site / "notebooks" / path.stem / "index.html").read_text(encoding="utf-8")
        assert f"<title>{heading} - " in html, path.stem
        assert index[f"notebooks/{path.stem}/"] == heading, path.stem
    html = (book.site / "notebooks" / "02-gradient-check" / "index.html").read_text(encoding="utf-8")
    assert "<title>2. Gradient check - " in html


def test_a_notebooks_headings_have_the_anchors_the_page_model_gives_them(book):
    """The general-sentence scan reads a notebook as a page (claims.notebook_text) and names its
    sections by the page model's anchors (a review's shown_by, "...ipynb#symptom"): each is the
    id nbconvert gives that heading on the built page."""
    from bookcheck import claims
    from bookcheck.model import Page

    checked, missing = 0, []
    for path in sorted((harness.DOCS / "notebooks").glob("*.ipynb")):
        text, _ = claims.notebook_text(path)
        html = (book.site / "notebooks" / path.stem / "index.html").read_text(encoding="utf-8")
        ids = set(re.findall(r'\bid="([^"]+)"', html))
        for heading in Page.from_text(text, path).headings:
            checked += 1
            if heading.anchor not in ids:
                missing.append(f"{path.name}: {heading.text!r} -> #{heading.anchor}")
    assert checked >= 50, checked
    assert missing == []


def test_a_notebooks_search_entries_hold_its_text_only(book):
    """Material's search indexes a notebook page's content: its headings without nbconvert's
    permalink (the title read "Starter¶"), its cells without their prompts ("In [1]:") and
    without the template's copy button ("Copied!"; overrides/rewrites.py, NOTEBOOK_CONTENT).
    The set-up cell, the same in every generated notebook, is left out: its words (its
    WHEEL line, the error it raises) find the one section that explains it."""
    import json

    from bookbuild.notebook_gen import WHEEL_LINE

    entries = [d for d in json.loads((book.site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
               if d["location"].startswith("notebooks/")]
    assert len(entries) >= 50, len(entries)
    for d in entries:
        assert "\u00b6" not in d["title"], d["title"]
        assert "Copied!" not in d["text"] and not re.search(r"(In|Out)\s*\[\d*\]:", d["text"]), (d["location"], d["text"][:200])
    assert any(d["title"] == "Acceptance check" for d in entries)
    words = WHEEL_LINE.split("  #")[0]
    assert [d["location"] for d in entries if words in d["text"]] == ["notebooks/anywhere/#the-set-up-cell"]
    assert any(d["location"] == "notebooks/01-hand-trace/" and "hand" in d["text"].lower() for d in entries)


def test_every_page_works_in_the_browser(inspected):
    assert len(inspected) >= 4, list(inspected)
    problems = site_check.site_problems(inspected)
    assert problems == {}, "\n".join(f"{page}: {'; '.join(p)}" for page, p in problems.items())


def test_a_reused_tab_reports_each_page_alone_after_a_load_that_failed(book, browser):
    """open_many keeps its tabs: a load that fails is reported, and the page the same tab loads
    next, then again, loads, with its own requests and no console error of the one before
    (requests listed twice would be the first load's kept). Two failures: a port chromium
    refuses to load (9, on its list of unsafe ports) and one nothing listens on. With the
    failed tab kept, its error page interrupted the next about:blank, so the page after a
    failure was reported as failed too (the first case), or the load hung (the second)."""
    from bookcheck.serving import unused_port

    closed = f"http://127.0.0.1:{unused_port()}/"  # a port nothing listens on
    html = (book.site / "part1" / "hand-trace" / "index.html").read_text(encoding="utf-8")
    with site_check.serve(book.site) as base:
        page = f"{base}part1/hand-trace/"
        for bad, error in (("http://127.0.0.1:9/", "ERR_UNSAFE_PORT"), (closed, "ERR_CONNECTION_REFUSED")):
            failed, first, again = browser.open_many([bad, page, page], at_once=1)
            assert failed.returncode == 1 and error in " ".join(failed.console), failed.console
            assert first.returncode == again.returncode == 0, (first.console, again.console)
            assert first.console == again.console == []
            assert first.requests and sorted(first.requests) == sorted(again.requests), (first.requests, again.requests)
            assert all(url.startswith(base) for _, url in first.requests), first.requests
            assert site_check.check_loaded_page(first, html) == []


def test_diagrams_and_math_render_after_instant_navigation(book, browser):
    """A reader who arrives on a page without diagrams or math and clicks through to one."""
    assert book.returncode == 0, book.log[-3000:]
    result, html = site_check.load_after_instant_navigation(
        book.site, "notebooks/first-notebook/", "part1/hand-trace/"
    )
    assert "Hand trace: one graph by hand" in result.dom, "instant navigation did not happen"
    assert "first-notebook/" in result.url  # the browser never loaded the target page itself
    assert site_check.check_loaded_page(result, html) == []
    assert result.dom.count('<div class="mermaid"') == html.count('<pre class="mermaid">') == 2


def test_without_the_diagram_loader_material_would_fetch_mermaid_from_a_cdn(book, browser):
    """The same navigation with diagrams.js emptied: the check sees the CDN request and the
    unrendered diagrams, so the test above can fail."""
    result, html = site_check.load_after_instant_navigation(
        book.site, "notebooks/first-notebook/", "part1/hand-trace/", without=["assets/js/diagrams.js"]
    )
    problems = " ".join(site_check.check_loaded_page(result, html))
    assert "requests off the site's origin: https://unpkg.com/mermaid@11/dist/mermaid.min.js" in problems
    assert "only 0 of 2 diagrams rendered" in problems


def test_browser_checks_reject_broken_pages(browser, tmp_path):
    config = site_check.fixture_project(site_check.ROOT / "tests" / "fixtures" / "site", tmp_path / "broken-site")
    built = site_check.build_site(tmp_path / "broken-site" / "site", config)
    assert built.returncode == 0, built.log[-3000:]
    problems = site_check.check_site(built.site)
    assert "diagram(s) not rendered" in " ".join(problems["broken-diagram/index.html"])
    assert "requests off the site's origin: https://cdn.example.com/library.min.js" in problems[
        "external-script/index.html"
    ]
    assert "KaTeX rendered 0 of 1 formulas" in problems["broken-math/index.html"]
    # A diagram type whose code is not vendored fails here, not on a reader's screen.
    unvendored = " ".join(problems["unvendored-diagram/index.html"])
    assert "1 of 1 mermaid diagram(s) not rendered" in unvendored, unvendored
    assert re.search(r"Failed to fetch dynamically imported module: \S+/chunks/mermaid\.esm\.min/pieDiagram-\w+\.mjs", unvendored), unvendored


MERMAID = site_check.ROOT / "docs" / "assets" / "vendor" / "mermaid"
STATIC_IMPORT = re.compile(r'(?:\bfrom\s*|\bimport\s*)"(\.{1,2}/[^"]+\.mjs)"')
DYNAMIC_IMPORT = re.compile(r'\bimport\(\s*"(\.{1,2}/[^"]+\.mjs)"\s*\)')


def test_vendored_mermaid_has_every_file_its_files_import_by_name():
    """mermaid's ES module build is vendored in part (docs/assets/vendor/VERSIONS.txt): every file
    a vendored file imports by name (import ... from "./x.mjs") is there, and every vendored file
    is imported by another. The chunks it imports on demand (import("./x.mjs"), one per diagram
    type) are there only for the diagram types the pages use: the browser pass draws every
    diagram of every page, so a missing one fails there (test_browser_checks_reject_broken_pages)."""
    entry = MERMAID / "mermaid.esm.min.mjs"
    files = {p.resolve() for p in MERMAID.rglob("*.mjs")}
    assert entry.resolve() in files and not (MERMAID / "mermaid.min.js").exists()
    missing, reached = [], {entry.resolve()}
    for path in sorted(files):
        text = path.read_text(encoding="utf-8")
        for target in STATIC_IMPORT.findall(text):
            found = (path.parent / target).resolve()
            reached.add(found)
            if found not in files:
                missing.append(f"{path.relative_to(MERMAID)} imports {target}")
        reached |= {(path.parent / t).resolve() for t in DYNAMIC_IMPORT.findall(text)}
    assert len(files) >= 10 and missing == []
    assert sorted(str(p.relative_to(MERMAID.resolve())) for p in files - reached) == []


copied_pages = round_trip.copied_pages


def test_code_copied_from_the_site_prints_what_the_page_shows(site_pass):
    """The round trip: every page's blocks, as the copy button gives them, pasted in order
    into a fresh interpreter, print exactly the outputs the page shows."""
    _, pages, structural, problems = site_pass
    assert structural == {}
    ran = sum(1 for blocks in pages.values() for b in blocks if not b["skip"])
    assert ran >= 100, ran
    assert problems == {}, "\n\n".join(f"{page}:\n" + "\n".join(p) for page, p in problems.items())


def test_round_trip_catches_html_that_differs_from_the_markdown(book, browser, tmp_path):
    """A page whose HTML code differs from its Markdown (one number changed in the first
    block of the model page) fails the round trip, although the Markdown passes."""
    site = tmp_path / "site"
    import shutil

    shutil.copytree(book.site, site)
    page = site / "part1" / "hand-trace" / "index.html"
    html = page.read_text(encoding="utf-8")
    tampered = html.replace('<span class="mf">3.0</span>', '<span class="mf">4.0</span>', 1)
    assert tampered != html
    page.write_text(tampered, encoding="utf-8")
    inspected = site_check.inspect_site(site, only={"part1/hand-trace/index.html"})
    pages, structural = copied_pages(inspected)
    assert structural == {}
    problems = round_trip.round_trip(pages)
    message = "\n".join(problems["part1/hand-trace/index.html"])
    first = next(b for b in harness.parse_page(harness.DOCS / "part1" / "hand-trace.md") if b.syntax == "python")
    assert f"{first.where}: the code a reader copies from the site is not the code that ran" in message
    assert "4.0" in message and "3.0" in message  # the first line that differs, both versions


def test_every_page_with_code_carries_a_true_stamp(book):
    """The stamp under each page is generated from the same classification the tests use."""
    import re

    from bookcheck import versions

    stamped = 0
    for rel in site_check.site_pages(book.site):
        md = round_trip.source_of(rel)
        if md is None:
            continue
        counts, reasons = harness.fence_counts([md])
        html = (book.site / rel).read_text(encoding="utf-8")
        aside = re.search(r'<aside class="book-verified"([^>]*)>(.*?)</aside>', html, re.S)
        if counts["run"] + counts["skipped"] == 0:
            assert aside is None, rel
            continue
        assert aside, f"{rel}: a page with code blocks has no stamp"
        attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', aside.group(1)))
        assert int(attrs["run"]) == counts["run"], rel
        assert int(attrs["skipped"]) == counts["skipped"], rel
        assert int(attrs["outputs"]) == counts["verified outputs"], rel
        assert int(attrs["errors"]) == counts["expected errors"], rel
        text = " ".join(aside.group(2).split())
        assert "torch 2.13.0" in text and "from commit" in text, text
        run, blocks = counts["run"], counts["run"] + counts["skipped"]
        if counts["skipped"]:
            assert f"{run} of the {blocks} code blocks on this page {'is' if run == 1 else 'are'} run" in text, text
        else:
            assert ("The code block on this page is run" if blocks == 1 else
                    f"All {blocks} code blocks on this page are run") in text, text
        # the other torch runs the Python blocks; a shell command runs the book's venv in every run
        python, others = run - counts["shell commands"], " and ".join(versions.also())
        if python and counts["shell commands"]:
            assert f"and its {python} Python block{'' if python == 1 else 's'} again on torch {others} (CPU)" in text, text
        elif python:
            assert f"and again on torch {others} (CPU)" in text, text
        else:
            assert "again on torch" not in text, text
        if counts["outputs of another torch"]:
            assert f"({counts['outputs of another torch']} also as torch" in text, text
        for reason in reasons:
            assert reason.split(": ", 1)[1] in text, f"{rel}: the stamp does not give the skip reason"
        stamped += 1
    assert stamped >= 10


def test_print_page_links_lead_to_pages_of_the_site(book):
    """The print page (the whole book on one page, what `make pdf` prints) turns links between
    pages into links within itself; a link that leaves it (a workshop notebook, which is not in
    the nav, a download) must lead to a file of the site. Its in-page links are checked with
    every page's (test_site_a11y.test_every_toc_link_and_in_page_anchor_resolves)."""
    import os

    html = (book.site / site_check.PRINT_PAGE).read_text(encoding="utf-8")
    where = os.path.dirname(site_check.PRINT_PAGE)
    out = {h for h in re.findall(r"""<a\b[^>]*?\bhref=["']([^"'#]+)(?:#[^"']*)?["']""", html)
           if not re.match(r"[a-z]+:", h)}
    missing = []
    for href in sorted(out):
        if href.endswith("/" + PDF_NAME):
            continue  # the home page's link to the PDF, which `make pdf` writes after the build
        target = book.site / os.path.normpath(os.path.join(where, href))
        if not (target.is_file() or (target / "index.html").is_file()):
            missing.append(href)
    assert missing == []
    assert any("notebooks/w-" in h for h in out) and any("downloads/" in h for h in out), sorted(out)[:20]
