"""The workshop's notebooks: committed as bookbuild/notebook_gen.py builds them, with
their stored outputs (what a reader's run prints: tests/test_notebooks_anywhere.py), which end
with the checker's verdict on the starter (FAIL); with the reference backward put in the
reader's cell, a run in a fresh kernel ends with PASS."""

import asyncio

import nbformat
import pytest
from nbclient import NotebookClient

from bookbuild import notebook_gen as generator
from bookbuild import notebook_gen as notebooks
from bookbuild.notebook_gen import NOTEBOOKS
from bookcheck.notebooks import kernel_config
from snippets.workshop import TASKS


@pytest.mark.parametrize("task", TASKS)
def test_committed_notebook_is_the_generated_one_with_its_outputs(task):
    path = NOTEBOOKS / f"{notebooks.name(task)}.ipynb"
    assert generator.committed_cells(path) == generator.text(notebooks.name(task)), (
        f"{path} is not what the generator builds: run make notebooks")
    nb = nbformat.read(path, as_version=4)
    assert all(c.execution_count for c in nb.cells if c.cell_type == "code")  # test_notebooks_anywhere.py
    # the stored outputs are reproducible: the check runs on fixed cases (the page's seed)
    assert nb.cells[-1].source.endswith(f"print(check({task!r}, backward, forward, seed=1))")


def test_section_names_a_missing_section():
    with pytest.raises(ValueError, match="has no section 'nope'"):
        notebooks.task_section("layernorm", "nope")
    with pytest.raises(ValueError, match="unknown notebook"):
        generator.build("w-nope")


async def _last_output(task, solved, slots):
    if not solved:  # the committed notebook's stored outputs: what a reader's run prints
        nb = nbformat.read(NOTEBOOKS / f"{notebooks.name(task)}.ipynb", as_version=4)  # (test_notebooks_anywhere)
        return "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    # the reader's cell replaced by the reference backward: the check must pass
    nb = generator.build(notebooks.name(task))
    assert nb.cells[5].source == notebooks.starter_path(task).read_text(encoding="utf-8").strip("\n")
    nb.cells[5].source = "import torch\nimport torch.nn.functional as F\n" + notebooks.task_section(task, "backward")
    async with slots:  # a kernel is a process: two at a time, driven from one event loop
        with kernel_config() as config:
            await NotebookClient(nb, timeout=300, kernel_name="python3", config=config,
                                 resources={"metadata": {"path": str(NOTEBOOKS)}}).async_execute()
    return "".join(o.get("text", "") for o in nb.cells[-1].outputs)


def test_notebooks_end_with_the_checkers_verdict(monkeypatch):
    # the kernels import this checkout's snippets package, whatever copy is installed
    monkeypatch.setenv("PYTHONPATH", str(NOTEBOOKS.parent.parent))
    jobs = [(task, False) for task in TASKS] + [("layernorm", True), ("embedding", True)]
    async def all_jobs():
        slots = asyncio.Semaphore(2)
        return await asyncio.gather(*(_last_output(*job, slots) for job in jobs))

    outs = asyncio.run(all_jobs())
    for (task, solved), out in zip(jobs, outs):
        if solved:
            assert out.endswith("all checks passed\n"), (task, out)
        else:
            assert "FAIL  backward" in out and out.endswith("a check failed\n"), (task, out)
