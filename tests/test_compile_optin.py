"""Opt-in test of snippets/compile_check.py: torch.compile takes seconds on CPU, so it runs only
when BOOK_SLOW=1 is set (``BOOK_SLOW=1 .venv/bin/python -m pytest tests/test_compile_optin.py``)."""

import os
import time

import pytest

SLOW = os.environ.get("BOOK_SLOW") == "1"
slow = pytest.mark.skipif(
    not SLOW,
    reason="torch.compile needs seconds to compile; run with BOOK_SLOW=1 "
    ".venv/bin/python -m pytest tests/test_compile_optin.py",
)


@slow
def test_compiled_backward_is_one_node_with_eager_gradients_and_recompiles_once():
    from snippets.compile_check import eager_vs_compiled

    start = time.perf_counter()
    result = eager_vs_compiled(batch_sizes=(8, 5, 7))
    elapsed = time.perf_counter() - start
    print(f"eager_vs_compiled took {elapsed:.1f} s")
    assert result["node"] == "CompiledFunctionBackward"
    assert result["max_abs_diff"] <= 1e-5
    # batch 8: one graph; batch 5: a recompilation, now with a dynamic batch size;
    # batch 7: served by the dynamic graph, no new compilation
    assert result["graphs"] == [1, 2, 2]


def test_bad_batch_sizes_say_what_to_do():
    from snippets.compile_check import eager_vs_compiled

    with pytest.raises(ValueError, match="positive integers"):
        eager_vs_compiled(batch_sizes=(8, 0))
