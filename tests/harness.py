"""The verification harness, as one module for tests of fixture pages (bookcheck/ holds
the code, split by concern; see its __init__).

``check_page(path)`` (bookcheck.check) runs every check of a page and returns the failures'
messages.
"""

from bookcheck import DOCS, ROOT, HarnessError  # noqa: F401
from bookcheck.counts import fence_counts  # noqa: F401
from bookcheck.check import check_page  # noqa: F401
from bookcheck.markers import DIAGRAM_MARKS, DIAGRAM_SYNTAX, KNOWN_MARKS, RUN_SYNTAX  # noqa: F401
from bookcheck.model import Block, expand_snippets, parse_page  # noqa: F401
from bookcheck.run import SEEDS, PageRuns, chain_of, check_block, compare_output, run_block  # noqa: F401
from bookcheck.state import baseline_state, reset_torch_state, state_leaks, torch_state  # noqa: F401
from bookcheck.tables import parse_tables, table_checks  # noqa: F401
