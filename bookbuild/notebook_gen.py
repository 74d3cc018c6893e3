"""Build the book's generated notebooks (``docs/notebooks/0N-*.ipynb``, Part IV's, and
``docs/notebooks/w-*.ipynb``, the workshop's) from Python modules.

``python -m bookbuild.notebook_gen`` writes every notebook of ``BUILDERS`` whose cells changed
into ``docs/notebooks/``, without outputs (execution_count null, outputs []); then
``python -m bookcheck.notebooks`` executes them and stores their outputs (``make notebooks`` runs
both). ``tests/test_exercises.py`` fails if a committed notebook, its outputs aside, differs from
what this module builds, and ``tests/test_notebooks_anywhere.py`` runs each one, downloaded from
the built site, in a fresh environment outside the repository, and fails if its stored outputs
are not what that run prints.

To add a notebook:

1. Write a function that returns its cells: a markdown title cell first, then markdown and
   code cells (``nbformat.v4.new_markdown_cell`` / ``new_code_cell``). Take code from a
   module with ``section(module, name)``, the lines between ``# --8<-- [start:name]`` and
   ``# --8<-- [end:name]`` (the markers pages include with pymdownx.snippets), so a notebook
   never holds a second, diverging copy of it.
2. Add it to ``BUILDERS`` under the notebook's file name (without ``.ipynb``), add the file
   to the ``nav:`` of mkdocs.yml, and run ``python -m bookbuild.notebook_gen``.

``build`` puts the set-up cell (``SETUP``) right after the title: do not add it yourself. It
imports torch and, when the ``snippets`` package is not installed, installs it from the
book's site. Code cells after it import what they use from ``snippets``.
"""

import argparse
import functools
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from snippets.workshop import TASKS
from snippets.workshop.check import get_task, starter_path
from bookcheck.notebooks import SETUP_MARK
from bookcheck.versions import pinned

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "snippets" / "exercises"  # the modules whose sections the notebooks show
NOTEBOOKS = ROOT / "docs" / "notebooks"
SITE = "../../"  # from a notebook page of the site (notebooks/<name>/) to the site root


def section(module, name):
    """The lines between ``# --8<-- [start:name]`` and ``# --8<-- [end:name]`` of a module.

    ``module`` is a module of ``snippets/exercises/`` ("hand_trace") or a path from the
    repository's root ("snippets/workshop/linear.py").
    """
    path = ROOT / module if module.endswith(".py") else HERE / f"{module}.py"
    if not path.is_file():
        raise ValueError(f"section({module!r}, ...): no file {path}; pass a module of "
                         "snippets/exercises/ or a .py path from the repository's root")
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        start = lines.index(f"# --8<-- [start:{name}]")
        end = lines.index(f"# --8<-- [end:{name}]")
    except ValueError:
        raise ValueError(f"{path.relative_to(ROOT)} has no section {name!r}") from None
    return "\n".join(lines[start + 1:end]).strip("\n")


# The line the site's build rewrites in every notebook it offers for download (overrides/hooks.py,
# on_post_build): it writes the address of the wheel it puts on the site, from site_url.
WHEEL_LINE = "WHEEL = None  # the site's build writes the wheel's address here in the copy you download"

SETUP = f"""\
{SETUP_MARK} torch, and the book's `snippets` package (checks, reference solutions). If `snippets`
# is missing, this cell installs it from the book's site (see "Run the notebooks anywhere" there).
{WHEEL_LINE}
TORCH = "{pinned()}"  # every cell of the book is verified on this version of torch
import importlib.util, os, subprocess, sys, warnings
try:
    import snippets.exercises
except ImportError:
    found = importlib.util.find_spec("snippets")
    if found is not None and found.origin is not None:
        places = found.submodule_search_locations or []
        if any(os.path.isdir(os.path.join(p, "exercises")) for p in places):
            raise  # the book's package is installed: its own error
        raise ImportError(f"`snippets` here is {{found.origin}}, not the "
                          "book's package: rename it, restart the kernel") from None
    # a folder without __init__.py hides nothing: the install wins
    sys.modules.pop("snippets", None)
    pip = [sys.executable, "-m", "pip", "install", WHEEL or "<the book's site>/downloads/<the wheel>"]
    done = subprocess.run(pip + ["--no-color"], capture_output=True, text=True) if WHEEL else None
    if done is None or done.returncode != 0:
        why = "this copy has no address of the book's site"
        if done:  # pip's last error line
            why = done.stderr.rpartition("ERROR: ")[2].strip().partition("\\n")[0]
        raise ImportError(f"the book's `snippets` package is not installed and could not be installed "
                          f"({{why}}). Run this, then restart the kernel:\\n    {{' '.join(pip)}}") from None
    importlib.invalidate_caches()
import torch
if torch.__version__.split("+")[0] != TORCH:
    warnings.warn(f"the book is verified on torch {{TORCH}}; this is torch {{torch.__version__}}")
print("torch", torch.__version__)"""

HOW = (
    "**How this notebook works.** Run it top to bottom. The starter cell runs, and its code is "
    "wrong: `attempt(check, starter)` prints `FAIL:` and what is wrong, without stopping the "
    "notebook (an error your code raises, one the check does not expect, stops the cell with its "
    "traceback). Edit the starter cell until the check prints "
    "`PASS`. The reference solution is folded away below the checks; the last cells run it and "
    "must pass."
)


def details(title, body):
    return f"<details><summary>{title}</summary>\n\n{body}\n\n</details>"


def code_md(code):
    return f"```python\n{code}\n```"


def hand_trace():
    return [
        new_markdown_cell(
            "# Exercise 1: a hand trace, checked at two points\n\n"
            "**Goal.** For `L = (w1*x + w2*x**2)**2`, compute `L`, `dL/dw1`, `dL/dw2` and `dL/dx` by "
            "hand at `x = 1, w1 = 2, w2 = 3`, then at `x = 2` (same weights), and verify every "
            "number with torch.\n\n"
            f"The method is the one of [Hand trace]({SITE}part1/hand-trace/): forward values first, "
            "then, node by node, local derivative times upstream gradient. `x` is used twice (in "
            "`w1*x` and in `x**2`), so its gradient is a sum of two paths, as in "
            f"[Forks]({SITE}part1/forks/).\n\n" + HOW),
        new_markdown_cell(
            "## Trace it on paper first\n\n"
            "Name the inner sum `u = w1*x + w2*x**2`, so `L = u**2`.\n\n"
            "| Name | Computed as | at x = 1 | at x = 2 |\n"
            "|------|-------------|----------|----------|\n"
            "| `u`  | `w1*x + w2*x**2` | ? | ? |\n"
            "| `L`  | `u**2`      | ? | ? |\n\n"
            "Backward: `dL/du = 2u`; then each input of `u` gets `2u` times its local derivative "
            "(`du/dw1`, `du/dw2`, `du/dx`).\n\n"
            "The source poses this exercise at `x = 1` only; the check below also runs at `x = 2`."),
        new_markdown_cell("## Starter\n\nA first attempt, written as Python floats (no autograd). "
                          "Find what is wrong in it."),
        new_code_cell(section("hand_trace", "starter")),
        new_markdown_cell(
            "## Acceptance check\n\n"
            "`check(trace)` calls your function at `x = 1` and at `x = 2` (with `w1 = 2, w2 = 3`) "
            "and compares all four numbers with torch's autograd, in float64."),
        new_code_cell(
            "from snippets.exercises import attempt\n"
            "from snippets.exercises.hand_trace import check, with_torch\n\n"
            "print(attempt(check, starter))"),
        new_markdown_cell("At `x = 1` alone the starter looks right, which is why one test point is not enough:"),
        new_code_cell(
            "for x in (1.0, 2.0):\n"
            "    mine, ref = starter(x, 2.0, 3.0), with_torch(x, 2.0, 3.0)\n"
            "    print(f\"x = {x:g}: starter dL/dw1, dL/dw2 = {mine['dL/dw1']:g}, {mine['dL/dw2']:g}; \"\n"
            "          f\"torch {ref['dL/dw1']:g}, {ref['dL/dw2']:g}\")"),
        new_markdown_cell("## Reference solution\n\n" + details(
            "Reference solution (open after you have tried)",
            "The starter swapped the local derivatives of `w1` and `w2`: `du/dw1 = x` and "
            "`du/dw2 = x**2`.\n\n**Corrected from the source.** At `x = 1`, `x` and `x**2` are "
            "both 1, so the swapped trace gives the right numbers, 10 and 10, and \"matches "
            "PyTorch\". At `x = 2` the right answers are 64 and 128, and the swapped trace gives "
            "128 and 64.\n\n" + code_md(section("hand_trace", "solution")) +
            "\n\nAt `x = 1`: `u = 5`, `L = 25`, `dL/du = 10`, so `dL/dw1 = 10`, `dL/dw2 = 10`, "
            "`dL/dx = 10 * (2 + 6) = 80`. At `x = 2`: `u = 16`, `L = 256`, `dL/du = 32`, so "
            "`dL/dw1 = 64`, `dL/dw2 = 128`, `dL/dx = 32 * (2 + 12) = 448`.")),
        new_code_cell(
            "from snippets.exercises.hand_trace import solution\n\n"
            "check(solution)  # raises AssertionError if the reference were wrong\n"
            "assert solution(1.0, 2.0, 3.0) == {\"L\": 25.0, \"dL/dw1\": 10.0, \"dL/dw2\": 10.0, \"dL/dx\": 80.0}\n"
            "assert solution(2.0, 2.0, 3.0) == {\"L\": 256.0, \"dL/dw1\": 64.0, \"dL/dw2\": 128.0, \"dL/dx\": 448.0}\n"
            "for x in (1.0, 2.0):\n"
            "    print(f\"x = {x:g}:\", solution(x, 2.0, 3.0), \"torch:\", with_torch(x, 2.0, 3.0))"),
        new_markdown_cell(
            "## For the report\n\n"
            "- `dL/dw1 = 2u * x` and `dL/dw2 = 2u * x**2`: the upstream gradient `2u` times the "
            "factor each weight multiplies.\n"
            "- `dL/dx = 2u * (w1 + 2*w2*x)`: `x` feeds `u` through two terms, and the two "
            "contributions add.\n"
            "- A check at a point where two factors are equal (`x = 1`) cannot tell them apart. "
            "Check at a second point where every intermediate value differs."),
    ]


def gradient_check():
    return [
        new_markdown_cell(
            "# Exercise 2: autograd against central differences on an MLP\n\n"
            "**Goal.** For a one-hidden-layer MLP, compare the autograd gradient of the loss with "
            "a central difference `(L(w + h) - L(w - h)) / 2h`, first for one random weight, then "
            "for every weight of the first layer, and report the relative error "
            "`|autograd - numeric| / max(|autograd|, |numeric|)`.\n\n"
            "The network is the one of [The chain rule](" + SITE + "part1/chain-rule/) "
            "(`snippets/two_layer.py`), the difference quotient the one of "
            "[Autograd versus manual gradients](" + SITE + "part1/manual-vs-autograd/) "
            "(`snippets/finite_diff.py`).\n\n" + HOW),
        new_markdown_cell("## The network, shape by shape\n\n"
                          "`X (N, D_in) -> Linear(W1, b1) -> relu -> Linear(W2, b2) -> P (N, D_out)`, "
                          "and `L = mean((P - Y)**2)`. Weights are stored `(fan_in, fan_out)`."),
        new_code_cell(
            "from snippets.two_layer import forward, make_tensors, shapes\n\n"
            "t = make_tensors(seed=0)                    # float64, N=4, D_in=3, H=5, D_out=2\n"
            "cache = forward(t)\n"
            "print(shapes(cache, [\"X\", \"W1\", \"b1\", \"Z1\", \"A1\", \"W2\", \"b2\", \"P\", \"Y\", \"L\"]))\n"
            "assert cache[\"L\"].shape == torch.Size([])  # a scalar loss"),
        new_markdown_cell("## Starter\n\nThe source's recipe, as written: float32 and `h = 1e-5`."),
        new_code_cell("from snippets.exercises.gradient_check import loss_of_W1, relative_error\n"
                      "from snippets.two_layer import forward, make_tensors\n\n"
                      + section("gradient_check", "starter")),
        new_markdown_cell(
            "## Acceptance check\n\n"
            "`check(fn)` runs `fn(seed)` for seeds 0, 1 and 2 and requires the check to run in "
            "float64 with a relative error below `1e-6`, for the one weight and for all of `W1`."),
        new_code_cell(
            "from snippets.exercises import attempt\n"
            "from snippets.exercises.gradient_check import check\n\n"
            "r = starter(seed=0)\n"
            "# numeric is shown to one decimal: its float32 digits beyond that are rounding noise,\n"
            "# and another CPU prints other ones (-0.506639 on one, -0.512600 on another)\n"
            "print(f\"W1{list(r['index'])}: autograd {r['autograd']:.4f}, numeric {r['numeric']:.1f}\")\n"
            "worst = [starter(seed=seed)[\"layer_rel_error\"] for seed in (0, 1, 2)]\n"
            "print(f\"worst relative error over W1 above 1e-2, seeds 0, 1, 2: {[e > 1e-2 for e in worst]}\")\n"
            "print(attempt(check, starter))"),
        new_markdown_cell("## Reference solution\n\n" + details(
            "Reference solution (open after you have tried)",
            "Make every tensor float64 and use `h = 1e-6`. `central_difference` evaluates the "
            "loss under `torch.no_grad()` and perturbs one element at a time.\n\n"
            + code_md(section("gradient_check", "solution")))),
        new_code_cell(
            "from snippets.exercises.gradient_check import solution\n\n"
            "check(solution)  # raises AssertionError if the reference were wrong\n"
            "r = solution(seed=0)\n"
            "# the errors are shown as bounds: their digits are rounding noise that depends on the CPU\n"
            "print(f\"W1{list(r['index'])}: autograd {r['autograd']:.8f}, numeric {r['numeric']:.8f}\")\n"
            "print(f\"relative error below 1e-9 for one weight: {r['rel_error'] < 1e-9}, \"\n"
            "      f\"below 1e-7 over all of W1: {r['layer_rel_error'] < 1e-7}\")\n"
            "assert r[\"dtype\"] == torch.float64 and r[\"layer_rel_error\"] < 1e-6"),
        new_markdown_cell(
            "## For the report\n\n"
            "- In float64 with `h = 1e-6` the one-weight relative error is below `1e-9` and the "
            "worst over `W1` below `1e-7`: autograd and the difference quotient agree to at least "
            "seven digits.\n"
            "- In float32 with `h = 1e-5` the difference quotient carries a rounding error of "
            "about `1e-7 * |L| / h`, 0.01 to 0.08 for these losses (`L` from 1.2 to 7.6): on each "
            "of the three seeds some element of `W1` has a relative error above `1e-2` (above), and an "
            "element of the gradient smaller than that noise is all noise, its relative error "
            "near 1, or up to 2 when the noise flips its sign. No tolerance separates that noise from a wrong backward.\n"
            "- Rounding noise is shown as a bound or to the digits that are stable. Its digits depend "
            "on the CPU and on which kernels its BLAS library picks: the float32 `numeric` above "
            "is `-0.506639` on one x86-64 CPU and `-0.512600` on another.\n"
            "- Keep test points away from kinks: at `relu`'s 0 the difference quotient gives 0.5 "
            "and autograd 0. `torch.autograd.gradcheck` compares the two for every input and "
            "output at once, each element against `atol + rtol * |numerical|` rather than by one "
            "relative error ([what it computes](" + SITE + "part2/gradient-checking/#what-gradcheck-computes))."),
    ]


def broken_graph():
    return [
        new_markdown_cell(
            "# Exercise 3: a training loop that does not learn\n\n"
            "**Goal.** Each starter below trains a small MLP for 10 steps. It runs, raises "
            "nothing, and its loss never decreases. Find the line that cuts the gradient path or "
            "leaves parameters out of the update in each, fix it, and show the loss before and after for 10 steps.\n\n"
            "Each bug is one of the ways, listed in [What is tracked](" + SITE + "part1/tracking/) and "
            "[An optimizer that holds other parameters](" + SITE + "part1/training-loop-failures/"
            "#an-optimizer-that-holds-other-parameters), to cut the gradient path or to leave "
            "parameters out of the update.\n\n" + HOW),
        new_markdown_cell(
            "## Starters\n\n"
            "`X (64, 4)`, `y (64, 1)`; the model is `backbone Linear(4, 8) -> Tanh -> head "
            "Linear(8, 1)`. Each function returns 11 losses: before each of the 10 steps, then "
            "after the last."),
        new_code_cell("import torch.nn.functional as F\n"
                      "from snippets.exercises.broken_graph import LR, full_batch_loss, make_data, make_model\n\n"
                      + section("broken_graph", "starter")),
        new_markdown_cell("## Symptom\n\nThe loss is the same number at every step, for every starter."),
        new_code_cell(
            "from snippets.exercises import attempt\n"
            "from snippets.exercises.broken_graph import check, loss_table\n\n"
            "starters = {\"detach\": starter, \"frozen\": starter_frozen,\n"
            "            \"optimizer\": starter_optimizer, \"item\": starter_item}\n"
            "print(loss_table({name: fn() for name, fn in starters.items()}))\n"
            "for name, fn in starters.items():\n"
            "    print(f\"{name:9}\", attempt(check, fn))"),
        new_markdown_cell(
            "## Diagnosis, in order\n\n"
            "After the first `loss.backward()`, print four things, in this order; the first "
            "that reports a problem names the bug:\n\n"
            "1. `loss.grad_fn`: `None` means the loss was cut from the model (`.detach()`, "
            "`.item()`).\n"
            "2. the frozen parameters (`requires_grad` is False).\n"
            "3. the trainable parameters with no usable gradient (`report_dead_grads` from "
            f"[the first-step gradient check]({SITE}part1/tracking/#a-first-step-gradient-check)).\n"
            "4. the trainable parameters the optimizer does not hold (compare tensors by "
            "identity).\n\n" + code_md(section("broken_graph", "diagnose"))),
        new_code_cell(
            "from snippets.exercises.broken_graph import diagnose, first_step\n\n"
            "for variant in [\"detach\", \"frozen\", \"optimizer\", \"item\", \"fixed\"]:\n"
            "    print(variant)\n"
            "    for line in diagnose(*first_step(variant)):  # model, optimizer, loss after one backward\n"
            "        print(\"   \", line)"),
        new_markdown_cell("## Reference solution\n\n" + details(
            "Reference solution (open after you have tried)",
            "- `detach`: compute the loss from `model(X)` itself; remove `.detach()` and the "
            "`requires_grad_()` that silenced the error it caused.\n"
            "- `frozen`: freeze `model.backbone`, not `model.head`; then the head is trainable "
            "and in the optimizer.\n"
            "- `optimizer`: build the optimizer after the model is final, from that model's "
            "`parameters()`.\n"
            "- `item`: keep the loss a tensor; call `.item()` only on the value you log.\n\n"
            "The `detach`, `optimizer` and `item` fixes give the loop below; the `frozen` fix trains the "
            "head alone, so its loss falls less in 10 steps, and it passes the check too.\n\n"
            + code_md(section("broken_graph", "solution")))),
        new_code_cell(
            "from snippets.exercises.broken_graph import solution\n\n"
            "check(solution)  # raises AssertionError if the reference were wrong\n"
            "before, after = starter(), solution()\n"
            "assert after[-1] < 0.5 * after[0] and before[-1] == before[0]\n"
            "print(loss_table({\"before fix\": before, \"after fix\": after}))"),
        new_markdown_cell(
            "The bars show the loss after the fix, one `#` per 1/30 of the first loss. (The site "
            "has no plotting library; a text chart keeps the notebook runnable anywhere.)\n\n"
            "## For the report\n\n"
            "- Every starter leaves the parameters unchanged, because its optimizer steps only "
            "tensors that get no gradient: the loss is cut from the model (`detach`, `item`), the "
            "optimizer holds the frozen head (`frozen`), or it holds the parameters of the model "
            "that was replaced (`optimizer`). The diagnosis above shows each.\n"
            "- `loss.requires_grad_()` or `torch.tensor(value, requires_grad=True)` on a loss "
            "turns the loud error `element 0 of tensors does not require grad` into a silent "
            "bug. Do not silence that error: find the cut.\n"
            "- The check that catches all four on the first step: the loss has a `grad_fn`, every "
            "trainable parameter has a finite, nonzero `.grad` after `backward()`, and every "
            "trainable parameter is in the optimizer."),
    ]


def accumulation():
    return [
        new_markdown_cell(
            "# Exercise 4: gradients accumulate\n\n"
            "**Goal.** Run two backward passes without `zero_grad()` in between and show that "
            "`.grad` holds the sum of both. Explain why training loops call "
            "`optimizer.zero_grad()` every step. Then use the same accumulation on purpose: "
            "split a batch into `k` micro-batches and get the full batch's gradient.\n\n"
            "The graph is the one of [Hand trace](" + SITE + "part1/hand-trace/): "
            "`L = (w*x + b)**2` at `x = 2, w = 3, b = 1`, where `dL/dw = 28`. "
            "[Forks](" + SITE + "part1/forks/) shows why a fork and a second backward call give "
            "the same sum.\n\n" + HOW),
        new_markdown_cell("## Starter\n\nPart A reads the source's instructions literally; part B "
                          "accumulates gradients over micro-batches."),
        new_code_cell("import torch.nn.functional as F\n"
                      "from snippets.exercises.accumulation import hand_trace_leaves, make_batch\n\n"
                      + section("accumulation", "starter")),
        new_markdown_cell(
            "## Acceptance checks\n\n"
            "`check_two_passes(fn)`: `fn()` returns `w.grad` after each pass, which must be "
            "`[28.0, 56.0]`. `check_micro_batches(fn)`: for `k = 2` and `k = 4`, `fn(k=k)` "
            "returns the accumulated and the full-batch gradients, which must be equal."),
        new_code_cell(
            "from snippets.exercises import attempt\n"
            "from snippets.exercises.accumulation import check_micro_batches, check_two_passes\n\n"
            "print(\"A:\", attempt(check_two_passes, starter_two_passes))\n"
            "print(\"B:\", attempt(check_micro_batches, starter_micro_batches))"),
        new_markdown_cell(
            "## Why `zero_grad()` every step\n\n"
            "The same `+=` runs in a training loop. Without `zero_grad()`, step `t` applies the "
            "sum of the gradients of steps `0..t`. With the learning rate 0 the weight stays at "
            "3, so each step's own gradient is 28, and `.grad` grows by 28 each step:"),
        new_code_cell(
            "w = torch.nn.Parameter(torch.tensor(3.0))\n"
            "opt = torch.optim.SGD([w], lr=0.0)\n"
            "seen = []\n"
            "for step in range(3):\n"
            "    L = (w * 2.0 + 1.0) ** 2     # x = 2, b = 1\n"
            "    L.backward()                 # no opt.zero_grad() before it\n"
            "    opt.step()\n"
            "    seen.append(w.grad.item())\n"
            "print(seen)\n"
            "assert seen == [28.0, 56.0, 84.0]\n"
            "opt.zero_grad()\n"
            "print(w.grad)  # None: zero_grad() sets .grad to None by default since PyTorch 2.0"),
        new_markdown_cell("## Reference solution\n\n" + details(
            "Reference solution (open after you have tried)",
            "**Corrected from the source.** Read literally (one forward pass, then `backward()` "
            "twice), the exercise raises `RuntimeError: Trying to backward through the graph a "
            "second time`: the first call frees what the graph saved. It needs two forward "
            "passes, or `retain_graph=True` on the first call. Either way `w.grad` becomes "
            "28 + 28 = 56.\n\n"
            "Part A: run the forward pass again for each backward, or keep the graph with "
            "`retain_graph=True`. Part B: divide each micro-batch's mean loss by `k`; the sum of "
            "`k` means of `N/k` examples, each divided by `k`, is the mean over all `N`.\n\n"
            + code_md(section("accumulation", "solution")))),
        new_code_cell(
            "from snippets.exercises.accumulation import (check, solution, solution_micro_batches,\n"
            "                                             solution_two_passes, solution_two_passes_retained)\n\n"
            "check(solution)  # raises AssertionError if the reference were wrong\n"
            "check_two_passes(solution_two_passes_retained)\n"
            "check_micro_batches(solution_micro_batches)\n"
            "print(\"two forwards: \", solution_two_passes())\n"
            "print(\"retain_graph: \", solution_two_passes_retained())\n"
            "accumulated, full = solution_micro_batches(k=4)\n"
            "for name in full:  # a bound: the differences are float32 rounding noise, 0 or about 1e-7 by CPU\n"
            "    gap = (accumulated[name] - full[name]).abs().max().item()\n"
            "    print(f\"{name:6} {tuple(full[name].shape)}  max |accumulated - full| < 1e-6: {gap < 1e-6}\")"),
        new_markdown_cell(
            "## For the report\n\n"
            "- `backward()` adds into `.grad` (`AccumulateGrad` does `+=`), so two passes give "
            "28 + 28 = 56.\n"
            "- A training step must start from no gradient: without `zero_grad()` each update "
            "uses the sum of all past gradients, like momentum that never decays.\n"
            "- Micro-batches: skip `zero_grad()` for `k` backward calls and scale each mean loss "
            "by `1/k`; unscaled, the gradient is `k` times the full batch's (4 times at `k = 4`). "
            "This holds for equal micro-batches and a model whose rows do not meet (no BatchNorm "
            "in training mode): [the conditions](" + SITE + "part2/accumulation-at-scale/#pitfalls).\n"
            "- Here one forward and two `backward()` calls raise: the first frees the tensors the "
            "graph saved (the square saved `w * x + b`); `retain_graph=True` keeps them, at the "
            "cost of their memory. A graph whose nodes saved nothing [can be walked again]("
            + SITE + "part2/the-graph/#backward-frees-the-saved-tensors)."),
    ]


def workshop(task):
    """The notebook of a workshop task (its cells: ``cells`` below)."""
    return cells(task)


BUILDERS = {"01-hand-trace": hand_trace, "02-gradient-check": gradient_check,
            "03-broken-graph": broken_graph, "04-accumulation": accumulation}
BUILDERS.update({f"w-{task.replace('_', '-')}": functools.partial(workshop, task) for task in TASKS})


def build(name):
    """The notebook ``name`` (a key of BUILDERS), without outputs, with stable cell ids.

    The set-up cell (SETUP) goes right after the builder's first cell, its title.
    """
    if name not in BUILDERS:
        raise ValueError(f"unknown notebook {name!r}; known: {sorted(BUILDERS)}")
    cells = BUILDERS[name]()
    if not cells or cells[0].cell_type != "markdown" or any(c.source == SETUP for c in cells):
        raise ValueError(f"BUILDERS[{name!r}] must return a markdown title cell first and no set-up cell "
                         "(build adds it)")
    nb = new_notebook(cells=[cells[0], new_code_cell(SETUP), *cells[1:]], metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    for i, cell in enumerate(nb.cells):
        cell.id = f"{name}-{i:02d}"
    nbformat.validate(nb)
    return nb


def text(name):
    """The .ipynb file content of notebook ``name``, as written to docs/notebooks/."""
    return nbformat.writes(build(name)) + "\n"


def committed_cells(path):
    """The notebook file at ``path`` as this module writes it: its outputs removed."""
    from bookcheck.notebooks import without_outputs

    return nbformat.writes(without_outputs(nbformat.read(path, as_version=4))) + "\n"



# ---- the workshop's notebooks, one per task (docs/notebooks/w-<task>.ipynb): the code is copied
# from the ``# --8<-- [start:name]`` sections of snippets/workshop/<task>.py and from
# snippets/workshop/starters/<task>.py, so a notebook holds no second copy; the last cell runs the
# checker on the reader's ``backward``.

TASK_DIR = Path(__file__).resolve().parent.parent / "snippets" / "workshop"  # the tasks
PAGES = {"softmax_ce": "losses", "logsumexp": "losses", "layernorm": "normalisation",
         "batchnorm": "normalisation", "linear": "matmul-attention", "attention": "matmul-attention",
         "embedding": "indexing", "maxpool": "indexing", "custom_op": "custom-op"}
# Names the notebook gives what a task module defines outside its forward section: a custom
# operator's name, distinct from the module's so that the two definitions do not meet.
GIVEN = {"EPS": "EPS = 1e-5", "OP_NAME": 'OP_NAME = "notebook::swish"'}


def task_section(task, name):
    """The lines between ``# --8<-- [start:name]`` and ``# --8<-- [end:name]`` of a task module."""
    return section(f"snippets/workshop/{task}.py", name)


def cells(task):
    mod = get_task(task)
    page = f"{SITE}workshop/{PAGES[task]}/#{task.replace('_', '-')}"
    imports = [line for line in (TASK_DIR / f"{task}.py").read_text(encoding="utf-8").splitlines()
               if line.startswith(("import ", "from ")) and "snippets" not in line and line != "import warnings"]
    return [
        new_markdown_cell(
            f"# Derive the backward: {mod.TITLE}\n\n"
            f"The task, its hints and the derivation are on [its page]({page}). Shapes and dtypes:\n\n"
            + f"```text\n{mod.__doc__.strip()}\n```\n\n"
            "**How this notebook works.** Run it top to bottom. The forward is given; the cell "
            "\"Your backward\" holds a starter that runs and is wrong, and the last cell checks it "
            "against torch and prints `FAIL` with the gradient, the case and the first wrong entry "
            "(the formula is the last of the hints below). The call below passes `seed=1`, the cases this page shows; remove "
            "it to draw fresh cases on every run (the report prints the seed, and `seed=` replays it). "
            "Edit your backward, then run its cell and the last cell again until it prints `all checks passed`. "
            "Your backward runs in a separate process, sent there as its code with the global names "
            "it reads, from any cell: modules, functions, and numbers, strings, tensors or tuples and "
            "lists of them; anything else (a dict, an object) is not sent, and the check says so if your "
            "backward needs it: keep such a value inside the function. Hints are earned: each failed check unlocks the next level (where to look, "
            "the structure, a check by hand, the formula), recorded in `.workshop/` in the kernel's "
            "working directory (or in the folder `$WORKSHOP_RECORD` names); add `hint=4` to the call "
            "to see the highest one unlocked."),
        new_markdown_cell("## The forward (given)"),
        new_code_cell("\n".join(imports) + "\n" + "".join(f"\n{line}\n" for name, line in GIVEN.items() if hasattr(mod, name)) + "\n\n"
                      + task_section(task, "forward")),
        new_markdown_cell("## Your backward"),
        new_code_cell(starter_path(task).read_text(encoding="utf-8").strip("\n")),
        new_markdown_cell(details("Reference backward (open after you have tried)",
                                  code_md(task_section(task, "backward")))
                          + "\n\n## Check\n\nThe same checks as `python -m snippets.workshop check "
                          f"{task} FILE`, on the `backward` of the cell above; the given `forward`, unchanged, "
                          "counts as the task's own."),
        new_code_cell("from snippets.workshop.check import check\n\n"
                      f"print(check({task!r}, backward, forward, seed=1))"),
    ]


def name(task):
    """The notebook's file name, without .ipynb."""
    return f"w-{task.replace('_', '-')}"


def main(argv=None):
    """Write every notebook whose cells changed into docs/notebooks/ (or into the folder given as
    argument), without outputs; a notebook whose cells are unchanged keeps its stored outputs."""
    cli = argparse.ArgumentParser(prog="python -m bookbuild.notebook_gen", description=main.__doc__)
    cli.add_argument("folder", nargs="?", type=Path, default=NOTEBOOKS, help=f"default {NOTEBOOKS}")
    folder = cli.parse_args(argv).folder
    folder.mkdir(parents=True, exist_ok=True)
    for name in BUILDERS:
        path = folder / f"{name}.ipynb"
        if path.is_file() and committed_cells(path) == text(name):
            continue
        path.write_text(text(name), encoding="utf-8")
        print(f"{path}: written without outputs (python -m bookcheck.notebooks executes it)")


if __name__ == "__main__":
    main()
