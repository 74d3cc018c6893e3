"""Each check of the harness bites: a deliberately broken page is rejected, with a message
that names the place and the fault. A good page passes, so the checks do not reject all."""

from pathlib import Path

import pytest

import harness

PAGES = Path(__file__).parent / "fixtures" / "pages"


def failures(name):
    return harness.check_page(PAGES / name)


@pytest.mark.parametrize("page", ["good.md", "fork_hand_trace.md"])
def test_good_page_passes(page):
    assert failures(page) == []


@pytest.mark.parametrize(
    "page, expected",
    [
        ("wrong_output.md", ["wrong_output.md:3: the output shown on the page differs", "-28.0", "+tensor(28.)"]),
        ("wrong_exception_type.md", ["wrong_exception_type.md:4: expected RuntimeError, got builtins.TypeError"]),
        ("wrong_exception_message.md", ["TypeError raised, but its message does not match 'unsupported operand'"]),
        ("does_not_raise.md", ["does_not_raise.md:4: expected RuntimeError matching 'second time', but the block did not raise"]),
        ("titled_fence.md", ["titled_fence.md:3: its info string is 'python title=\"example.py\"', which pytest-codeblocks never runs"]),
        ("prints_without_output.md", ["prints_without_output.md:3: the block prints, but the page shows no output block"]),
        ("unseeded_random.md", ["printed something else on a second run with another RNG seed"]),
        ("undeclared_warning.md", ["undeclared_warning.md:3: the block warned, and the page does not say so", "not a leaf Tensor"]),
        ("wrong_hand_trace.md", ["wrong_hand_trace.md:12: ∂z/∂w (local): the table says 3, but it is 2"]),
        ("fork_missing_path.md", ["fork_missing_path.md:12: ∂L/∂a: the table says 5, torch computes 6"]),
        ("wrong_chart.md", ["wrong_chart.md:9: the diagram is not what chart generates", "line [1, 0.1, 0.01]"]),
        ("wrong_graph.md", ["wrong_graph.md:11: the diagram is not the graph autograd recorded for 'L'", 'n1["MulBackward0"]']),
    ],
)
def test_broken_page_is_rejected(page, expected):
    found = failures(page)
    assert len(found) == 1, found
    for part in expected:
        assert part in found[0], found[0]


def test_every_unaccounted_fence_is_named_with_its_line():
    found = "\n".join(failures("unaccounted_fences.md"))
    for line, why in [
        (3, "a 'text' fence is neither run, nor an output, nor a diagram"),
        (7, "a ~~~ fence is never run or checked"),
        (12, "a skipped block needs a reason a reader would accept"),
        (17, "pytest.mark.xfail accepts any exception"),
        (21, "its info string is 'py', which pytest-codeblocks never runs"),
    ]:
        assert f"unaccounted_fences.md:{line}: {why}" in found, found


def test_a_block_that_leaks_grad_mode_fails_and_later_blocks_are_unaffected():
    found = failures("leaks_grad_mode.md")
    assert len(found) == 1, found  # the second block passes: state was reset before it
    assert "leaks_grad_mode.md:3: the block left torch global state changed" in found[0]
    assert "grad mode (torch.is_grad_enabled()): True -> False" in found[0]


def test_state_is_reset_before_each_block_in_any_order():
    blocks = harness.parse_page(PAGES / "leaks_grad_mode.md")
    leaky, needs_grad = [b for b in blocks if b.syntax == "python"]
    for order in ([leaky, needs_grad], [needs_grad, leaky], [needs_grad, needs_grad]):
        results = []
        for b in order:
            try:
                harness.check_block(blocks, b)
                results.append("ok")
            except harness.HarnessError:
                results.append("fail")
        assert [r for b, r in zip(order, results) if b is needs_grad] == ["ok"] * order.count(needs_grad)
    import torch

    assert torch.is_grad_enabled()


def test_snippet_includes_are_expanded_as_pymdownx_does():
    code = harness.expand_snippets('--8<-- "snippets/hand_trace.py"\n')
    assert code.startswith('"""Compare a hand trace with torch')
    assert "def gradients(loss, **tensors):" in code
    with pytest.raises(Exception, match="no_such_file"):
        harness.expand_snippets('--8<-- "snippets/no_such_file.py"\n')
