"""Fixtures of the built book, shared by the site's tests (test_site.py, test_site_a11y.py,
test_api_docs.py): the session's one build, one browser and one pass over every page."""

from __future__ import annotations

import pytest

import site_check
from bookcheck import results

IN_CI = results.in_ci()


def cannot_run(message: str):
    """A browser check that cannot run: a failure under CI=true, a skip with the reason elsewhere."""
    if IN_CI:
        pytest.fail("CI=true: " + message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser():
    """The session's one headless chromium (site_check.browser(): a Browser's methods, run in
    the browser's thread; ``browser.run(fn, ...)`` calls fn(playwright_browser, ...))."""
    if site_check.chromium() is None:
        cannot_run("Debian chromium is not installed, so the browser checks of the site cannot run. "
                   "Install it with `sudo apt-get install chromium` (bash .ci/run does).")
    try:
        site_check.browser().start()
    except ImportError as exc:
        cannot_run(f"the browser client is missing ({exc}); run `make .venv/.installed`")
    except Exception as exc:  # noqa: BLE001 - the browser could not start: say why
        cannot_run(f"chromium could not be started by Playwright: {type(exc).__name__}: {exc}")
    return site_check.browser()


@pytest.fixture(scope="session")
def book():
    """The book's `mkdocs build --strict`, started in the background when the session starts."""
    return site_check.BACKGROUND.build("book")


@pytest.fixture(scope="session")
def site_pass(book, browser):
    """The book's browser pass (in the background process, site_check.Background) and the
    round trip."""
    assert book.returncode == 0, book.log[-3000:]
    return site_check.BACKGROUND.site_pass()


@pytest.fixture(scope="session")
def inspected(site_pass):
    """Every page of the book opened once in the browser, on a phone (site_check.inspect_site):
    {page: (Load, HTML)}; each Load's ``checks`` holds the per-page measurements
    (site_a11y.page_checks). Checks of every page take this fixture."""
    return site_pass[0]
