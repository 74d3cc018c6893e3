"""Fixtures of the built book, shared by the site's tests (the site step, bookcheck.steps):
the session's one build, one browser and one pass over every page, each made when a test first
asks for it."""

from __future__ import annotations

import pytest

from bookcheck import site_check
from bookcheck import results

IN_CI = results.in_ci()


def cannot_run(message: str):
    """A browser check that cannot run: a failure under CI=true, a skip with the reason elsewhere."""
    if IN_CI:
        pytest.fail("CI=true: " + message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser():
    """The session's one headless chromium (site_check.browser(); ``browser.run(fn, ...)`` calls
    fn(playwright_browser, ...))."""
    if site_check.chromium() is None:
        cannot_run("Debian chromium is not installed, so the browser checks of the site cannot run. "
                   "Install it with `sudo apt-get install chromium` (bash .ci/run does).")
    try:
        site_check.browser()
    except ImportError as exc:
        cannot_run(f"the browser client is missing ({exc}); run `make .venv/.installed`")
    except Exception as exc:  # noqa: BLE001 - the browser could not start: say why
        cannot_run(f"chromium could not be started by Playwright: {type(exc).__name__}: {exc}")
    return site_check.browser()


@pytest.fixture(scope="session")
def book(tmp_path_factory):
    """The book's `mkdocs build --strict`: the one `make build` made when BOOK_SITE names its
    folder (make's step-site), else one of this session's (site_check.book_build)."""
    import os
    from pathlib import Path

    if os.environ.get("BOOK_SITE"):
        site = Path(os.environ["BOOK_SITE"]).resolve()
        if not (site / "index.html").is_file():
            pytest.fail(f"BOOK_SITE={site}: no built site there (make build makes it)")
        return site_check.Build(0, f"built by make build into {site}", 0.0, site)
    return site_check.book_build(tmp_path_factory.mktemp("book"))


@pytest.fixture(scope="session")
def site_pass(book, browser):
    """The book's browser pass over every page and the round trip (site_check.site_pass)."""
    assert book.returncode == 0, book.log[-3000:]
    return site_check.site_pass(book.site)


@pytest.fixture(scope="session")
def inspected(site_pass):
    """Every page of the book opened once in the browser, on a phone (site_check.inspect_site):
    {page: (Load, HTML)}; each Load's ``checks`` holds the per-page measurements
    (site_a11y.page_checks). Checks of every page take this fixture."""
    return site_pass[0]
