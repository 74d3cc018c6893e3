"""The built site: `mkdocs build --strict` passes, and every page works in a real browser
(diagrams rendered, math rendered, no request off the site's origin, no JavaScript error).
Fixture sites prove that the browser checks reject what they claim to reject."""

import os
from pathlib import Path

import pytest
import torch

import site_check

FIXTURES = Path(__file__).parent / "fixtures" / "site"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def need_browser():
    if site_check.chromium() is None:
        message = (
            "Debian chromium is not installed, so the browser checks of the site cannot run. "
            "Install it with `sudo apt-get install chromium` (bash .ci/run does)."
        )
        if IN_CI:
            pytest.fail("CI=true: " + message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def book(tmp_path_factory):
    return site_check.build_site(tmp_path_factory.mktemp("book") / "site")


def test_mkdocs_build_strict(book):
    assert book.returncode == 0, book.log[-3000:]


def test_stated_torch_version_is_the_installed_one():
    import yaml

    text = (site_check.ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    stated = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.strip().startswith("torch_version:")]
    assert stated == [torch.__version__.split("+")[0]]
    assert yaml  # mkdocs.yml is read as text: it holds !ENV and !!python tags


def test_test_markers_do_not_reach_the_html(book):
    """Markers are for the harness; in the HTML they would leave empty paragraphs between a
    block and its output (inside admonitions and lists)."""
    for page in site_check.site_pages(book.site):
        html = (book.site / page).read_text(encoding="utf-8")
        assert "<!--pytest" not in html and "<!-- hand-trace" not in html, page
        assert "<p></p>" not in html and "<p>\n<div" not in html, page


def test_notebook_is_executed_and_downloadable(book):
    page = (book.site / "notebooks" / "first-notebook" / "index.html").read_text(encoding="utf-8")
    assert "tensor(12.)" in page  # the executed cell's real output
    assert 'href="first-notebook.ipynb"' in page and "download" in page
    assert (book.site / "notebooks" / "first-notebook" / "first-notebook.ipynb").is_file()


def test_a_notebook_cell_that_raises_fails_the_build(tmp_path):
    config = site_check.fixture_project(FIXTURES.parent / "notebook-site", tmp_path / "project")
    built = site_check.build_site(tmp_path / "site", config)
    assert built.returncode != 0
    assert "element 0 of tensors does not require grad" in built.log
    assert "CellExecutionError" in built.log


def test_every_page_works_in_the_browser(book):
    need_browser()
    assert book.returncode == 0, book.log[-3000:]
    pages = site_check.site_pages(book.site)
    assert len(pages) >= 4, pages
    problems = site_check.check_site(book.site)
    assert problems == {}, "\n".join(f"{page}: {'; '.join(p)}" for page, p in problems.items())


def test_diagrams_and_math_render_after_instant_navigation(book, tmp_path):
    """A reader who arrives on a page without diagrams or math and clicks through to one."""
    need_browser()
    assert book.returncode == 0, book.log[-3000:]
    result, html = site_check.load_after_instant_navigation(
        book.site, "notebooks/first-notebook/", "part1/hand-trace/", tmp_path
    )
    assert "Hand trace: one graph by hand" in result.dom, "instant navigation did not happen"
    assert "first-notebook/" in result.url  # the browser never loaded the target page itself
    assert site_check.check_loaded_page(result, html) == []
    assert result.dom.count('<div class="mermaid"') == html.count('<pre class="mermaid">') == 2


def test_without_the_diagram_loader_material_would_fetch_mermaid_from_a_cdn(book, tmp_path):
    """The same navigation with diagrams.js emptied: the check sees the CDN request and the
    unrendered diagrams, so the test above can fail."""
    need_browser()
    result, html = site_check.load_after_instant_navigation(
        book.site, "notebooks/first-notebook/", "part1/hand-trace/", tmp_path, without=["assets/js/diagrams.js"]
    )
    problems = " ".join(site_check.check_loaded_page(result, html))
    assert "requests off the site's origin: https://unpkg.com/mermaid@11/dist/mermaid.min.js" in problems
    assert "only 0 of 2 diagrams rendered" in problems


def test_browser_checks_reject_broken_pages(tmp_path):
    need_browser()
    config = site_check.fixture_project(FIXTURES, tmp_path / "project")
    built = site_check.build_site(tmp_path / "site", config)
    assert built.returncode == 0, built.log[-3000:]
    problems = site_check.check_site(built.site)
    assert "diagram(s) not rendered" in " ".join(problems["broken-diagram/index.html"])
    assert "requests off the site's origin: https://cdn.example.com/library.min.js" in problems[
        "external-script/index.html"
    ]
    assert "KaTeX rendered 0 of 1 formulas" in problems["broken-math/index.html"]
