"""The notebooks' stored outputs are current.

The site shows each notebook of docs/notebooks/ as committed, outputs included (mkdocs-jupyter
does not execute them, so serving the book needs no torch), and every code cell's outputs must
equal those of a fresh execution, execution counts, timings and memory addresses aside. `make
notebooks` writes them. Each notebook is executed once per run: the generated ones
(bookbuild.notebook_gen.BUILDERS) as a reader runs them, downloaded from the built site
(tests/test_notebooks_anywhere.py compares their outputs); the others here (bookcheck.notebooks).
Here too: how a difference is reported and what is not
an output.
"""

import json
import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from bookbuild import notebook_gen
from bookcheck import ROOT, notebooks
from bookcheck.model import plugin_config

ALL = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))
NOTEBOOKS = [p for p in ALL if p.stem not in notebook_gen.BUILDERS]  # the others run as a reader runs them
FIXTURES = Path(__file__).parent / "fixtures" / "notebooks"
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_outputs_are_what_the_notebook_prints(path):
    problems = notebooks.stale(path)
    assert problems == [], f"{path.relative_to(ROOT)}: stored outputs are not current (run make notebooks):\n" + \
        "\n".join(problems)


def test_a_run_that_reuses_nothing_executes_every_notebook_afresh(pytestconfig):
    from bookcheck import results

    if not (pytestconfig.getoption("fresh") or results.in_ci()):
        pytest.skip("a run that may reuse passes reads executions from .cache/notebooks/ (keyed on all they read)")
    folder = notebooks.cache_dir()
    assert folder != notebooks.CACHE and ROOT not in folder.resolve().parents, folder


def test_each_notebook_is_executed_here_or_as_a_reader_runs_it():
    # every generated notebook is in docs/notebooks/, so the reader's runs compare all of them
    assert sorted(notebook_gen.BUILDERS) == sorted(p.stem for p in ALL if p not in NOTEBOOKS)


def test_every_code_cell_is_stored_executed():
    for path in ALL:
        nb = nbformat.read(path, as_version=4)
        assert all(c.execution_count for c in nb.cells if c.cell_type == "code"), path.name


def _copy(tmp_path, edit):
    path = tmp_path / "first-notebook.ipynb"
    nb = json.loads((ROOT / "docs" / "notebooks" / "first-notebook.ipynb").read_text(encoding="utf-8"))
    edit([c for c in nb["cells"] if c["cell_type"] == "code"])
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path


def test_a_changed_output_is_reported_with_its_cell(tmp_path):
    def tamper(code):
        code[0]["outputs"][0]["text"] = ["tensor(13.)\n"]

    [problem] = notebooks.stale(_copy(tmp_path, tamper))
    assert problem.startswith("code cell 1 ('import torch'):")
    assert '-  "text": "tensor(13.)\\n"' in problem and '+  "text": "tensor(12.)\\n"' in problem


def test_a_missing_output_is_reported(tmp_path):
    def drop(code):
        code[1]["outputs"] = []

    [problem] = notebooks.stale(_copy(tmp_path, drop))
    assert problem.startswith("code cell 2 ('assert x.grad.item() == 12.0'):")


def test_execution_counts_timings_and_addresses_are_not_outputs(tmp_path):
    def renumber(code):
        for i, cell in enumerate(code):
            cell["execution_count"] = 40 + i
            cell["metadata"]["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00Z"}
        code[1]["outputs"][0]["execution_count"] = 41

    assert notebooks.stale(_copy(tmp_path, renumber)) == []
    assert notebooks.ADDRESS.sub("0x...", "<object at 0x7f3a2b1c9d60>") == "<object at 0x...>"


def test_where_a_stream_is_split_into_chunks_is_not_an_output(tmp_path):
    """The kernel splits consecutive prints to stdout where timing has it; a reader sees one text."""
    def split(code):
        out = code[0]["outputs"][0]
        text = "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
        code[0]["outputs"][0:1] = [dict(out, text=text[:3]), dict(out, text=text[3:])]

    assert notebooks.stale(_copy(tmp_path, split)) == []


def test_a_notebook_whose_cell_raises_fails(tmp_path):
    shutil.copy(FIXTURES / "failing.ipynb", tmp_path)
    with pytest.raises(CellExecutionError, match="element 0 of tensors does not require grad"):
        notebooks.stale(tmp_path / "failing.ipynb")


def test_a_kernel_listens_on_unix_sockets_in_a_folder_of_its_own(tmp_path):
    # not on TCP ports, which another process can take between their pick and the kernel's bind;
    # the folder's path is absolute, since the kernel runs in its notebook's folder
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1 + 1)")])
    with notebooks.kernel_config() as config:
        client = NotebookClient(nb, timeout=120, kernel_name="python3", config=config,
                                resources={"metadata": {"path": str(tmp_path)}})
        with client.setup_kernel():
            info = client.km.get_connection_info()
            folder = Path(info["ip"]).parent
            assert info["transport"] == "ipc" and folder.is_absolute(), info
            assert any(folder.iterdir())  # the sockets
            client.execute_cell(nb.cells[0], 0)
    assert nb.cells[0].outputs[0]["text"] == "2\n"
    assert not folder.exists() and list(tmp_path.iterdir()) == []


def test_the_site_does_not_execute_notebooks():
    options = plugin_config("mkdocs-jupyter")
    assert options["execute"] is False and options["allow_errors"] is False, options


# ------------------------------------------------------------------ the second configuration


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_a_notebook_prints_the_same_on_the_second_configuration(path):
    """Its code, run as a page's chain on the second seed, torch's plain kernels and MKL's path for
    any x86-64 CPU, prints the stored outputs: nothing it shows is rounding noise of this CPU."""
    problems = notebooks.second_configuration(path)
    assert problems == [], f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


NOISE = """from snippets.exercises.accumulation import solution_micro_batches

accumulated, full = solution_micro_batches(k=4)  # float32: four micro-batches against one full batch
for name in full:
    print(f"{name:6} max |accumulated - full| = {(accumulated[name] - full[name]).abs().max().item():.1e}")
"""


def _notebook_printing(tmp_path, source, *, on="machine"):
    """A notebook of one code cell whose stored output is what the cell prints on ``on``'s
    kernels with the first seed, as `make notebooks` stores it on this machine."""
    from bookcheck.model import Block
    from bookcheck.run import SEEDS, run_chain

    [(shown, error)], _ = run_chain([Block(tmp_path / "n.ipynb", 1, "python", source, None)], [0],
                                    SEEDS[0], False, on)
    assert error is None, error
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source, execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=shown)])])
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    return path, shown


def test_a_cell_that_prints_float32_rounding_noise_fails_on_this_machine(tmp_path):
    """The accumulation cell as 04-accumulation printed it before: the difference of two float32
    sums in another order, digit for digit (8.8e-08 on one CPU, 0.0e+00 on another)."""
    path, shown = _notebook_printing(tmp_path, NOISE)
    [problem] = notebooks.second_configuration(path)
    assert problem.startswith("code cell 1 prints something else on torch's plain CPU kernels"), problem
    assert all(f"-{line}" in problem for line in shown.splitlines()), problem


def test_the_same_cell_printing_a_bound_passes(tmp_path):
    bound = NOISE.replace('= {(accumulated[name] - full[name]).abs().max().item():.1e}")',
                          '< 1e-6: {(accumulated[name] - full[name]).abs().max().item() < 1e-6}")')
    path, shown = _notebook_printing(tmp_path, bound)
    assert shown == "weight max |accumulated - full| < 1e-6: True\nbias   max |accumulated - full| < 1e-6: True\n"
    assert notebooks.second_configuration(path) == []


def test_a_cell_that_prints_unseeded_random_numbers_fails(tmp_path):
    path, _ = _notebook_printing(tmp_path, "import torch\nprint(torch.rand(2))\n")
    [problem] = notebooks.second_configuration(path)
    assert "prints something else" in problem


def test_a_cells_last_expression_is_shown_as_the_kernel_shows_it():
    assert notebooks.displayed("x = 2\nx * 3") == "x = 2\n__shown__ = (x * 3)\nif __shown__ is not None:\n    print(repr(__shown__))\n"
    assert notebooks.displayed("x = 2\nx * 3;") == "x = 2\nx * 3;"
    assert notebooks.displayed("print(1)\nx = 2") == "print(1)\nx = 2"
    [_, second] = notebooks.cell_blocks(ROOT / "docs" / "notebooks" / "first-notebook.ipynb")
    assert second.expected_output == "12.0\n" and second.cont


def test_make_notebooks_runs_the_workshop_checker_on_a_record_of_its_own(monkeypatch, tmp_path, capsys):
    """The workshop notebooks run the checker on their starters, which in the repository's
    .workshop/ would earn a reader's hints: `make notebooks` (bookcheck.notebooks.main) points
    $WORKSHOP_RECORD at a scratch folder before any kernel starts, and the kernels inherit it."""
    from snippets.workshop import RECORD_VARIABLE

    monkeypatch.delenv(RECORD_VARIABLE, raising=False)  # this session's own record set aside
    seen = []
    monkeypatch.setattr(notebooks, "store", lambda path: seen.append((path, os.environ.get(RECORD_VARIABLE))) or False)
    notebooks.main([str(ALL[0])])
    [(path, record)] = seen
    assert path == ALL[0] and record is not None, seen
    assert Path(record).is_dir() and not Path(record).resolve().is_relative_to(ROOT), record
    assert f"{ALL[0]}: outputs current" in capsys.readouterr().out
