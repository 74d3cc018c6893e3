"""Tests of the workshop's checker (snippets/workshop/).

The checks bite and are fair: every reference passes on fresh seeds, every starter fails
without showing a formula, every wrong solution kept in docs/workshop/wrong/ is rejected by the
check it names, and a table of reader answers (right, wrong, cheating) gets its exit status
and its line. Expected values come from torch (F.cross_entropy, F.layer_norm, ...), never from
the code under test.
"""

import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from snippets.workshop import RECORD_VARIABLE, TASKS
from snippets.workshop.__main__ import main
from snippets.workshop.check import (LEVELS, LoadError, Mismatch, Report, check, compare, draw, failures, get_task,
                                      load, run_checks, starter_path)

ROOT = Path(__file__).resolve().parent.parent
WRONG = ROOT / "docs" / "workshop" / "wrong"

# file -> (the failing check, a piece of its FAIL line)
EXPECTED = {
    "softmax_ce__no_max_shift": ("stability", "grad_logits is wrong on case 1 of 1"),
    "softmax_ce__no_mean": ("backward", "grad_logits is wrong on case 1 of 6"),
    "softmax_ce__no_onehot": ("backward", "grad_logits is wrong on case 1 of 6"),
    "logsumexp__naive": ("stability", "output is wrong"),
    "logsumexp__no_grad_y": ("backward", "grad_x is wrong on case 1 of 6"),
    "logsumexp__grad_y_not_unsqueezed": ("backward", "your backward raised RuntimeError on case"),
    "layernorm__no_mean_term": ("backward", "grad_x is wrong on case 1 of 6"),
    "layernorm__no_variance_term": ("backward", "grad_x is wrong on case 1 of 6"),
    "layernorm__weight_not_summed": ("backward", "grad_weight on case 1 of 6"),
    "batchnorm__constant_stats": ("backward", "grad_x is wrong on case 1 of 6"),
    "batchnorm__unbiased_variance": ("forward", "output is wrong on case 1 of 6"),
    "batchnorm__mean_not_sum": ("backward", "grad_weight is wrong on case 1 of 6"),
    "attention__no_scale_in_backward": ("backward", "grad_q is wrong on case 1 of 6"),
    "attention__no_mask_in_backward": ("backward", "grad_q is wrong on case 1 of 6"),
    "attention__softmax_backward_unweighted": ("backward", "grad_q is wrong on case 1 of 6"),
    "linear__bias_not_summed": ("backward", "grad_b on case 1 of 6"),
    "linear__weight_transposed": ("backward", "grad_W on case 1 of 6"),
    "linear__bias_mean": ("backward", "grad_b is wrong on case 1 of 6"),
    "embedding__assign": ("backward", "grad_weight is wrong on case 2 of 6 (seed 1): repeated indices"),
    "embedding__indexed_add": ("backward", "grad_weight is wrong on case 2 of 6 (seed 1): repeated indices"),
    "embedding__index_not_flat": ("backward", "your backward raised IndexError on case 2 of 6"),
    "maxpool__all_ties": ("backward", "grad_x is wrong on case 3 of 6 (seed 1): ties"),
    "maxpool__last_tie": ("backward", "grad_x is wrong on case 3 of 6 (seed 1): ties"),
    "maxpool__split_tie": ("backward", "grad_x is wrong on case 3 of 6 (seed 1): ties"),
    "softmax_ce__global_max_shift": ("stability", "grad_logits is wrong on case 1 of 1 (seed 1)"),
    "custom_op__sigmoid_only": ("backward", "grad_x is wrong on case 1 of 8"),
    "custom_op__grad_a_not_summed": ("backward", "grad_a on case 1 of 8"),
    "custom_op__numpy": ("opcheck", "torch.library.opcheck failed with your backward registered"),
    # each passed every check before the cases held a 1-D x, a 3-D index, an x of 0, a target far
    # below its row's maximum or rows of size 1000 and spread 1
    "layernorm__one_pass_variance": ("stability", "grad_x is wrong on case 1 of 1 (seed 1): x (5, 8) of size 1e3"),
    "softmax_ce__target_shift": ("stability", "grad_logits is wrong on case 1 of 1"),
    "linear__sum_leading_dims": ("backward", "grad_b on case 2 of 6 (seed 1): x (6,)"),
    "embedding__flatten_2d_only": ("backward", "your backward raised IndexError on case 2 of 6"),
    "custom_op__divide_by_x": ("backward", "grad_x is wrong on case 1 of 8"),
}


@pytest.fixture(autouse=True)
def reader_folder(tmp_path, monkeypatch):
    """Each test runs in a folder of its own, as a reader with no WORKSHOP_RECORD set: the record
    of failed checks (.workshop/) lands there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(RECORD_VARIABLE, raising=False)
    return tmp_path


def run(*args):
    """The command line in a subprocess, from the repository root, with the record in the
    test's folder: (exit status, stdout, stderr)."""
    env = dict(os.environ, **{RECORD_VARIABLE: str(Path.cwd() / ".workshop")})
    done = subprocess.run([sys.executable, "-m", "snippets.workshop", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def formula_lines(task):
    """The code lines of the task's reference backward and its last hints: what a failure must not show."""
    mod = get_task(task)
    body = inspect.getsource(mod.backward).splitlines()[1:]
    code = [line.split("#")[0].strip() for line in body]
    return [c for c in code if len(c) > 12 and not c.startswith("return (")] + [h[-1] for h in mod.HINTS.values()]


def test_every_kept_wrong_solution_is_listed_and_every_task_has_two():
    files = {p.stem for p in WRONG.glob("*.py")}
    assert files == set(EXPECTED)
    for task in TASKS:
        assert sum(f.startswith(task + "__") for f in files) >= 2, task


@pytest.mark.parametrize("task", TASKS)
def test_reference_passes_and_starter_fails_without_the_formula(task, capsys):
    for seed in (0, None):
        assert main(["check", task] + ([] if seed is None else ["--seed", str(seed)])) == 0
        out = capsys.readouterr().out
        assert out.endswith("all checks passed\n") and "FAIL" not in out
    assert main(["check", task, "--starter"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  backward:" in out and "every entry of yours is 0" in out and out.endswith("a check failed\n")
    assert re.search(r"^seed  \d+ \(the same seed replays these cases\)$", out, re.M)
    for line in formula_lines(task):
        assert line not in out, (task, line)
    assert "--hint 1" in out


@pytest.mark.parametrize("task", TASKS)
def test_every_hint_has_four_levels_and_only_the_last_is_the_formula(task):
    mod = get_task(task)
    for key, levels in mod.HINTS.items():
        assert isinstance(levels, list) and len(levels) == len(LEVELS), (task, key, "where to look, the "
                                                                         "structure, a check by hand, the formula")
        assert "=" not in levels[0] and "@" not in levels[0], (task, key, levels[0])
        formula = levels[-1].split("=", 1)[-1].strip().split(",")[0]  # its right-hand side, up to a comma
        for level in levels[:-1]:
            code = formula_lines(task)[:-len(mod.HINTS)]  # the reference's own lines
            assert formula not in level and not any(c in level for c in code), (task, key, level)


def test_hints_are_earned_one_failed_check_at_a_time(tmp_path, capsys):
    # the ladder a reader climbs on layernorm: before any attempt no level shows, not even with
    # --starter --hint 3; then each failed check of the reader's file unlocks the next level
    levels = get_task("layernorm").HINTS["grad_x"]
    assert main(["check", "layernorm", "--starter", "--seed", "0", "--hint", "3"]) == 1
    out = capsys.readouterr().out
    assert "hint  locked: no failed check of your code on grad_x of layernorm is recorded in .workshop/ yet" in out
    assert not any(level in out for level in levels)
    mine = tmp_path / "mine.py"
    mine.write_text(starter_path("layernorm").read_text(encoding="utf-8") + "\n# a copy with a comment\n")
    assert main(["check", "layernorm", str(mine), "--seed", "0"]) == 1  # the starter's code: no hint earned
    assert failures("layernorm") == 0
    mine.write_text((WRONG / "layernorm__no_mean_term.py").read_text(encoding="utf-8"))
    for n in range(1, 6):
        assert main(["check", "layernorm", str(mine), "--seed", "0", "--hint", "4"]) == 1
        out = capsys.readouterr().out
        shown = min(n, 4)
        assert f"hint  {shown} of 4 on grad_x ({LEVELS[shown - 1]}): {levels[shown - 1]}" in out, out
        assert not any(level in out for level in levels[shown:])
        assert ("hint %d unlocks after your next failed check" % (shown + 1) in out) == (shown < 4)
    assert failures("layernorm") == 5 and failures("layernorm", tmp_path / "elsewhere") == 0
    # --hint 2 after five failures shows level 2 and says how to see the next
    main(["check", "layernorm", str(mine), "--seed", "0", "--hint", "2"])
    out = capsys.readouterr().out
    assert f"hint  2 of 4 on grad_x ({LEVELS[1]}): {levels[1]}" in out and "--hint 3" in out
    # the starter and the reference do not unlock anything
    main(["check", "linear", "--starter", "--seed", "0"])
    main(["check", "linear", "--seed", "0"])
    assert failures("linear") == 0


def test_each_gradient_climbs_its_own_hints_and_an_exception_unlocks_none(tmp_path):
    # three failures elsewhere must not hand over grad_x's formula at its first failure
    raises = tmp_path / "raises.py"
    raises.write_text("def backward(grad_y, x, weight, bias):\n    raise ValueError('not yet')\n")
    for _ in range(3):
        assert "raised ValueError" in str(check("layernorm", file=raises, seed=1, record=tmp_path))
    assert failures("layernorm", tmp_path) == 0
    check("layernorm", file=WRONG / "layernorm__weight_not_summed.py", seed=1, record=tmp_path)
    report = str(check("layernorm", file=WRONG / "layernorm__no_mean_term.py", seed=1, hint=4, record=tmp_path))
    assert failures("layernorm", tmp_path, "grad_weight") == 1 and failures("layernorm", tmp_path, "grad_x") == 1
    assert "hint  1 of 4 on grad_x" in report and "hint 2 unlocks after your next failed check" in report


def test_a_notebooks_starter_cell_and_a_file_with_the_starters_backward_earn_nothing(tmp_path):
    namespace = {}
    exec(starter_path("layernorm").read_text(encoding="utf-8"), namespace)  # the notebook's cell
    for _ in range(2):
        check("layernorm", namespace["backward"], seed=1, record=tmp_path)
    text = starter_path("layernorm").read_text(encoding="utf-8")
    bare = tmp_path / "bare.py"
    bare.write_text(text[text.index('"""', 3) + 3:])  # the module docstring deleted
    check("layernorm", file=bare, seed=1, record=tmp_path)
    added = tmp_path / "added.py"  # the starter's backward beside a function it never calls
    added.write_text(text + "\n\ndef unused():\n    return 0\n")
    check("layernorm", file=added, seed=1, record=tmp_path)
    assert failures("layernorm", tmp_path) == 0
    rebound = tmp_path / "rebound.py"  # the starter's def kept, but backward is bound to other code
    rebound.write_text(text + "\n\ndef mine(grad_y, x, weight, bias):\n    return x * 0, weight * 0, bias * 0"
                       "\n\n\nbackward = mine\n")
    check("layernorm", file=rebound, seed=1, record=tmp_path)
    assert failures("layernorm", tmp_path) == 1


def test_a_readers_file_imports_a_module_beside_it(tmp_path):
    (tmp_path / "helpers.py").write_text("import torch\n\n\ndef zeros(t):\n    return torch.zeros_like(t)\n")
    mine = tmp_path / "mine.py"
    mine.write_text("from helpers import zeros\n\n\ndef backward(grad_y, x, W, b):\n"
                    "    return zeros(x), zeros(W), zeros(b)\n")
    report = str(check("linear", file=mine, seed=1, record=None))
    assert "FAIL  backward: grad_x is wrong on case 1 of 6" in report, report


def test_a_relative_file_is_run_from_the_folder_the_check_is_asked_from(tmp_path, monkeypatch):
    # the server started in the first folder; the second check's child must not read that folder
    right = "import torch\n\n\ndef backward(grad_y, x, W, b):\n    return grad_y @ W.T, " \
            "torch.einsum('...i,...k->ik', x, grad_y), grad_y.reshape(-1, W.shape[1]).sum(0)\n"
    for name, text in (("a", "import torch\n\n\ndef backward(grad_y, x, W, b):\n"
                              "    return torch.zeros_like(x), torch.zeros_like(W), torch.zeros_like(b)\n"),
                       ("b", right)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "mine.py").write_text(text)
    monkeypatch.chdir(tmp_path / "a")
    assert not check("linear", file="mine.py", seed=1, record=None).passed
    monkeypatch.chdir(tmp_path / "b")
    assert check("linear", file="mine.py", seed=1, record=None).passed


def test_workshop_record_names_the_folder_of_the_record(tmp_path, monkeypatch, capsys):
    """WORKSHOP_RECORD keeps the record elsewhere (make test's sessions set one of their own, so
    the book's checks never earn a reader's hints); --record and record= still win."""
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv(RECORD_VARIABLE, str(elsewhere))
    assert main(["check", "layernorm", "--starter", "--seed", "0", "--hint", "1"]) == 1
    assert f"is recorded in {elsewhere}/ yet" in capsys.readouterr().out
    wrong = WRONG / "layernorm__no_mean_term.py"
    assert main(["check", "layernorm", str(wrong), "--seed", "0", "--hint", "1"]) == 1
    assert main(["check", "layernorm", str(wrong), "--seed", "0", "--record", str(tmp_path / "named")]) == 1
    check("layernorm", file=wrong, seed=0, record=tmp_path / "named")
    assert failures("layernorm") == 1 and failures("layernorm", elsewhere) == 1
    assert failures("layernorm", tmp_path / "named") == 2 and not (tmp_path / ".workshop").exists()
    monkeypatch.delenv(RECORD_VARIABLE)
    assert failures("layernorm") == 0  # .workshop/ of the current folder again


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wrong_solution_is_rejected_by_its_check(name, capsys):
    task = name.split("__")[0]
    failing, message = EXPECTED[name]
    assert main(["check", task, str(WRONG / f"{name}.py"), "--seed", "1"]) == 1
    lines = capsys.readouterr().out.splitlines()
    fail = [line for line in lines if line.startswith("FAIL")]
    assert len(fail) == 1 and fail[0].startswith(f"FAIL  {failing}: "), lines
    assert message in fail[0], fail[0]
    assert not any(line in "\n".join(lines) for line in formula_lines(task))


def reader_file(tmp_path, source, name="mine.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


SCE = "import torch\nimport torch.nn.functional as F\n\n\ndef backward(grad_loss, logits, target):\n"
LIN = "import torch\n\n\ndef backward(grad_y, x, W, b):\n"
# (name, task, the body of the reader's file, exit status, a line the checker must print)
ANSWERS = [
    ("softmax_ce, in place into its own softmax", "softmax_ce", SCE + """\
    N = logits.shape[0]
    p = torch.softmax(logits, 1)
    p[range(N), target] -= 1
    return (p / N * grad_loss,)
""", 0, "all checks passed"),
    ("softmax_ce, one_hot and log_softmax().exp()", "softmax_ce", SCE + """\
    p = logits.log_softmax(dim=1).exp()
    return ((p - F.one_hot(target, logits.shape[1]).to(p.dtype)) / logits.shape[0] * grad_loss,)
""", 0, "all checks passed"),
    ("softmax_ce, torch.autograd.grad inside", "softmax_ce", SCE + """\
    x = logits.detach().requires_grad_()
    with torch.enable_grad():
        return torch.autograd.grad(F.cross_entropy(x, target), x, grad_loss)
""", 1, "your backward called requires_grad_, which made a tensor that requires grad (an autograd graph"),
    ("softmax_ce, .backward() inside, error swallowed", "softmax_ce", SCE + """\
    x = logits.detach().requires_grad_()
    try:
        with torch.enable_grad():
            F.cross_entropy(x, target).backward(grad_loss)
    except Exception:
        pass
    return (torch.zeros_like(logits),)
""", 1, "your backward called requires_grad_, which made a tensor that requires grad (an autograd graph"),
    ("softmax_ce, torch.func.vjp", "softmax_ce", SCE + """\
    _, vjp = torch.func.vjp(lambda z: F.cross_entropy(z, target), logits)
    return vjp(grad_loss)
""", 1, "your backward called torch.func.vjp (autograd) on case 1"),
    ("softmax_ce, torch.func.jacfwd", "softmax_ce", SCE + """\
    J = torch.func.jacfwd(lambda z: F.cross_entropy(z, target))(logits)
    return (J * grad_loss,)
""", 1, "your backward called torch.func.jacfwd (autograd) on case 1"),
    ("softmax_ce, imports the reference", "softmax_ce",
     "from snippets.workshop.softmax_ce import backward as ref\n\n\ndef backward(grad_loss, logits, target):\n"
     "    return ref(grad_loss, logits, target)\n", 1,
     "your backward called backward of softmax_ce (the book's reference solution) on case 1"),
    # what the file imports is not judged, what the backward calls is: the task's given forward may be
    # imported (a file that re-exports it defines no forward of its own) and called
    ("linear, imports the given forward", "linear", "from snippets.workshop.linear import forward\n" + LIN + """\
    rows = grad_y.reshape(-1, W.shape[1])
    return grad_y @ W.T, x.reshape(-1, W.shape[0]).T @ rows, rows.sum(0)
""", 0, "ok    forward: the task's forward (you defined none): output equals torch's on 6 cases"),
    ("linear, re-exports the reference backward", "linear", "from snippets.workshop.linear import backward, forward\n", 2,
     "its backward is snippets.workshop.linear.backward, the book's reference solution, imported: define your own"),
    ("softmax_ce, calls the given forward", "softmax_ce", "import snippets.workshop.softmax_ce as task\n" + SCE + """\
    assert task.forward(logits, target).shape == ()
    p = torch.softmax(logits, 1)
    p[range(logits.shape[0]), target] -= 1
    return (p / logits.shape[0] * grad_loss,)
""", 0, "all checks passed"),
    ("softmax_ce, forward mode imported by name before the check", "softmax_ce",
     "from torch.autograd.forward_ad import dual_level, make_dual, unpack_dual\n" + SCE + """\
    with dual_level():
        out = F.cross_entropy(make_dual(logits, torch.ones_like(logits)), target)
        return (unpack_dual(out).tangent * 0 + logits * 0,)
""", 1, "your backward called torch.autograd.forward_ad.dual_level.__enter__ (autograd) on case 1"),
    ("softmax_ce, autograd imported by name before the check", "softmax_ce",
     "from torch.autograd import grad\n" + SCE + """\
    x = logits.detach().requires_grad_()
    with torch.enable_grad():
        return grad(F.cross_entropy(x, target), x, grad_loss)
""", 1, "your backward called requires_grad_, which made a tensor that requires grad (an autograd graph"),
    ("softmax_ce, imports the reference at call time", "softmax_ce", SCE + """\
    import importlib
    return importlib.import_module("snippets.workshop.softmax_ce").backward(grad_loss, logits, target)
""", 1, "your backward called backward of softmax_ce (the book's reference solution) on case 1"),
    ("softmax_ce, always float64", "softmax_ce", SCE + """\
    p = torch.softmax(logits.double(), 1)
    p[range(logits.shape[0]), target] -= 1
    return (p / logits.shape[0] * grad_loss.double(),)
""", 1, "float32, non-contiguous inputs: dtype torch.float64, expected torch.float32"),
    ("softmax_ce, in place into grad_loss", "softmax_ce", SCE + """\
    grad_loss /= logits.shape[0]
    p = torch.softmax(logits, 1)
    p[range(logits.shape[0]), target] -= 1
    return (p * grad_loss,)
""", 1, "your backward wrote in place into grad_loss, the upstream gradient, on case 1"),
    ("softmax_ce, in place into logits", "softmax_ce", SCE + """\
    logits.copy_(torch.softmax(logits, 1))
    logits[range(logits.shape[0]), target] -= 1
    return (logits / logits.shape[0] * grad_loss,)
""", 1, "your backward wrote in place into logits, an input"),
    ("softmax_ce, sys.exit at import", "softmax_ce", "import sys\nsys.exit(0)\n\n\ndef backward(g, z, t):\n    return None\n",
     2, "called sys.exit(0) at import, so nothing was checked"),
    ("softmax_ce, raises at import", "softmax_ce", "raise ValueError('not yet')\n", 2,
     "raised ValueError at import, so nothing was checked"),
    ("softmax_ce, sys.exit inside backward", "softmax_ce", SCE + "    import sys\n    sys.exit(0)\n", 1,
     "your backward called sys.exit(0) on case 1"),
    ("softmax_ce, NaN everywhere", "softmax_ce", SCE + "    return (torch.full_like(logits, float('nan')),)\n", 1,
     "entries wrong, "),
    ("softmax_ce, no 1/N", "softmax_ce", SCE + """\
    p = torch.softmax(logits, 1)
    p[range(logits.shape[0]), target] -= 1
    return (p * grad_loss,)
""", 1, "times torch's"),
    ("logsumexp, view of grad_y (contiguous only)", "logsumexp",
     "import torch\n\n\ndef backward(grad_y, x):\n    p = torch.softmax(x, -1).reshape(-1, x.shape[-1])\n"
     "    return ((p * grad_y.view(-1)[:, None]).reshape(x.shape),)\n", 1,
     "non-contiguous inputs and upstream gradient: view size is not compatible"),
    ("logsumexp, softmax times grad_y[..., None]", "logsumexp",
     "import torch\n\n\ndef backward(grad_y, x):\n    return (torch.softmax(x, -1) * grad_y[..., None],)\n", 0,
     "all checks passed"),
    ("logsumexp, right only on small entries", "logsumexp",
     "import torch\n\n\ndef backward(grad_y, x):\n    e = x.exp()\n    return (e / e.sum(-1, keepdim=True) * grad_y[..., None],)\n", 1,
     "FAIL  stability: grad_x is wrong"),
    ("linear, einsum", "linear", LIN + """\
    return grad_y @ W.T, torch.einsum('...i,...o->io', x, grad_y), grad_y.reshape(-1, W.shape[1]).sum(0)
""", 0, "all checks passed"),
    ("linear, bias mean", "linear", LIN + """\
    rows = grad_y.reshape(-1, W.shape[1])
    return grad_y @ W.T, x.reshape(-1, W.shape[0]).T @ rows, rows.mean(0)
""", 1, "grad_b is wrong on case 1"),
    ("linear, one gradient short", "linear", LIN + "    return grad_y @ W.T, x.T @ grad_y\n", 1,
     "backward must return 3 gradient(s) (grad_x, grad_W, grad_b), got tuple of length 2"),
    ("linear, raises inside a helper", "linear", LIN + "    return helper(grad_y)\n\n\ndef helper(g):\n    return g.T @ g @ g\n",
     1, "traceback (most recent call last):"),
    ("layernorm, torch.var(unbiased=False)", "layernorm", """\
import torch


def backward(grad_y, x, weight, bias):
    D = x.shape[-1]
    xhat = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    rstd = torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    g = grad_y * weight
    gx = rstd / D * (D * g - g.sum(-1, keepdim=True) - xhat * (g * xhat).sum(-1, keepdim=True))
    return gx, (grad_y * xhat).reshape(-1, D).sum(0), grad_y.reshape(-1, D).sum(0)
""", 0, "all checks passed"),
    ("embedding, index_put_ with accumulate", "embedding", """\
import torch


def backward(grad_y, indices, weight):
    g = torch.zeros_like(weight)
    g.index_put_((indices.reshape(-1),), grad_y.reshape(-1, weight.shape[1]), accumulate=True)
    return (g,)
""", 0, "all checks passed"),
    ("maxpool, argmax and scatter", "maxpool", """\
import torch


def backward(grad_y, x):
    N, C, L = x.shape
    first = x.reshape(N, C, L // 2, 2).argmax(-1, keepdim=True)
    return (torch.zeros(N, C, L // 2, 2, dtype=x.dtype).scatter(-1, first, grad_y[..., None]).reshape(N, C, L),)
""", 0, "all checks passed"),
    ("batchnorm, statistics as constants", "batchnorm", """\
import torch


def backward(grad_y, x, weight, bias):
    rstd = 1 / (x.var(0, unbiased=False) + 1e-5).sqrt()
    xhat = (x - x.mean(0)) * rstd
    return grad_y * weight * rstd, (grad_y * xhat).sum(0), grad_y.sum(0)
""", 1, "grad_x is wrong on case 1"),
    ("attention, masked with where", "attention", """\
import torch


def backward(grad_out, q, k, v):
    T, d = q.shape[-2:]
    s = q @ k.transpose(-1, -2) / d ** 0.5
    keep = torch.ones(T, T, dtype=torch.bool).tril()
    p = torch.where(keep, s, torch.tensor(float('-inf'), dtype=s.dtype)).softmax(-1)
    gp = grad_out @ v.transpose(-1, -2)
    gs = p * gp
    gs -= p * gs.sum(-1, keepdim=True)
    return gs @ k / d ** 0.5, gs.transpose(-1, -2) @ q / d ** 0.5, p.transpose(-1, -2) @ grad_out
""", 0, "all checks passed"),
]


@pytest.mark.parametrize("name, task, source, status, line", ANSWERS, ids=[a[0] for a in ANSWERS])
def test_reader_answers(name, task, source, status, line, tmp_path, capsys):
    path = reader_file(tmp_path, source)
    if status == 2:
        with pytest.raises(SystemExit) as stop:
            main(["check", task, str(path), "--seed", "2"])
        assert stop.value.code == 2
        assert line in capsys.readouterr().err
        return
    assert main(["check", task, str(path), "--seed", "2"]) == status
    out = capsys.readouterr().out
    assert line in out, out
    if status:
        assert not any(f in out for f in formula_lines(task))


def test_the_table_has_right_wrong_and_cheating_answers():
    assert len(ANSWERS) >= 20
    assert sum(a[3] == 0 for a in ANSWERS) >= 6 and sum(a[3] == 2 for a in ANSWERS) >= 2


def test_a_near_miss_shows_distinct_digits_and_torchs_value(tmp_path, capsys):
    path = reader_file(tmp_path, SCE + """\
    p = torch.softmax(logits, 1)
    p[range(logits.shape[0]), target] -= 1
    return (p / logits.shape[0] * grad_loss * (1 + 3e-6),)
""")
    assert main(["check", "softmax_ce", str(path), "--seed", "4"]) == 1
    out = capsys.readouterr().out
    m = re.search(r"first wrong entry at \((\d+), (\d+)\): expected (\S+), got (\S+)\n", out)
    assert m and m.group(3) != m.group(4), out
    # the expected value is torch's, at the named entry of case 1 (float64)
    (label, (logits, target), grad_loss), *_ = draw(get_task("softmax_ce"), 4)[0]
    z = logits.clone().requires_grad_(True)
    F.cross_entropy(z, target).backward(grad_loss)
    want = z.grad[int(m.group(1)), int(m.group(2))].item()
    assert float(m.group(3)) == pytest.approx(want, rel=1e-6)
    assert float(m.group(4)) == pytest.approx(want * (1 + 3e-6), rel=1e-6)
    assert re.search(r"largest absolute error \S+ at \(\d+, \d+\), largest relative error 3e-06", out)


def test_cases_are_fresh_replayable_and_cover_float32_noncontiguous_and_batch_1():
    task = get_task("linear")
    cases, _ = draw(task, 7)
    again, _ = draw(task, 7)
    other, _ = draw(task, 8)
    assert [c[0] for c in cases] == [c[0] for c in again]
    assert all(torch.equal(a, b) for c, d in zip(cases, again) for a, b in zip(c[1], d[1]))
    assert any(not torch.equal(c[1][0], d[1][0]) if c[1][0].shape == d[1][0].shape else True
               for c, d in zip(cases, other))
    dtypes = {c[1][0].dtype for c in cases}
    assert dtypes == {torch.float32, torch.float64}
    assert any(not c[2].is_contiguous() and not c[1][0].is_contiguous() for c in cases)
    assert any(c[1][0].dim() == 1 for c in cases)  # a batch of one: x (D_in,), no leading dimension
    seeds = {re.search(r"seed  (\d+)", str(check("linear", get_task("linear").backward))).group(1) for _ in range(4)}
    assert len(seeds) > 1


def usage_error(argv, capsys):
    """main(argv) must stop with exit status 2; returns what it wrote to stderr."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


def test_command_line_exit_status_in_a_subprocess(tmp_path):
    status, out, _ = run("check", "maxpool", "--starter")
    assert status == 1 and "FAIL  backward" in out
    status, out, _ = run("check", "maxpool")
    assert status == 0 and out.endswith("all checks passed\n")
    status, _, err = run("check", "maxpool", "nowhere/mine.py")
    assert status == 2 and "error: no such file: nowhere/mine.py" in err
    exits = reader_file(tmp_path, "import sys\nsys.exit(0)\n")
    status, out, err = run("check", "maxpool", exits)
    assert status == 2 and out == "" and "called sys.exit(0) at import" in err


def test_list_and_bad_usage_messages(capsys, tmp_path):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[::2]] == list(TASKS)
    err = usage_error(["check", "softmax"], capsys)
    assert "error: unknown task 'softmax'; the tasks are: softmax_ce, logsumexp" in err
    err = usage_error(["check", "layernorm", "nowhere/mine.py"], capsys)
    assert "error: no such file: nowhere/mine.py" in err
    misnamed = reader_file(tmp_path, "def layernorm_backward(grad_y, x, weight, bias):\n    return grad_y, None, None\n")
    err = usage_error(["check", "layernorm", str(misnamed)], capsys)
    assert "defines no function backward: define backward(grad_y, x, weight, bias)" in err
    err = usage_error(["check", "layernorm", "x.py", "--starter"], capsys)
    assert "pass FILE or --starter, not both" in err
    assert "--seed must be an int >= 0" in usage_error(["check", "linear", "--seed", "-1"], capsys)
    assert ("argument --seed: 18446744073709551616 is outside torch's range of seeds, -2**63 to 2**64 - 1"
            in usage_error(["check", "linear", "--seed", str(2 ** 64)], capsys))
    with pytest.raises(TypeError, match=r"seed must be an int >= 0 and < 2\*\*64"):
        check("linear", get_task("linear").backward, seed=2 ** 64)
    assert check("linear", get_task("linear").backward, seed=2 ** 64 - 1).passed  # torch's largest seed
    assert "--hint must be 0 or more" in usage_error(["check", "linear", "--hint", "-2"], capsys)
    assert "TASK" in usage_error(["check"], capsys)


def test_a_file_that_raises_on_import_is_bad_usage_and_shows_the_traceback(tmp_path, capsys):
    bad = reader_file(tmp_path, "import torch\n\n\ndef backward(grad_y, x:\n    return (grad_y,)\n")
    err = usage_error(["check", "maxpool", str(bad)], capsys)
    assert "raised SyntaxError" in err and f'File "{bad}", line 4\n    def backward(grad_y, x:\n' in err, err
    assert "SyntaxError: '(' was never closed" in err and "<frozen" not in err
    bad = reader_file(tmp_path, "import torch\n\ndef f():\n    return torch.ones(2) @ torch.ones(3)\n\nf()\n", "raises.py")
    err = usage_error(["check", "maxpool", str(bad)], capsys)
    assert "raises.py\", line 4, in f" in err and "RuntimeError:" in err
    with pytest.raises(LoadError, match="at import"):
        load(bad, get_task("maxpool"))
    bad.write_text("backward = 3\n")
    with pytest.raises(AttributeError, match="define backward\\(grad_y, x\\)"):
        load(bad, get_task("maxpool"))


def test_nan_cannot_pass_a_comparison():
    want = torch.tensor([1.0, 2.0], dtype=torch.float64)
    for got in (torch.tensor([1.0, float("nan")], dtype=torch.float64),
                torch.tensor([float("inf"), 2.0], dtype=torch.float64)):
        with pytest.raises(Mismatch, match="first wrong entry"):
            compare("g", got, want, "case", "backward")
    with pytest.raises(Mismatch, match="first wrong entry"):  # nor can a huge slack
        compare("g", torch.tensor([1.0, float("nan")]), want, "case", "g", torch.float32, slack=1e9)
    compare("g", want.clone(), want, "case", "backward")


@pytest.mark.parametrize("task", TASKS)
def test_a_backward_that_returns_nan_everywhere_fails(task):
    diff = get_task(task).DIFF  # the task module itself out of reach: a reader's code may not use it

    def nan_backward(*args):
        return tuple(torch.full_like(args[1 + i], float("nan")) for i in diff)

    report = check(task, nan_backward, seed=0)
    assert not report.passed and "nan or inf" in str(report)


def test_a_detached_right_backward_passes(tmp_path):
    # first order is what the workshop checks: a right backward need not be differentiable again
    path = reader_file(tmp_path, LIN + """\
    rows = grad_y.reshape(-1, W.shape[1])
    grads = grad_y @ W.T, x.reshape(-1, W.shape[0]).T @ rows, rows.sum(0)
    return tuple(g.detach() for g in grads)
""")
    assert check("linear", file=path, seed=3).passed


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


SCALE = {"half": 0.5}  # a dict: the checker does not send it to the process that runs the backward


def _backward_reading_a_dict(grad_y, x, W, b):  # linear's right backward, through a global dict
    g = grad_y.reshape(-1, grad_y.shape[-1])
    return grad_y @ W.T * (2 * SCALE["half"]), x.reshape(-1, x.shape[-1]).T @ g, g.sum(0)


def test_a_global_the_checker_cannot_send_is_named_with_what_to_do():
    report = str(check("linear", _backward_reading_a_dict, seed=1))
    assert "NameError: name 'SCALE' is not defined" in report
    assert "SCALE is a dict defined where your code runs" in report and "define it inside the function" in report


def test_the_largest_error_is_placed_at_the_first_of_its_ties_whatever_the_rounding():
    # Errors equal on paper differ in their last bits between CPU kernels (a wrong layer norm
    # misses a term shared by a whole row): the report names the first of them, in both orders.
    want = torch.zeros(2, 4, dtype=torch.float64)
    for last_bits in (1e-15, -1e-15):
        got = torch.tensor([[0.1, 0.1, 0.1, 0.1], [0.3, 0.3, 0.3, 0.3 + last_bits]], dtype=torch.float64)
        with pytest.raises(Mismatch) as e:
            compare("grad_x", got, want, "case 1", "grad_x")
        assert "largest absolute error 0.3 at (1, 0)," in str(e.value), str(e.value)


SHORTCUTS = ROOT / "tests" / "fixtures" / "workshop_shortcuts"
# shortcut file -> (exit status, a line the checker must print): the ways round a checker that
# trusts the code it checks; each must fail, saying what it did, except a copied answer, a
# numerical gradient, which no checker of values can tell from a derived one, and code run while the
# file loads (docs/workshop/index.md says so)
SHORTCUT_VERDICTS = {
    "linear__imports_the_reference": (2, "its backward is snippets.workshop.linear.backward, the book's reference "
                                         "solution, imported"),
    "linear__pasted_reference": (0, "all checks passed"),
    "logsumexp__central_differences": (0, "all checks passed"),
    "layernorm__answers_at_import": (0, "all checks passed"),
    "custom_op__replaces_opcheck": (1, "FAIL  opcheck: torch.library.opcheck failed with your backward registered"),
    "maxpool__forward_mode_by_hand": (1, "your backward called torch._enter_dual_level (forward-mode autograd)"),
    "custom_op__fills_its_results_later": (1, "FAIL  backward: grad_x is wrong on case 1 of 8"),
    "linear__late_detach": (1, "FAIL  backward: grad_x is wrong on case 1 of 6"),
    "linear__trace_hook": (1, "your backward called sys.settrace, which runs your code after the checker's watch"),
    "custom_op__tuple_subclass": (1, "FAIL  backward: backward must return 2 gradient(s) (grad_x, grad_a), got One"),
    "maxpool__forward_mode_by_aten_op": (1, "your backward called _make_dual.default (forward-mode autograd)"),
    "linear__patches_compare": (1, "FAIL  backward: grad_x is wrong on case 1 of 6"),
    "linear__reads_the_callers_frame": (1, "FAIL  backward: grad_x is wrong on case 1 of 6"),
    "linear__os_exit": (1, "FAIL  run: the process that ran your code ended (exit status 0) before it sent its "
                           "results back: nothing was checked"),
    "layernorm__aten_backward_op": (1, "your backward called native_layer_norm_backward (a backward op of aten)"),
    "layernorm__grad_fn_by_hand": (1, "your backward called requires_grad_, which made a tensor that requires grad"),
    "layernorm__decomposition": (1, "your backward called native_layer_norm_backward of torch._decomp (torch's own "
                                    "backward formula)"),
    "softmax_ce__restores_the_entry_point": (1, "your backward called torch.autograd.forward_ad.dual_level.__enter__ "
                                                "(autograd)"),
}


def test_every_shortcut_file_is_listed():
    assert {p.stem for p in SHORTCUTS.glob("*.py")} == set(SHORTCUT_VERDICTS)


@pytest.mark.parametrize("name", sorted(SHORTCUT_VERDICTS))
def test_a_shortcut_does_not_pass(name, capsys):
    status, line = SHORTCUT_VERDICTS[name]
    argv = ["check", name.split("__")[0], str(SHORTCUTS / f"{name}.py"), "--seed", "1"]
    if status == 2:
        assert line in usage_error(argv, capsys)
        return
    assert main(argv) == status
    out = capsys.readouterr().out
    assert line in out, out
    assert out.endswith("all checks passed\n" if status == 0 else "a check failed\n")


def test_the_checkers_own_functions_are_out_of_the_readers_reach(tmp_path):
    # the comparison, the expected values and the verdict stay in this process: a file that
    # replaces compare() or exits changes nothing here
    import snippets.workshop.check as checker
    before = checker.compare
    report = check("linear", file=SHORTCUTS / "linear__patches_compare.py", seed=1)
    assert checker.compare is before and not report.passed
    # a child that prints gets its lines shown, prefixed, never as the checker's own
    path = reader_file(tmp_path, LIN + "    print('all checks passed')\n    return x, W, b\n")
    report = check("linear", file=path, seed=1)
    assert not report.passed and "print all checks passed" in str(report).splitlines()


# every kept wrong answer fails on every seed of this sample, not on most: the cases always hold
# what each task is about (a row far below the others, a tie, a repeated index, a masked row)
SEEDS = range(int(__import__("os").environ.get("WORKSHOP_SEEDS", 12)))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_wrong_answer_fails_on_every_seed(name):
    task = get_task(name.split("__")[0])
    backward, forward = load(WRONG / f"{name}.py", task)
    passed = [seed for seed in SEEDS
              if run_checks(task, forward or task.forward, backward, Report("sweep"), forward is not None, seed) is None]
    assert not passed, f"{name} passes on seeds {passed}"


def test_every_draw_holds_the_edge_of_its_task():
    for seed in range(20):
        (cases, stable) = draw(get_task("softmax_ce"), seed)
        logits = stable[0][1][0]
        row_max = logits.max(dim=1).values.sort().values
        assert row_max[-1] - row_max[0] > 2999, seed  # a row far below the top one: exp(-104) is 0 in float32
        for task in TASKS:
            cases, _ = draw(get_task(task), seed)
            assert {c[1][get_task(task).DIFF[0]].dtype for c in cases} == {torch.float32, torch.float64}, task
            assert any((c[2].dim() == 0 or not c[2].is_contiguous())  # a loss's upstream gradient is 0-d
                       and not c[1][get_task(task).DIFF[0]].is_contiguous() for c in cases), task
        x = draw(get_task("maxpool"), seed)[0][2][1][0]
        assert bool((x[..., 0::2] == x[..., 1::2]).any(dim=-1).all()), seed  # a tie in every row
        indices = draw(get_task("embedding"), seed)[0][1][1][0]
        assert indices.unique().numel() < indices.numel(), seed


@pytest.mark.parametrize("source, kind, line", [
    ("    rows = grad_y.reshape(-1, W.shape[1])\n"
     "    return grad_y @ W.T * (1 + 1e-4), x.reshape(-1, W.shape[0]).T @ rows, rows.sum(0)\n",
     "precision", "every error is of the size of rounding or of eps"),
    ("    out = torch.empty(x.numel(), dtype=x.dtype)\n"
     "    flat = torch.as_strided(x, (x.numel(),), (1,))  # reads x's buffer as if contiguous\n"
     "    rows = grad_y.reshape(-1, W.shape[1])\n"
     "    return (grad_y @ W.T) + 0 * flat.reshape(x.shape), x.reshape(-1, W.shape[0]).T @ rows, rows.sum(0)\n",
     "strided", "nan only on a non-contiguous case, and finite numbers on the same values stored contiguously"),
    ("    return grad_y @ W.T * float('nan'), W, b\n", "nonfinite", "a nan or inf where torch has a number: look at the entry named"),
], ids=["precision", "strided", "nan"])
def test_the_advice_comes_from_what_failed(source, kind, line, tmp_path):
    report = check("linear", file=reader_file(tmp_path, LIN + source), seed=1)
    assert not report.passed and f"do    {line}" in str(report), str(report)


def test_a_wrong_signature_shows_the_expected_one(tmp_path):
    path = reader_file(tmp_path, "def backward(grad_y, x, W):\n    return grad_y, x, W\n")
    out = str(check("linear", file=path, seed=1))
    assert "your backward takes backward(grad_y, x, W), and the checker calls backward(grad_y, x, W, b)" in out
    assert "the signature to define: backward(grad_y, x, W, b) -> (grad_x, grad_W, grad_b)" in out
    assert "traceback" not in out


def test_wrong_entries_that_should_be_0_get_no_relative_error():
    want = torch.tensor([0.0, 0.0, 2.0], dtype=torch.float64)
    with pytest.raises(Mismatch) as e:
        compare("g", torch.tensor([1.0, -1.0, 2.0], dtype=torch.float64), want, "case", "g")
    assert "every wrong entry should be 0" in e.value.what and "relative error 0" not in e.value.what


def test_code_that_never_returns_fails_and_the_next_check_still_runs(tmp_path, monkeypatch):
    import snippets.workshop.check as checker
    monkeypatch.setattr(checker, "TIMEOUT", 2)
    path = reader_file(tmp_path, LIN + "    import time\n    time.sleep(60)\n")
    report = check("linear", file=path, seed=1)
    assert not report.passed and "FAIL  run: your code did not finish in 2 s: nothing was checked" in str(report)
    assert check("linear", get_task("linear").backward, seed=1).passed

