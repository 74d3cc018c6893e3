"""The cells of the workshop's notebooks, one per task (``docs/notebooks/w-<task>.ipynb``).

Part IV's generator, ``bookcheck/notebook_gen.py``, builds and writes them with the
other notebooks (``python -m bookcheck.notebook_gen``) and adds the set-up cell. The code
is copied from the ``# --8<-- [start:name]`` sections of ``snippets/workshop/<task>.py`` and
from ``snippets/workshop/starters/<task>.py``, so a notebook holds no second copy. The last
cell runs the checker on the reader's ``backward``.
"""

from pathlib import Path

from nbformat.v4 import new_code_cell, new_markdown_cell

from bookcheck.notebook_gen import SITE, code_md, details
from bookcheck.notebook_gen import section as _section
from snippets.workshop import TASKS
from snippets.workshop.check import get_task, starter_path

HERE = Path(__file__).resolve().parent.parent / "snippets" / "workshop"  # the tasks
PAGES = {"softmax_ce": "losses", "logsumexp": "losses", "layernorm": "normalisation",
         "batchnorm": "normalisation", "linear": "matmul-attention", "attention": "matmul-attention",
         "embedding": "indexing", "maxpool": "indexing", "custom_op": "custom-op"}
# Names the notebook gives what a task module defines outside its forward section: a custom
# operator's name, distinct from the module's so that the two definitions do not meet.
GIVEN = {"EPS": "EPS = 1e-5", "OP_NAME": 'OP_NAME = "notebook::swish"'}


def section(task, name):
    """The lines between ``# --8<-- [start:name]`` and ``# --8<-- [end:name]`` of a task module."""
    return _section(f"snippets/workshop/{task}.py", name)


def cells(task):
    mod = get_task(task)
    page = f"{SITE}workshop/{PAGES[task]}/#{task.replace('_', '-')}"
    imports = [line for line in (HERE / f"{task}.py").read_text(encoding="utf-8").splitlines()
               if line.startswith(("import ", "from ")) and "snippets" not in line and line != "import warnings"]
    return [
        new_markdown_cell(
            f"# Derive the backward: {mod.TITLE}\n\n"
            f"The task, its hints and the derivation are on [its page]({page}). Shapes and dtypes:\n\n"
            + f"```text\n{mod.__doc__.strip()}\n```\n\n"
            "**How this notebook works.** Run it top to bottom. The forward is given; the cell "
            "\"Your backward\" holds a starter that runs and is wrong, and the last cell checks it "
            "against torch and prints `FAIL` with the gradient, the case and the first wrong entry, "
            "never the formula. The call below passes `seed=1`, the cases this page shows; remove "
            "it to draw fresh cases on every run (the report prints the seed, and `seed=` replays it). "
            "Edit your backward and run the last two cells again until it prints `all checks passed`. "
            "Your backward runs in a separate process, sent there as its code with the names it uses "
            "(modules, functions, numbers): keep what it needs in its own cell. Hints are earned: each "
            "failed check unlocks the next level (where to look, the structure, a check by hand, the "
            "formula), recorded in `.workshop/` beside the notebook; add `hint=4` to the call to see "
            "the highest one unlocked."),
        new_markdown_cell("## The forward (given)"),
        new_code_cell("\n".join(imports) + "\n" + "".join(f"\n{line}\n" for name, line in GIVEN.items() if hasattr(mod, name)) + "\n\n"
                      + section(task, "forward")),
        new_markdown_cell("## Your backward"),
        new_code_cell(starter_path(task).read_text(encoding="utf-8").strip("\n")),
        new_markdown_cell(details("Reference backward (open after you have tried)",
                                  code_md(section(task, "backward")))
                          + "\n\n## Check\n\nThe same checks as `python -m snippets.workshop check "
                          f"{task} FILE`, on the `backward` of the cell above."),
        new_code_cell("from snippets.workshop.check import check\n\n"
                      f"print(check({task!r}, backward, forward, seed=1))"),
    ]


def name(task):
    """The notebook's file name, without .ipynb."""
    return f"w-{task.replace('_', '-')}"
