"""Build the workshop's notebooks, one per task, from the task modules and their starters.

``python -m snippets.workshop.notebooks`` writes ``docs/notebooks/w-<task>.ipynb`` without
outputs. The cells are made with the functions of Part IV's generator
(``snippets/exercises/notebooks.py``: its set-up cell, ``details``, ``code_md``), and the code
is copied from the ``# --8<-- [start:name]`` sections of ``snippets/workshop/<task>.py`` and
from ``snippets/workshop/starters/<task>.py``, so a notebook holds no second copy.
``tests/test_workshop_notebooks.py`` fails if a committed notebook differs from this build.
The last cell runs the checker on the reader's ``backward``.
"""

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from snippets.exercises.notebooks import NOTEBOOKS, SETUP, SITE, code_md, details
from snippets.workshop import TASKS
from snippets.workshop.check import get_task, starter_path

HERE = Path(__file__).resolve().parent
PAGES = {"softmax_ce": "losses", "logsumexp": "losses", "layernorm": "normalisation",
         "batchnorm": "normalisation", "linear": "matmul-attention", "attention": "matmul-attention",
         "embedding": "indexing", "maxpool": "indexing"}


def section(task, name):
    """The lines between ``# --8<-- [start:name]`` and ``# --8<-- [end:name]`` of a task module."""
    lines = (HERE / f"{task}.py").read_text(encoding="utf-8").splitlines()
    try:
        start, end = lines.index(f"# --8<-- [start:{name}]"), lines.index(f"# --8<-- [end:{name}]")
    except ValueError:
        raise ValueError(f"snippets/workshop/{task}.py has no section {name!r}") from None
    return "\n".join(lines[start + 1:end]).strip("\n")


def cells(task):
    mod = get_task(task)
    page = f"{SITE}workshop/{PAGES[task]}/#{task.replace('_', '-')}"
    imports = [line for line in (HERE / f"{task}.py").read_text(encoding="utf-8").splitlines()
               if line.startswith(("import ", "from ")) and "snippets" not in line]
    return [
        new_markdown_cell(
            f"# Derive the backward: {mod.TITLE}\n\n"
            f"The task, its hints and the derivation are on [its page]({page}). Shapes and dtypes:\n\n"
            + f"```text\n{mod.__doc__.strip()}\n```\n\n"
            "**How this notebook works.** Run it top to bottom. The forward is given; the cell "
            "\"Your backward\" holds a starter that runs and is wrong, and the last cell checks it "
            "against torch and prints `FAIL` with the first wrong entry and a hint. Edit your "
            "backward and run the last two cells again until it prints `all checks passed`."),
        new_code_cell(SETUP),
        new_markdown_cell("## The forward (given)"),
        new_code_cell("\n".join(imports) + "\n" + ("\nEPS = 1e-5\n" if hasattr(mod, "EPS") else "") + "\n\n"
                      + section(task, "forward")),
        new_markdown_cell("## Your backward"),
        new_code_cell(starter_path(task).read_text(encoding="utf-8").strip("\n")),
        new_markdown_cell(details("Reference backward (open after you have tried)",
                                  code_md(section(task, "backward")))
                          + "\n\n## Check\n\nThe same checks as `python -m snippets.workshop check "
                          f"{task} FILE`, on the `backward` of the cell above."),
        new_code_cell("from snippets.workshop.check import check\n\n"
                      f"print(check({task!r}, backward, forward))"),
    ]


def build(task):
    """The notebook of ``task``, without outputs, with stable cell ids."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    nb = new_notebook(cells=cells(task), metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    for i, cell in enumerate(nb.cells):
        cell.id = f"w-{task}-{i:02d}"
    nbformat.validate(nb)
    return nb


def name(task):
    return f"w-{task.replace('_', '-')}"


def text(task):
    """The .ipynb file content of the notebook of ``task``."""
    return nbformat.writes(build(task)) + "\n"


def main(argv=None):
    """Write every workshop notebook into docs/notebooks/ (or into the folder given)."""
    argv = sys.argv[1:] if argv is None else argv
    folder = Path(argv[0]) if argv else NOTEBOOKS
    folder.mkdir(parents=True, exist_ok=True)
    for task in TASKS:
        path = folder / f"{name(task)}.ipynb"
        path.write_text(text(task), encoding="utf-8")
        print(path)


if __name__ == "__main__":
    main()
