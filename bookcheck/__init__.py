"""The book's verifier: the page model, its checks and the pytest plugin that makes them tests.
The build hooks (overrides/), the build's products (bookbuild/) and the tests import it; it
imports none of them.

    model       a page read once: fences, marked tables, headings with the site's anchors, sections;
                its code blocks, snippet expansion
    markers     the registry: markers, table comments, and CHECKS (node kind -> check -> counter)
    check       the one dispatcher over CHECKS for a page
    guard       every fence accounted for
    run         running blocks and cont chains (once per seed, outputs recorded), diagram probes
    worker      the processes blocks run in (one per kind of CPU kernel)
    state       torch global state: read, reset, leaks
    diagrams    graph_of / diagram_from
    tables, table_kinds   hand-trace tables and the other marked tables, checked against torch
    headings    distinct anchors
    counts      how a page's fences are verified (the stamp and the test summary)
    update      rewriting expected outputs from what blocks print (--update-outputs)
    claims      general sentences of the prose, and the block that shows each one
    notebooks   executing notebooks once per content key, compared with their stored outputs
    versions    the verified torch versions (read with the standard library)
    results     reuse of passes, and the records of whole passing steps (the stamp's "verified")
    steps       the steps of `make test` and which tests each runs
    plugin      the pytest plugin: pages collected as tests, --step, reuse
    site_check, site_a11y, round_trip, serving   the built site in a browser
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


class HarnessError(AssertionError):
    """A check of a page failed; the message says where and what to do."""


def scratch(prefix: str, parent: Path | None = None) -> Path:
    """A new empty folder (in ``parent``, else the system's temporary directory), removed when
    this process ends."""
    import atexit
    import shutil
    import tempfile

    if parent is not None:
        Path(parent).mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def own_workshop_record() -> None:
    """Point the workshop checker's default record ($WORKSHOP_RECORD) of this process, and of
    every process it starts, at a scratch folder: the book's blocks and notebooks run the
    checker on its wrong answers and starters, which in .workshop/ of the repository would earn
    a reader's hints."""
    import os

    from snippets.workshop import RECORD_VARIABLE

    os.environ[RECORD_VARIABLE] = str(scratch("book-workshop-"))


def rel(path) -> Path:
    try:
        return Path(path).resolve().relative_to(ROOT)
    except ValueError:
        return Path(path)
