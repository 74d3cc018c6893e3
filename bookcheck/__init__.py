"""The book's page model and checks: one top-level package that the build hooks (overrides/)
and the tests (tests/) both import; it imports nothing from either, nor pytest.

    markers   the one registry of markers (fence markers and table comments)
    page      parsing a page into blocks, each with its kind computed once
    guard     every fence accounted for
    state     torch global state: read, reset, leaks
    run       running blocks and cont chains (once per seed, outputs recorded)
    diagrams  graph_of / diagram_from
    tables    hand-trace tables
    counts    how a page's fences are verified (the stamp and the test summary)
    notebooks executing notebooks once per content key
    update    rewriting expected outputs from what blocks print
    claims    general sentences of the prose, and the block that shows each one
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


class HarnessError(AssertionError):
    """A check of a page failed; the message says where and what to do."""


def rel(path) -> Path:
    try:
        return Path(path).resolve().relative_to(ROOT)
    except ValueError:
        return Path(path)
