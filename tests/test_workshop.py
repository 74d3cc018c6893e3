"""Tests of the workshop's checker (snippets/workshop/).

The checks bite: every reference passes, every starter fails, and every plausible wrong
solution kept in docs/workshop/wrong/ is rejected with the check and the hint a reader sees
(asserted below, one expected message per file). The command line's exit status is 0, 1 or
2 as documented. Expected values come from torch (F.cross_entropy, F.layer_norm, ...), never
from the code under test.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from snippets.workshop import TASKS
from snippets.workshop.__main__ import main
from snippets.workshop.check import check, compare, get_task, load, Mismatch, starter_path

ROOT = Path(__file__).resolve().parent.parent
WRONG = ROOT / "docs" / "workshop" / "wrong"

# file -> (the failing check, a piece of the message, a piece of the hint)
EXPECTED = {
    "softmax_ce__no_max_shift": ("stability", "got nan", "subtract each row's maximum"),
    "softmax_ce__no_mean": ("backward", "every entry is 4 times torch's", "a mean over the N rows"),
    "softmax_ce__no_onehot": ("backward", "grad_logits on logits (4, 5)", "the target's column gets the -1"),
    "logsumexp__naive": ("stability", "got inf", "subtract the row maximum"),
    "logsumexp__no_grad_y": ("backward", "grad_x on x (4, 5)", "multiply it by grad_y[..., None]"),
    "logsumexp__grad_y_not_unsqueezed": ("backward", "your code raised RuntimeError", "grad_y[..., None]"),
    "layernorm__no_mean_term": ("backward", "grad_x on x (4, 5)", "dropping a term"),
    "layernorm__no_variance_term": ("backward", "grad_x on x (4, 5)", "dropping a term"),
    "layernorm__weight_not_summed": ("backward", "grad_weight on x (4, 5): shape (4, 5), expected (5,)",
                                     "weight (D,) was broadcast"),
    "batchnorm__constant_stats": ("backward", "grad_x on x (8, 3)", "not constants"),
    "batchnorm__unbiased_variance": ("forward", "output on x (8, 3)", "divide by N, not N - 1"),
    "batchnorm__mean_not_sum": ("backward", "every entry is 0.125 times torch's", "a sum, not a mean"),
    "attention__no_scale_in_backward": ("backward", "every entry is 1.73205 times torch's", "1/sqrt(d) comes back"),
    "attention__no_mask_in_backward": ("backward", "grad_q on q, k, v (2, 4, 3)", "with the mask"),
    "attention__softmax_backward_unweighted": ("backward", "grad_q on q, k, v (2, 4, 3)", "rowsum(grad_P * P)"),
    "linear__bias_not_summed": ("backward", "grad_b on x (4, 3), W (3, 2): shape (4, 2), expected (2,)",
                                "was broadcast over every row"),
    "linear__weight_transposed": ("backward", "grad_W on x (4, 3), W (3, 2): shape (2, 3), expected (3, 2)",
                                  "not grad_y^T @ x"),
    "linear__bias_mean": ("backward", "every entry is 0.25 times torch's", "a sum, not a mean"),
    "embedding__assign": ("backward", "grad_weight on repeated indices", "does not accumulate"),
    "embedding__indexed_add": ("backward", "grad_weight on repeated indices", "does not accumulate"),
    "embedding__index_not_flat": ("backward", "your code raised IndexError", "flatten indices"),
    "maxpool__all_ties": ("backward", "on x (2, 2, 8) with ties", "not every tied entry"),
    "maxpool__last_tie": ("backward", "on x (2, 2, 8) with ties", "not the last"),
}


def run(*args):
    """The command line in a subprocess, from the repository root: (exit status, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-m", "snippets.workshop", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def test_every_kept_wrong_solution_is_listed_and_every_task_has_two():
    files = {p.stem for p in WRONG.glob("*.py")}
    assert files == set(EXPECTED)
    for task in TASKS:
        assert sum(f.startswith(task + "__") for f in files) >= 2, task


@pytest.mark.parametrize("task", TASKS)
def test_reference_passes_and_starter_fails(task, capsys):
    assert main(["check", task]) == 0
    out = capsys.readouterr().out
    assert out.endswith("all checks passed\n") and "FAIL" not in out
    assert main(["check", task, "--starter"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  backward:" in out and "every entry of yours is 0" in out and out.endswith("a check failed\n")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wrong_solution_is_rejected_with_its_message(name, capsys):
    task = name.split("__")[0]
    failing, message, hint = EXPECTED[name]
    assert main(["check", task, str(WRONG / f"{name}.py")]) == 1
    lines = capsys.readouterr().out.splitlines()
    fail = [line for line in lines if line.startswith("FAIL")]
    assert len(fail) == 1 and fail[0].startswith(f"FAIL  {failing}: "), lines
    assert message in fail[0], fail[0]
    assert lines[lines.index(fail[0]) + 1].startswith("hint: ") and hint in lines[lines.index(fail[0]) + 1]


def usage_error(argv, capsys):
    """main(argv) must stop with exit status 2; returns what it wrote to stderr."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


def test_command_line_exit_status_in_a_subprocess():
    status, out, _ = run("check", "maxpool", "--starter")
    assert status == 1 and "FAIL  backward" in out
    status, out, _ = run("check", "maxpool")
    assert status == 0 and out.endswith("all checks passed\n")
    status, _, err = run("check", "maxpool", "nowhere/mine.py")
    assert status == 2 and "error: no such file: nowhere/mine.py" in err


def test_list_and_bad_usage_messages(capsys, tmp_path):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[::2]] == list(TASKS)
    err = usage_error(["check", "softmax"], capsys)
    assert "error: unknown task 'softmax'; the tasks are: softmax_ce, logsumexp" in err
    err = usage_error(["check", "layernorm", "nowhere/mine.py"], capsys)
    assert "error: no such file: nowhere/mine.py" in err
    misnamed = tmp_path / "mine.py"
    misnamed.write_text("def layernorm_backward(grad_y, x, weight, bias):\n    return grad_y, None, None\n")
    err = usage_error(["check", "layernorm", str(misnamed)], capsys)
    assert "defines no function backward: define backward(grad_y, x, weight, bias)" in err
    err = usage_error(["check", "layernorm", "x.py", "--starter"], capsys)
    assert "pass FILE or --starter, not both" in err
    assert "TASK" in usage_error(["check"], capsys)


def test_a_file_that_raises_on_import_is_bad_usage(tmp_path, capsys):
    bad = tmp_path / "mine.py"
    bad.write_text("def backward(grad_y, x:\n")
    assert "raised SyntaxError" in usage_error(["check", "maxpool", str(bad)], capsys)
    bad.write_text("backward = 3\n")
    with pytest.raises(AttributeError, match="define backward\\(grad_y, x\\)"):
        load(bad, get_task("maxpool"))


def test_nan_cannot_pass_a_comparison():
    want = torch.tensor([1.0, 2.0], dtype=torch.float64)
    for got in (torch.tensor([1.0, float("nan")], dtype=torch.float64),
                torch.tensor([float("inf"), 2.0], dtype=torch.float64)):
        with pytest.raises(Mismatch, match="first wrong entry"):
            compare("g", got, want, "case", "backward")
    compare("g", want.clone(), want, "case", "backward")


def test_a_backward_that_returns_nan_everywhere_fails(capsys):
    def nan_backward(grad_y, x):
        return (torch.full_like(x, float("nan")),)

    report = check("maxpool", nan_backward)
    assert not report.passed and "got nan" in str(report)


def test_gradcheck_catches_a_backward_that_disagrees_with_the_readers_forward():
    # forward doubled and backward doubled: torch's output differs, so forward fails first;
    # here the reader's forward is right and backward is right only where torch compares it,
    # which gradgradcheck must still catch: a backward not built from differentiable ops
    layer = get_task("linear")

    def detached(grad_y, x, W, b):
        return tuple(g.detach() for g in layer.backward(grad_y, x, W, b))

    report = check("linear", detached)
    assert not report.passed and "FAIL  gradgradcheck" in str(report)


def test_tasks_state_shapes_and_torch_reference_is_independent():
    for task in TASKS:
        mod = get_task(task)
        assert "(" in mod.__doc__ and "float" in mod.__doc__, task
        assert mod.torch_forward is not mod.forward
        assert starter_path(task).is_file()


def test_check_refuses_a_non_function():
    with pytest.raises(TypeError, match="pass your function backward\\(grad_y, x\\)"):
        check("maxpool", 3)
    with pytest.raises(KeyError, match="unknown task"):
        check("nope", lambda g, x: (g,))
