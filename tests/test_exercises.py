"""Tests of the Part IV exercises (snippets/exercises/) and of their notebooks.

Each exercise's acceptance check passes on the reference solution and fails on the starter
(the checks bite); expected numbers come from torch or from the math, not from the code
under test. The committed notebooks are what bookbuild/notebook_gen.py builds, carry
their stored outputs (what a reader's run prints, top to bottom in a fresh kernel:
test_notebooks_anywhere.py).
"""

import json
import sys

import nbformat
import pytest
import torch
import torch.nn.functional as F

from bookbuild import notebook_gen as notebooks
from snippets.exercises import accumulation, attempt, broken_graph, gradient_check, hand_trace
from snippets.two_layer import forward, make_tensors

# ------------------------------------------------------------------ the checks bite

CASES = [
    (hand_trace.check, hand_trace.solution, hand_trace.starter),
    (gradient_check.check, gradient_check.solution, gradient_check.starter),
    (broken_graph.check, broken_graph.solution, broken_graph.starter),
    (broken_graph.check, broken_graph.solution, broken_graph.starter_frozen),
    (broken_graph.check, broken_graph.solution, broken_graph.starter_optimizer),
    (broken_graph.check, broken_graph.solution, broken_graph.starter_item),
    (accumulation.check, accumulation.solution, accumulation.starter),
    (accumulation.check_two_passes, accumulation.solution_two_passes, accumulation.starter_two_passes),
    (accumulation.check_two_passes, accumulation.solution_two_passes_retained, accumulation.starter_two_passes),
    (accumulation.check_micro_batches, accumulation.solution_micro_batches, accumulation.starter_micro_batches),
]


@pytest.mark.parametrize("check, solution, starter", CASES, ids=lambda f: f.__module__.split(".")[-1] + "." + f.__name__)
def test_check_passes_on_the_solution_and_fails_on_the_starter(check, solution, starter):
    check(solution)
    with pytest.raises(AssertionError):
        check(starter)
    assert attempt(check, solution) == "PASS"
    assert attempt(check, starter).startswith("FAIL: ")


def test_every_starter_of_exercise_3_is_checked():
    assert set(broken_graph.STARTERS) == {"detach", "frozen", "optimizer", "item"}
    assert {f for _, _, f in CASES} >= set(broken_graph.STARTERS.values())


def test_attempt_lets_other_errors_through():
    def broken(x, w1, w2):
        raise ZeroDivisionError("a bug in the code under check")

    with pytest.raises(ZeroDivisionError):
        attempt(hand_trace.check, broken)
    with pytest.raises(TypeError, match="pass the module's check"):
        attempt(hand_trace.check, None)


@pytest.mark.parametrize("check", [hand_trace.check, gradient_check.check, broken_graph.check, accumulation.check])
def test_checks_refuse_a_non_function(check):
    with pytest.raises(TypeError, match="check"):
        check(42)


# ------------------------------------------------------------------ exercise 1


def test_hand_trace_numbers_of_the_source_and_of_the_second_point():
    # the source's answers at x = 1, and the errata's at x = 2 (SEED_ERRATA B10)
    assert hand_trace.with_torch(1.0, 2.0, 3.0) == {"L": 25.0, "dL/dw1": 10.0, "dL/dw2": 10.0, "dL/dx": 80.0}
    assert hand_trace.with_torch(2.0, 2.0, 3.0) == {"L": 256.0, "dL/dw1": 64.0, "dL/dw2": 128.0, "dL/dx": 448.0}


def test_the_swapped_starter_passes_at_x_1_alone():
    # B10: one test point where x == x**2 cannot catch the swap; the second point does
    hand_trace.check(hand_trace.starter, points=[(1.0, 2.0, 3.0)])
    with pytest.raises(AssertionError, match="at x=2"):
        hand_trace.check(hand_trace.starter)


@pytest.mark.parametrize("x, w1, w2", [(-1.5, 0.5, 2.0), (0.3, -2.0, 1.0), (3.0, 1.0, -0.25)])
def test_hand_trace_solution_matches_autograd_at_other_points(x, w1, w2):
    hand_trace.check(hand_trace.solution, points=[(x, w1, w2)])


def test_hand_trace_check_rejects_tensors_and_missing_keys():
    with pytest.raises(AssertionError, match="must be a number"):
        hand_trace.check(lambda x, w1, w2: {k: torch.tensor(1.0) for k in hand_trace.KEYS})
    with pytest.raises(AssertionError, match="keys"):
        hand_trace.check(lambda x, w1, w2: {"L": 25.0})


# ------------------------------------------------------------------ exercise 2


def test_gradient_check_autograd_value_is_torchs():
    r = gradient_check.solution(seed=0)
    t = make_tensors(seed=0)
    (g,) = torch.autograd.grad(forward(t)["L"], t["W1"])
    i, j = r["index"]
    assert r["autograd"] == g[i, j].item()
    assert r["dtype"] == torch.float64
    assert abs(r["numeric"] - r["autograd"]) < 1e-8


def test_starter_float32_error_is_far_above_float64s():
    s, r = gradient_check.starter(seed=0), gradient_check.solution(seed=0)
    assert s["dtype"] == torch.float32
    assert s["layer_rel_error"] > 1e4 * r["layer_rel_error"]


def test_relative_error_definition():
    a = torch.tensor([1.0, -2.0, 0.0], dtype=torch.float64)
    n = torch.tensor([1.1, -2.0, 0.0], dtype=torch.float64)
    err = gradient_check.relative_error(a, n)
    assert torch.allclose(err, torch.tensor([0.1 / 1.1, 0.0, 0.0], dtype=torch.float64))
    with pytest.raises(ValueError, match="shapes differ"):
        gradient_check.relative_error(a, n[:2])


def test_gradient_check_rejects_a_wrong_backward():
    # a result whose autograd value is 1 % off must fail, even in float64
    def one_percent_off(seed=0):
        r = gradient_check.solution(seed)
        return {**r, "autograd": r["autograd"] * 1.01, "rel_error": 0.01 / 1.01}

    with pytest.raises(AssertionError, match="rel_error"):
        gradient_check.check(one_percent_off)


# ------------------------------------------------------------------ exercise 3


def test_solution_loss_decreases_every_step_and_starters_are_flat():
    losses = broken_graph.solution()
    assert len(losses) == 11
    assert all(b < a for a, b in zip(losses, losses[1:]))
    X, y = broken_graph.make_data(0)
    assert losses[0] == pytest.approx(F.mse_loss(broken_graph.make_model(0)(X), y).item())
    for fn in broken_graph.STARTERS.values():
        start = fn()
        assert len(start) == 11 and max(start) == min(start) == pytest.approx(losses[0])


def test_make_model_leaves_the_global_rng_alone():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    broken_graph.make_model(0)
    broken_graph.make_data(0)
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("variant, first_problem", [
    ("detach", "1. loss.grad_fn: None"), ("item", "1. loss.grad_fn: None"),
    ("frozen", "2. frozen: ['head.weight', 'head.bias']"),
    ("optimizer", "4. trainable but not in the optimizer: ['backbone.weight'"),
])
def test_diagnose_names_each_bug(variant, first_problem):
    lines = broken_graph.diagnose(*broken_graph.first_step(variant))
    assert any(line.startswith(first_problem) for line in lines), lines


def test_diagnose_reports_nothing_on_the_fixed_loop():
    lines = broken_graph.diagnose(*broken_graph.first_step("fixed"))
    assert lines == ["1. loss.grad_fn: MseLossBackward0", "2. frozen: none",
                     "3. no usable gradient: none", "4. trainable but not in the optimizer: none"]


def test_diagnose_and_first_step_check_their_inputs():
    with pytest.raises(TypeError, match="nn.Module"):
        broken_graph.diagnose("model", None, None)
    model, opt, _ = broken_graph.first_step("fixed")
    with pytest.raises(TypeError, match="scalar loss"):
        broken_graph.diagnose(model, opt, torch.ones(2))
    with pytest.raises(ValueError, match="variant must be one of"):
        broken_graph.first_step("typo")


def test_loss_table_bars_scale_with_the_last_column():
    text = broken_graph.loss_table({"a": [1.0, 1.0, 1.0], "b": [2.0, 1.0, 0.5]}, width=8)
    rows = text.splitlines()
    assert rows[0].split() == ["step", "a", "b"]
    assert [r.count("#") for r in rows[1:]] == [8, 4, 2]
    assert rows[-1].startswith(" end")
    with pytest.raises(ValueError, match="one length"):
        broken_graph.loss_table({"a": [1.0], "b": [1.0, 2.0]})


def test_check_needs_one_loss_per_step_plus_the_final_one():
    with pytest.raises(AssertionError, match="11 losses"):
        broken_graph.check(lambda steps, seed: [1.0] * steps)


# ------------------------------------------------------------------ exercise 4


def test_two_passes_sum_the_hand_trace_gradient():
    x, w, b = accumulation.hand_trace_leaves()
    (g,) = torch.autograd.grad((w * x + b) ** 2, w)
    assert g.item() == 28.0
    assert accumulation.solution_two_passes() == [g.item(), 2 * g.item()]
    assert accumulation.solution_two_passes_retained() == [g.item(), 2 * g.item()]


@pytest.mark.parametrize("k", [2, 4, 8])
def test_micro_batches_match_a_full_batch_computed_independently(k):
    accumulated, full = accumulation.solution_micro_batches(k=k)
    model, X, y = accumulation.make_batch()
    grads = torch.autograd.grad(((model(X) - y) ** 2).mean(), list(model.parameters()))
    for (name, _), g in zip(model.named_parameters(), grads):
        torch.testing.assert_close(full[name], g)
        torch.testing.assert_close(accumulated[name], g, rtol=1e-5, atol=1e-6)
    unscaled, _ = accumulation.starter_micro_batches(k=k)
    torch.testing.assert_close(unscaled["weight"], k * full["weight"], rtol=1e-5, atol=1e-6)


def test_micro_batches_refuse_unequal_pieces():
    with pytest.raises(ValueError, match="not divisible"):
        accumulation.solution_micro_batches(k=3)


# ------------------------------------------------------------------ notebooks


# Part IV's four notebooks; the workshop's (w-*) are tested in test_workshop_notebooks.py
PART_IV = sorted(name for name in notebooks.BUILDERS if not name.startswith("w-"))


@pytest.mark.parametrize("name", PART_IV)
def test_committed_notebook_is_the_generated_one_with_its_outputs(name):
    path = notebooks.NOTEBOOKS / f"{name}.ipynb"
    assert notebooks.committed_cells(path) == notebooks.text(name), (
        f"{path} is not what bookbuild/notebook_gen.py builds: run make notebooks"
    )
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["execution_count"] for c in code)  # stored executed (test_notebooks_anywhere.py)
    markdown = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "<details><summary>Reference solution" in markdown


def test_section_names_a_missing_section():
    with pytest.raises(ValueError, match="no section 'nope'"):
        notebooks.section("hand_trace", "nope")


def test_the_stored_runs_show_each_starter_failing_its_check():
    # the stored outputs are what a reader's run prints (test_notebooks_anywhere.py), and it
    # runs every cell top to bottom
    for name in PART_IV:
        nb = nbformat.read(notebooks.NOTEBOOKS / f"{name}.ipynb", as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
        text = "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")
        assert not [o for o in outputs if o["output_type"] == "error"], name
        assert "FAIL: " in text, f"{name}: the starter should visibly fail its check"
        assert "torch 2.13.0" in text, name


def test_checked_points_keep_every_hidden_unit_away_from_relus_kink():
    # the report says no hidden unit sits within h of relu's kink at the checked points
    for seed in (0, 1, 2):
        z1 = forward(make_tensors(seed=seed))["Z1"]  # (N, H)
        assert z1.abs().min().item() > 1e-3


WITHOUT_INSTALLED_PACKAGE = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in str(getattr(f, "__module__", ""))]
sys.path[:] = [p for p in sys.path if p not in ("", ".", {root!r})]
"""


def _run_setup(code, cwd, hide_package):
    import subprocess
    import sys

    prefix = WITHOUT_INSTALLED_PACKAGE.format(root=str(notebooks.ROOT)) if hide_package else ""
    return subprocess.run([sys.executable, "-c", prefix + code], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_setup_cell_with_the_package_installed_prints_torch_and_warns_nothing(tmp_path):
    proc = _run_setup(notebooks.SETUP, tmp_path, hide_package=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("torch 2.13.0") and "verified on" not in proc.stderr


def test_setup_cell_warns_when_torch_is_not_the_books_version(tmp_path):
    assert 'TORCH = "2.13.0"' in notebooks.SETUP  # mkdocs.yml's extra.torch_version
    proc = _run_setup(notebooks.SETUP.replace('TORCH = "2.13.0"', 'TORCH = "2.12.0"'), tmp_path, hide_package=False)
    assert proc.returncode == 0, proc.stderr
    assert "UserWarning: the book is verified on torch 2.12.0; this is torch 2.13.0" in proc.stderr


def test_setup_cell_without_the_package_or_an_address_says_what_to_run(tmp_path):
    # the committed notebook (no address: the site's build writes it into the downloadable copy)
    proc = _run_setup(notebooks.SETUP, tmp_path, hide_package=True)
    assert proc.returncode != 0
    assert ("ImportError: the book's `snippets` package is not installed and could not be installed "
            "(this copy has no address of the book's site). Run this, then restart the kernel:\n"
            "    ") in proc.stderr
    assert "-m pip install <the book's site>/downloads/<the wheel>" in proc.stderr


def test_setup_cell_installs_from_the_address_it_is_given(tmp_path):
    # pip is given the address; an address that does not exist fails with pip's reason
    missing = tmp_path / "autograd_book_snippets-0.1.0-py3-none-any.whl"
    code = notebooks.SETUP.replace(notebooks.WHEEL_LINE, f"WHEEL = {str(missing)!r}")
    proc = _run_setup(code, tmp_path, hide_package=True)
    assert proc.returncode != 0
    assert f"Run this, then restart the kernel:\n    {sys.executable} -m pip install {missing}" in proc.stderr
    assert "No such file or directory" in proc.stderr  # pip's error line, carried into the message


@pytest.mark.parametrize("shadow", ["snippets.py", "snippets/__init__.py", "raises"])
def test_setup_cell_names_a_module_of_that_name_that_is_not_the_books(tmp_path, shadow):
    """A reader's snippets.py or snippets package beside the notebook, one that raises
    ImportError itself too: the cell names it (before, `import snippets` took it, and the next
    cell failed to import snippets.exercises)."""
    path = tmp_path / ("snippets.py" if shadow == "raises" else shadow)
    path.parent.mkdir(exist_ok=True)
    path.write_text("import not_a_module_anywhere\n" if shadow == "raises" else "")
    proc = _run_setup("import sys; sys.path.insert(0, '')\n" + notebooks.SETUP, tmp_path, hide_package=True)
    assert proc.returncode != 0
    assert (f"ImportError: `snippets` here is {path}, not the book's package: rename it, restart "
            "the kernel") in proc.stderr, proc.stderr


def test_setup_cell_takes_a_folder_without_init_for_no_package(tmp_path):
    """A folder named snippets without __init__.py hides nothing: with the package installed the
    cell passes; without it, the cell installs (here: says what to run, the copy has no address)."""
    (tmp_path / "snippets").mkdir()
    beside = "import sys; sys.path.insert(0, '')\n"
    installed = _run_setup(beside + notebooks.SETUP + "\nprint(snippets.exercises.__file__)", tmp_path,
                           hide_package=False)
    assert installed.returncode == 0 and str(notebooks.ROOT / "snippets" / "exercises") in installed.stdout, \
        installed.stderr
    missing = _run_setup(beside + notebooks.SETUP, tmp_path, hide_package=True)
    assert "is not installed and could not be installed (this copy has no address" in missing.stderr


def _installed_copy(tmp_path, broken=False):
    """A copy of the package in site/, as an install puts it (broken: its own import fails)."""
    import shutil

    site = tmp_path / "site"
    shutil.copytree(notebooks.ROOT / "snippets", site / "snippets",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if broken:
        init = site / "snippets" / "__init__.py"
        init.write_text("import a_dependency_that_is_missing\n" + init.read_text())
    return site


def test_setup_cell_lets_the_installed_packages_own_import_error_through(tmp_path):
    site = _installed_copy(tmp_path, broken=True)
    proc = _run_setup(f"import sys; sys.path.append({str(site)!r})\n" + notebooks.SETUP, tmp_path,
                      hide_package=True)
    assert "No module named 'a_dependency_that_is_missing'" in proc.stderr, proc.stderr
    assert "not the book's package" not in proc.stderr


def test_setup_cell_installs_past_a_folder_without_init_and_the_next_cell_imports(tmp_path):
    """The install succeeds (pip replaced by a copy into site/): the folder named snippets
    beside the notebook, taken for a package by the failed import, must not stay in its way."""
    (tmp_path / "snippets").mkdir()
    site = _installed_copy(tmp_path)  # on the path once "pip" has run
    fake_pip = (f"import subprocess, sys; sys.path.insert(0, '')\n"
                f"def run(cmd, **kw):\n"
                f"    sys.path.append({str(site)!r})\n"
                f"    return subprocess.CompletedProcess(cmd, 0, '', '')\n"
                f"subprocess.run = run\n")
    code = notebooks.SETUP.replace(notebooks.WHEEL_LINE, "WHEEL = 'the-wheel.whl'")
    proc = _run_setup(fake_pip + code + "\nimport snippets.exercises\nprint(snippets.exercises.__file__)",
                      tmp_path, hide_package=True)
    assert proc.returncode == 0, proc.stderr
    assert str(site / "snippets" / "exercises" / "__init__.py") in proc.stdout


def test_build_adds_the_setup_cell_after_the_title(monkeypatch):
    nb = notebooks.build("01-hand-trace")
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    assert [c.source for c in nb.cells].count(notebooks.SETUP) == 1 and nb.cells[1].source == notebooks.SETUP
    monkeypatch.setitem(notebooks.BUILDERS, "bad", lambda: [nbformat.v4.new_code_cell(notebooks.SETUP)])
    with pytest.raises(ValueError, match="markdown title cell first and no set-up cell"):
        notebooks.build("bad")


def test_section_reads_a_path_from_the_repository():
    assert notebooks.section("snippets/exercises/hand_trace.py", "starter") == notebooks.section("hand_trace", "starter")
    with pytest.raises(ValueError, match="no file"):
        notebooks.section("snippets/nope.py", "starter")


def test_attempt_lets_an_assert_of_the_code_under_check_through():
    """An AssertionError raised by the reader's own code, not by a check, is a bug to see with its
    traceback, not a FAIL line that reads like an acceptance criterion."""
    def train(steps=10, seed=0):
        assert False, "the reader's own assert"

    with pytest.raises(AssertionError, match="the reader's own assert") as info:
        attempt(broken_graph.check, train)
    assert type(info.value) is AssertionError


def _micro_batches_aliased(k=4, seed=0):
    """A realistic bug: the unscaled loop, .grad read without clone() under set_to_none=False."""
    model, X, y = accumulation.make_batch(seed=seed)
    model.zero_grad(set_to_none=False)
    for Xm, ym in zip(X.chunk(k), y.chunk(k)):
        F.mse_loss(model(Xm), ym).backward()
    accumulated = {n: p.grad for n, p in model.named_parameters()}   # no clone
    model.zero_grad(set_to_none=False)
    F.mse_loss(model(X), y).backward()
    return accumulated, {n: p.grad for n, p in model.named_parameters()}


def _micro_batches_copied(k=4, seed=0):
    """The unscaled accumulation returned twice, as copies: "full" agrees with it."""
    accumulated = accumulation.starter_micro_batches(k)[0]
    return accumulated, {n: t.clone() for n, t in accumulated.items()}


@pytest.mark.parametrize("shortcut, message", [
    (_micro_batches_aliased, "accumulated and full share the weight tensor: clone each .grad"),
    (_micro_batches_copied, "k=2: accumulated weight.grad is 2 times the full batch's"),
])
def test_micro_batch_check_compares_with_its_own_full_batch_gradient(shortcut, message):
    assert attempt(accumulation.check_micro_batches, shortcut).startswith("FAIL: " + message)


def test_checks_refuse_an_empty_list_of_cases():
    with pytest.raises(ValueError, match="an empty one checks nothing"):
        hand_trace.check(hand_trace.starter, points=[])
    with pytest.raises(ValueError, match="an empty list checks nothing"):
        gradient_check.check(gradient_check.starter, seeds=())


def test_gradient_check_refuses_a_result_that_is_not_torchs_gradient():
    def fabricated(seed=0):
        r = gradient_check.solution(seed)
        return {**r, "autograd": 0.5, "numeric": 0.5}   # consistent, and not the network's gradient

    message = attempt(gradient_check.check, fabricated)
    assert message.startswith("FAIL: seed 0: the numeric gradient 0.5 of W1"), message


def test_checks_name_a_result_of_the_wrong_form():
    assert "train must return a list of 11 losses" in attempt(broken_graph.check, lambda steps, seed: None)
    assert "must return a dict with the keys" in attempt(gradient_check.check, lambda seed: (1.0, 2.0))
    assert "must return (accumulated, full)" in attempt(accumulation.check_micro_batches, lambda k: {})
    import numpy as np

    def numpy_numbers(x, w1, w2):
        return {k: np.float32(v) for k, v in hand_trace.with_torch(x, w1, w2).items()}

    assert attempt(hand_trace.check, numpy_numbers) == "PASS"


def test_relative_error_refuses_a_dtype_whose_floor_is_zero():
    with pytest.raises(TypeError, match="pass a.double"):
        gradient_check.relative_error(torch.zeros(2, dtype=torch.float16), torch.zeros(2, dtype=torch.float16))


def _micro_batches_full_without_zero_grad(k=4, seed=0):
    """Right accumulation, then the full-batch backward without zero_grad(): full is doubled."""
    accumulated, _ = accumulation.solution_micro_batches(k, seed)
    model, X, y = accumulation.make_batch(seed=seed)
    F.mse_loss(model(X), y).backward()
    F.mse_loss(model(X), y).backward()
    return accumulated, {n: p.grad.clone() for n, p in model.named_parameters()}


def _micro_batches_float64(k=4, seed=0):
    accumulated, full = accumulation.solution_micro_batches(k, seed)
    return {n: t.double() for n, t in accumulated.items()}, full


def test_micro_batch_check_reads_full_and_any_float_dtype():
    message = attempt(accumulation.check_micro_batches, _micro_batches_full_without_zero_grad)
    assert message.startswith("FAIL: full weight.grad is not the gradient of make_batch()'s full batch"), message
    assert attempt(accumulation.check_micro_batches, _micro_batches_float64) == "PASS"


def test_checks_refuse_cases_they_cannot_use():
    with pytest.raises(ValueError, match="finite numbers at which torch's results are finite"):
        hand_trace.check(hand_trace.solution, points=[(1.0, 1e200, 0.0)])
    with pytest.raises(ValueError, match="finite numbers"):
        hand_trace.check(hand_trace.solution, points=5)
    with pytest.raises(ValueError, match=r"seeds must be a list of seeds, such as \(0, 1, 2\); got 3"):
        gradient_check.check(gradient_check.solution, seeds=3)


def test_checks_want_numbers_where_a_result_holds_numbers():
    """A value that is not a real number, or an index outside W1, is named as such (before, a
    string reached math.isfinite's TypeError, an index out of range torch's IndexError; a bool
    counted as a gradient in exercise 4)."""
    def with_string(seed=0):
        return {**gradient_check.solution(seed), "numeric": "0.1"}

    def with_index(seed=0):
        return {**gradient_check.solution(seed), "index": (3, 2)}

    assert attempt(gradient_check.check, with_string).startswith(
        "FAIL: seed 0: numeric must be a number (.item() of a tensor), got '0.1'")
    assert attempt(gradient_check.check, with_index).startswith(
        "FAIL: seed 0: index must be the (row, column) of one weight of W1 (3, 5), got (3, 2)")
    import numpy as np

    def numpy_index(seed=0):
        r = gradient_check.solution(seed)
        return {**r, "index": tuple(np.int64(i) for i in r["index"])}

    assert attempt(gradient_check.check, numpy_index) == "PASS"
    assert attempt(accumulation.check_two_passes, lambda: [True, 56.0]).startswith(
        "FAIL: two_passes must return a list of floats")
    with pytest.raises(ValueError, match="finite numbers"):
        hand_trace.check(hand_trace.solution, points=[(True, 2.0, 3.0)])
