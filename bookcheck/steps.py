"""The steps of the book's verification: which tests each runs, and which make them all.

`make test` runs the test steps side by side, each a pytest process of its own (``pytest
--step NAME``), as the Makefile's ``test`` target lists them; `make pdf` and `make lighthouse`
are steps run by their own targets. A test belongs to the step that lists its file; every other
test, and every page of docs/, belongs to ``pages``. Plain ``pytest`` (no ``--step``) runs every
test step's tests in one process, one after another.

Why these steps: each needs something the others do not, and each is mostly one core's work.

- pages: every page's blocks, diagrams and tables (in block workers, bookcheck.worker) and the
  tests of the reference code and of the harness.
- site: the built book in a browser (the book's ``mkdocs build --strict``, then every page opened
  on a phone, the search, axe, the API docs); needs Debian chromium.
- notebooks: every notebook executed in fresh kernels and compared with its stored outputs, on
  this machine and as a reader runs it (the site's wheel installed in a venv outside the project).
- serve: `make serve` from a fresh clone on every Python 3.10-3.13 found.
- pdf: the whole book printed to one PDF and checked from it (`make pdf`).
- lighthouse: Lighthouse's timings of the built pages (`make lighthouse`, with nothing else running).

A step that passes as a whole (no selection) records that it verified the project's files
(bookcheck.results.record_verified); the page stamp calls the book verified when every test step
has such a record for exactly the files it is built from (bookcheck.results.verified).
"""

from __future__ import annotations

# step -> the test files it runs ("pages": everything no other step lists)
STEPS: dict[str, tuple[str, ...]] = {
    "pages": (),
    "site": ("tests/test_site.py", "tests/test_site_a11y.py", "tests/test_search.py", "tests/test_api_docs.py"),
    "notebooks": ("tests/test_notebooks_anywhere.py", "tests/test_notebook_outputs.py"),
    "serve": ("tests/test_serve_anywhere.py",),
    "pdf": ("tests/test_pdf.py",),
    "lighthouse": ("tests/test_lighthouse.py",),
}
# The steps of `make test`: what the page stamp's "verified" needs.
TEST_STEPS = ("pages", "site", "notebooks", "serve")


def step_of(nodeid: str) -> str:
    """The step a test (its pytest node id, relative to the project's root) belongs to."""
    path = nodeid.split("::", 1)[0]
    for step, files in STEPS.items():
        if path in files:
            return step
    return "pages"


def check_step(name: str) -> str:
    if name not in STEPS:
        raise ValueError(f"--step {name!r}: pass one of {', '.join(STEPS)}")
    return name
