"""The verification harness, as one module for tests of fixture pages (bookcheck/ holds
the code, split by concern; see its __init__).

``check_page(path)`` runs every check of a page and returns the failures' messages.
"""

from bookcheck import DOCS, ROOT, HarnessError  # noqa: F401
from bookcheck.counts import fence_counts  # noqa: F401
from bookcheck.diagrams import check_diagram, diagram_probes
from bookcheck.guard import guard
from bookcheck.markers import DIAGRAM_MARKS, DIAGRAM_SYNTAX, KNOWN_MARKS, RUN_SYNTAX  # noqa: F401
from bookcheck.page import Block, expand_snippets, parse_page  # noqa: F401
from bookcheck.run import SEEDS, PageRuns, chain_of, check_block, compare_output, run_block, run_chain  # noqa: F401
from bookcheck.state import baseline_state, reset_torch_state, state_leaks, torch_state  # noqa: F401
from bookcheck.tables import parse_tables, table_checks  # noqa: F401


def check_page(path) -> list[str]:
    """Run every check of a page; return the failures' messages (empty: the page passes)."""
    failures = list(guard(path))
    if failures:
        return failures
    blocks = parse_page(path)
    probes, record = diagram_probes(blocks)
    runs = PageRuns(blocks, probes)
    for b in blocks:
        try:
            if b.kind == "run":
                check_block(blocks, b, runs)
            elif b.kind == "checked diagram":
                check_diagram(blocks, b, runs, record)
        except HarnessError as exc:
            failures.append(str(exc))
    try:
        for _, check in table_checks(path):
            try:
                check()
            except HarnessError as exc:
                failures.append(str(exc))
    except HarnessError as exc:
        failures.append(str(exc))
    return failures
