"""The page model (bookcheck/): one classification, one marker registry, shell
blocks' raises, every checked state also reset, notebook keys, the output updater."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bookcheck import HarnessError, ROOT, counts, markers, notebooks, state
from bookcheck.model import Page, parse_page, parse_text
from bookcheck.run import SEEDS, PageRuns, check_block
from bookcheck.check import check_page
from snippets.workshop import RECORD_VARIABLE
from bookcheck.update import rewrite


def page(tmp_path, text, name="page.md"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_page_model_imports_without_pytest_or_torch():
    code = ("import sys, bookcheck.counts, bookcheck.model, bookcheck.guard; "
            "print('pytest' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_a_kept_page_is_parsed_again_only_when_its_text_changes(tmp_path):
    path = page(tmp_path, "# Title\n\n```python\nx = 1\n```\n")
    first = Page.kept(path)
    assert Page.kept(path) is first and Page.kept(path, path.read_text(encoding="utf-8")) is first
    path.write_text("# Title\n\n```python\nx = 2\n```\n", encoding="utf-8")  # an edit
    edited = Page.kept(path)
    assert edited is not first and [b.code for b in edited.blocks] == ["x = 2\n"]
    assert [b.code for b in first.blocks] == ["x = 1\n"]  # a model already handed out is not changed
    other = page(tmp_path, path.read_text(encoding="utf-8"), "other.md")
    assert Page.kept(other) is not edited and Page.kept(other).path == other  # the same text elsewhere


def test_kinds_are_computed_once_for_every_fence(tmp_path):
    text = textwrap.dedent('''\
        ```python
        x = 1
        ```

        <!--pytest.mark.skip(reason="needs a GPU, which the book does not assume")-->
        ```python
        y = 2
        ```

        ```mermaid
        flowchart TB
        ```

        ```text
        loose
        ```
        ''')
    kinds = [b.kind for b in parse_text(text, tmp_path / "p.md")]
    assert kinds == ["run", "skipped", "diagram", "unaccounted"]


def test_every_marker_of_the_registry_is_known_to_the_guard_and_the_plugin(pytestconfig):
    lines = pytestconfig.getini("markers")
    for name, marker in markers.MARKERS.items():
        assert name in markers.KNOWN_MARKS
        if name != "skip":
            assert any(line.startswith(f"{name}:") for line in lines), name
    assert set(markers.DIAGRAM_MARKS) == {"graph_of", "diagram_from"}


def test_raises_on_a_shell_block_is_checked(tmp_path):
    good = page(tmp_path, '''\
        <!--pytest.mark.raises("ValueError", match="bad size")-->
        ```sh
        echo "Traceback (most recent call last):" >&2; echo "ValueError: bad size: 3" >&2; exit 1
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        ValueError: bad size: 3
        ```
        ''')
    blocks = parse_text(good.read_text(), good)
    check_block(blocks, blocks[0])
    for code, message in [("true", "but the command succeeded"),
                          ("echo 'KeyError: 1' >&2; exit 1", "expected ValueError, but the command failed"),
                          ("echo 'ValueError: other' >&2; exit 1", "does not match 'bad size'")]:
        bad = page(tmp_path, f'''\
            <!--pytest.mark.raises("ValueError", match="bad size")-->
            ```sh
            {code}
            ```
            ''', "bad.md")
        blocks = parse_text(bad.read_text(), bad)
        with pytest.raises(HarnessError, match=message):
            check_block(blocks, blocks[0])


def test_a_device_left_by_a_block_that_passes_is_not_inherited_by_the_next_page(tmp_path):
    # set inside a device context, the default device reads cpu after the block, but clearing it
    # restores the context's meta: the worker is replaced, so the next page runs on cpu
    prints_its_device = ('```python\nimport torch\n{}print(torch.zeros(1).device)\n```\n\n'
                         '<!--pytest-codeblocks:expected-output-->\n```text\ncpu\n```\n')
    nested = page(tmp_path, prints_its_device.format('with torch.device("meta"):\n    torch.set_default_device("cpu")\n'),
                  "nested.md")
    later = page(tmp_path, prints_its_device.format(""), "later.md")
    assert check_page(nested) == [] and check_page(later) == [] and check_page(later) == []


def test_every_state_read_has_its_reset():
    assert state._readers().keys() == state._writers().keys()


@pytest.mark.parametrize("leak", [
    "keep = torch.inference_mode(); keep.__enter__()",
    "torch.set_autocast_enabled('cpu', True)",
    "torch.set_autocast_dtype('cpu', torch.float16)",
    "torch.set_default_dtype(torch.float64)",
    "torch.set_grad_enabled(False)",
    "torch.set_printoptions(precision=2, sci_mode=True)",
    "torch.set_default_device('meta')",
])
def test_every_checked_state_is_also_reset(tmp_path, leak):
    import torch

    path = page(tmp_path, f'''\
        ```python
        import torch
        {leak}
        ```

        ```python
        import torch
        assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
        assert not torch.is_autocast_enabled("cpu") and torch.get_default_dtype() == torch.float32
        assert torch.get_autocast_dtype("cpu") == torch.bfloat16
        assert torch.zeros(1).device.type == "cpu"
        ```
        ''')
    blocks = parse_text(path.read_text(), path)
    with pytest.raises(HarnessError, match="left torch global state changed"):
        check_block(blocks, blocks[0])
    check_block(blocks, blocks[1])
    assert state.state_leaks() == []
    assert not torch.is_inference_mode_enabled() and not torch.is_autocast_enabled("cpu")


def test_the_print_options_are_read_where_torch_set_printoptions_writes_them():
    """torch has no public getter of its print options: bookcheck.state reads the private
    object torch.set_printoptions writes. This fails, naming it, when that object is gone."""
    import torch

    opts = getattr(getattr(torch, "_tensor_str", None), "PRINT_OPTS", None)
    assert opts is not None, "torch._tensor_str.PRINT_OPTS is gone: bookcheck.state._opts needs another way to read the print options"
    before = state._opts()
    try:
        torch.set_printoptions(precision=2, threshold=7, edgeitems=1, linewidth=40, sci_mode=True)
        assert state._opts() == (2, 7, 1, 40, True)
    finally:
        torch.set_printoptions(profile="default")
        torch.set_printoptions(sci_mode=before[4])
    assert state._opts() == before


def test_a_graph_compiled_by_one_chain_is_gone_for_the_next(tmp_path):
    """torch.compile caches compiled code on the code object, for the life of the process; a
    later chain compiling the same function starts without it (bookcheck.state resets it)."""
    (tmp_path / "reset_probe.py").write_text("def double(x):\n    return x * 2\n", encoding="utf-8")
    head = f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nimport torch\n" \
           "from torch._dynamo.eval_frame import _debug_get_cache_entry_list\nimport reset_probe\n"
    path = page(tmp_path, "```python\n" + head +
                "torch.compile(reset_probe.double, backend='eager')(torch.ones(2))\n"
                "print(len(_debug_get_cache_entry_list(reset_probe.double.__code__)))\n```\n\n"
                "<!--pytest-codeblocks:expected-output-->\n```text\n1\n```\n\n"
                "```python\n" + head +
                "print(len(_debug_get_cache_entry_list(reset_probe.double.__code__)))\n```\n\n"
                "<!--pytest-codeblocks:expected-output-->\n```text\n0\n```\n")
    blocks = [b for b in parse_text(path.read_text(), path) if b.syntax == "python"]
    runs = PageRuns(blocks)
    for b in blocks:
        check_block(blocks, b, runs)


def test_a_deprecation_warning_counts_only_when_the_block_itself_triggers_it(tmp_path):
    """As in a reader's session: Python shows a DeprecationWarning that code in __main__
    triggers, and hides one a library emits (at its import, say)."""
    (tmp_path / "deprecated_probe.py").write_text(
        "import warnings\nwarnings.warn('this module is old', DeprecationWarning)\n", encoding="utf-8")
    path = page(tmp_path, f'''\
        ```python
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import deprecated_probe
        ```

        ```python
        import warnings
        warnings.warn("this call is old", DeprecationWarning)
        ```
        ''')
    blocks = parse_text(path.read_text(), path)
    check_block(blocks, blocks[0])
    with pytest.raises(HarnessError, match=r"the block warned(.|\n)*DeprecationWarning: this call is old"):
        check_block(blocks, blocks[1])


def test_a_chain_runs_once_per_seed_for_all_its_blocks(tmp_path):
    count = tmp_path / "runs"
    path = page(tmp_path, f'''\
        ```python
        with open({str(count)!r}, "a") as f:
            f.write("run\\n")
        ```

        <!--pytest-codeblocks:cont-->
        ```python
        x = 1
        ```

        <!--pytest-codeblocks:cont-->
        ```python
        y = x + 1
        ```
        ''')
    blocks = parse_text(path.read_text(), path)
    runs = PageRuns(blocks)
    for b in blocks:
        check_block(blocks, b, runs)
    assert count.read_text() == "run\n" * 2  # one run of the chain per seed, not one per block


def test_first_run_only_runs_a_chain_once_and_leaves_the_seed_unchecked(tmp_path):
    """make test-torch's --first-run-only: each chain runs once, under the first of RUNS, so an
    output that depends on the seed passes there; the same block fails a whole check."""
    count = tmp_path / "runs"
    path = page(tmp_path, f'''\
        ```python
        import torch
        with open({str(count)!r}, "a") as f:
            f.write("run\\n")
        print(torch.randint(0, 10**6, ()).item())
        ```
        ''')
    blocks = parse_text(path.read_text(), path)
    shown = PageRuns(blocks).outcome(blocks[0], SEEDS[0]).shown
    path.write_text(path.read_text() + f"\n<!--pytest-codeblocks:expected-output-->\n```text\n{shown}```\n")
    blocks = parse_text(path.read_text(), path)
    count.write_text("")
    check_block(blocks, blocks[0], first_run_only=True)
    assert count.read_text() == "run\n"
    with pytest.raises(HarnessError, match="printed something else on a second run with another RNG seed"):
        check_block(blocks, blocks[0])


def test_an_output_that_depends_on_the_cpu_kernels_fails_and_says_so(tmp_path):
    import torch

    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("this CPU runs torch's plain kernels already, so no output can differ from them")
    path = page(tmp_path, f'''\
        ```python
        import torch

        print(torch.backends.cpu.get_cpu_capability())
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        {torch.backends.cpu.get_cpu_capability()}
        ```
        ''')
    blocks = parse_text(path.read_text(), path)
    with pytest.raises(HarnessError, match=r"plain CPU kernels and MKL.s path for any x86-64 CPU \(ATEN_CPU_CAPABILITY=default, MKL_CBWR=COMPATIBLE\).*:\nthis machine:\n\w+\nplain kernels:\nDEFAULT\n$"):
        check_block(blocks, blocks[0])


def test_blocks_run_in_a_worker_process_not_in_the_process_that_checks(tmp_path):
    path = page(tmp_path, '''\
        ```python
        import os
        import threading

        print(os.getpid(), threading.active_count())
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        0 1
        ```
        ''')
    import os

    blocks = parse_text(path.read_text(), path)
    shown = PageRuns(blocks).outcome(blocks[0], 0).shown
    pid, threads = map(int, shown.split())
    assert pid != os.getpid()
    assert threads == 1  # nothing else runs beside the block: no browser, server or build thread


def test_a_block_that_kills_its_worker_fails_and_the_next_chain_runs(tmp_path):
    path = page(tmp_path, '''\
        ```python
        import os

        os._exit(3)
        ```

        ```python
        print("after")
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        after
        ```
        ''')
    blocks = parse_text(path.read_text(), path)
    runs = PageRuns(blocks)
    with pytest.raises(HarnessError, match=r"page.md:1: the worker process running this chain .* died"):
        check_block(blocks, blocks[0], runs)
    check_block(blocks, blocks[1], runs)


def test_a_stream_split_by_the_kernel_is_stored_as_one_output():
    """Where the kernel splits one cell's prints into chunks depends on timing: the stored
    outputs join consecutive chunks of one stream (not across another stream), so storing an
    unchanged notebook again writes the same file."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    committed = new_notebook(cells=[new_code_cell("print(1); print(2)")])
    executed = new_notebook(cells=[new_code_cell("print(1); print(2)", outputs=[
        new_output("stream", name="stdout", text="1\n"), new_output("stream", name="stdout", text="2\n"),
        new_output("stream", name="stderr", text="w\n"), new_output("stream", name="stdout", text="3\n")])])
    stored = notebooks.with_outputs(committed, executed)
    assert [(o.name, o.text) for o in stored.cells[0].outputs] == [("stdout", "1\n2\n"), ("stderr", "w\n"), ("stdout", "3\n")]
    nbformat.validate(stored)
    assert notebooks.differences(stored, executed) == []


def test_a_notebook_key_changes_with_everything_its_execution_can_read(tmp_path, monkeypatch):
    pkg = tmp_path / "snippets"
    (pkg / "workshop" / "tasks").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("X = 1\n")
    (pkg / "workshop" / "tasks" / "linear.py").write_text("CASES = [1]\n")  # loaded by importlib
    (tmp_path / "constraints.txt").write_text("torch==2.13.0\n")
    (tmp_path / "docs").mkdir()
    nb = tmp_path / "docs" / "n.ipynb"
    cell = {"cell_type": "code", "source": "import importlib\n", "metadata": {}, "outputs": [],
            "execution_count": None}
    nb.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (tmp_path / "docs" / "data.txt").write_text("1\n")  # beside the notebook
    monkeypatch.setattr(notebooks, "ROOT", tmp_path)
    key = notebooks.content_key(nb)
    assert notebooks.content_key(nb) == key
    for name in ("snippets/helper.py", "snippets/workshop/tasks/linear.py", "constraints.txt", "docs/data.txt"):
        path = tmp_path / name
        text = path.read_text()
        path.write_text(text + "# edited\n")
        assert notebooks.content_key(nb) != key, name
        path.write_text(text)
        assert notebooks.content_key(nb) == key, name
    monkeypatch.setattr(notebooks, "versions", lambda: "torch=9.9.9;python=3.11")
    assert notebooks.content_key(nb) != key


def test_update_outputs_rewrites_changes_adds_and_removes_output_blocks(tmp_path):
    path = page(tmp_path, '''\
        ```python
        print(1)
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        2
        ```

        - a list item

            ```python
            print("new")
            ```

        ```python
        x = 1
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        stale
        ```
        ''')
    blocks = parse_text(path.read_text(), path)
    printed = {blocks[0].lineno: "1\n", blocks[1].lineno: "new\n", blocks[2].lineno: ""}
    assert rewrite(path, printed) == 3
    again = parse_text(path.read_text(), path)
    assert [b.expected_output for b in again if b.syntax == "python"] == ["1\n", "new\n", None]
    assert "    <!--pytest-codeblocks:expected-output-->" in path.read_text()


def test_update_outputs_renumbers_the_place_an_output_names_when_an_edit_above_moves_it(tmp_path):
    """A block prints its own place (as a traceback does); the output above it gains a line, so
    the block moves down one line: one --update-outputs run leaves every output matching."""
    from bookcheck.check import page_checks

    path = page(tmp_path, '''\
        ```python
        print("a")
        print("b")
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        a
        ```

        ```python
        import inspect
        print(inspect.currentframe().f_code.co_filename)
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        stale
        ```
        ''')
    printed = {}
    for check in page_checks(path, update=lambda block, shown: printed.__setitem__(block.lineno, shown)):
        check.run()
    assert printed == {1: "a\nb\n", 11: f"{path}:11\n"}, printed
    assert rewrite(path, printed) == 2
    assert f"{path}:12\n" in path.read_text(encoding="utf-8")
    assert check_page(path) == []


def test_drift_report_names_the_first_line_that_changes_and_why_a_block_fails():
    FIXTURES = ROOT / "tests" / "fixtures" / "pages"
    from tools import drift

    lines, totals = drift.report([FIXTURES / "wrong_output.md", FIXTURES / "undeclared_warning.md", FIXTURES / "good.md"])
    text = "\n".join(lines)
    assert "wrong_output.md:3: output changes: line 1: '28.0' -> 'tensor(28.)'" in text.replace(
        str(FIXTURES.relative_to(ROOT)) + "/", ""), text
    assert "undeclared_warning.md" in text and "fails:" in text and "does not say so" in text, text
    assert "good.md" not in text, text
    assert totals["pages"] == 3 and totals["pages changed"] == 2, totals
    assert drift.first_difference("a\nb\n", "a\nc\n") == "line 2: 'b' -> 'c'"
    assert drift.first_difference("a", "a\nb") == "line 2: '(no line)' -> 'b'"


def test_an_indented_fence_runs_with_its_blank_lines_as_a_reader_copies_it(tmp_path):
    """pytest-codeblocks' parser drops the blank lines of a fence inside an admonition; the
    page model keeps them, so the code that runs is the code a reader copies."""
    from bookcheck.check import check_page

    path = page(tmp_path, '''\
        ??? success "Answer"

            ```python
            text = """a

            b"""

            print(repr(text))
            ```

            <!--pytest-codeblocks:expected-output-->
            ```text
            'a\\n\\nb'
            ```
        ''')
    [block] = [b for b in parse_page(path) if b.syntax == "python"]
    assert block.code == 'text = """a\n\nb"""\n\nprint(repr(text))\n'
    assert check_page(path) == []


def test_every_table_marker_is_registered_read_by_its_check_and_used(tmp_path):
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    dispatched = {s for c in markers.CHECKS if c.node == "table" for s in c.syntax}
    for comment, marker in markers.TABLE_MARKERS.items():
        assert f"<!-- {comment} -->" in pages, f"no page carries <!-- {comment} -->"
        if marker.slot:  # generated: the function that writes it, or the hook that does
            assert marker.check is None and marker.counter is None, comment
            if marker.generate:
                assert callable(markers.resolve(marker.generate)), comment
            else:
                path = ROOT / marker.checked_by.split(" (")[0]
                assert comment in path.read_text(encoding="utf-8"), f"{path} does not write <!-- {comment} -->"
            continue
        # a table: a page check the dispatcher calls, counted in the stamp
        assert comment in dispatched and callable(markers.resolve(marker.check)), comment
        assert marker.counter in counts.COUNTERS, comment
    path = page(tmp_path, """\
        # A page

        <!-- op-tabel -->
        | a |
        |---|
        | 1 |
        """)
    from bookcheck.guard import guard

    [problem] = guard(path)
    assert "<!-- op-tabel --> is not a marker any check reads" in problem


def test_the_guard_names_a_list_item_right_after_a_closing_fence(tmp_path):
    # Python-Markdown joins it to the block: the site showed "- **Saved-tensor hooks ...**" as text
    from bookcheck.guard import guard

    text = """\
        # A page

        - **One.** A block:

            ```python
            print(1)
            ```
        - **Two.** After it.
        """
    [problem] = guard(page(tmp_path, text))
    assert problem.endswith("page.md:8: text right after a closing fence is joined to the block's paragraph "
                            "(a list item there renders as '- ' text): leave a blank line"), problem
    assert guard(page(tmp_path, text.replace("```\n        - **Two", "```\n\n        - **Two"))) == []


def test_the_build_removes_every_marker_line():
    for comment in markers.TABLE_MARKERS:
        assert markers.MARKER_LINE.sub("", f"a\n<!-- {comment} -->\n| x |\n") == "a\n| x |\n", comment
    for line in ("<!--pytest-codeblocks:cont-->", '<!--pytest.mark.skip(reason="a reason here")-->'):
        assert markers.MARKER_LINE.sub("", f"a\n    {line}\nb\n") == "a\nb\n", line


def test_the_one_fence_scanner_finds_each_fence_and_what_is_prose():
    from bookcheck.model import fences, outside_fences

    lines = [
        "# Title",             # 0
        "````markdown",        # 1 a longer fence holds a shorter one
        "```python",           # 2
        "# not a heading",     # 3
        "```",                 # 4
        "````",                # 5
        "    ```text",         # 6 indented (in an admonition)
        "    out",             # 7
        "    ```",             # 8
        "~~~",                 # 9 a tilde fence (the guard reports it)
        "## inside tildes",    # 10
        "~~~",                 # 11
        "## Heading",          # 12
        "```python",           # 13 never closed
        "x = 1",               # 14
    ]
    assert fences(lines) == [(1, 5), (6, 8), (9, 11), (13, 15)]
    assert [i for i, prose in enumerate(outside_fences(lines)) if prose] == [0, 12]


def test_update_outputs_rewrites_exactly_the_edited_block_by_its_span(tmp_path):
    """tests/fixtures/pages/edited_output.md: the admonition's output block was edited (c for b);
    --update-outputs rewrites those lines of that block, indented as they were, and nothing else."""
    import difflib
    import shutil

    from bookcheck.check import page_checks

    path = tmp_path / "edited_output.md"
    shutil.copy(ROOT / "tests" / "fixtures" / "pages" / "edited_output.md", path)
    before = path.read_text(encoding="utf-8")
    printed = {}
    for check in page_checks(path, update=lambda block, shown: printed.__setitem__(block.lineno, shown)):
        check.run()
    assert printed == {15: "a\nb\n"}
    assert rewrite(path, printed) == 1
    after = path.read_text(encoding="utf-8")
    changed = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
               if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["-    c", "+    b"]
    assert check_page(path) == []


def test_front_matter_is_not_prose_and_its_comments_are_not_headings(tmp_path):
    """A page's front matter (YAML between --- lines, as mkdocs reads it) may hold comments that
    start with "# ": the model neither lists them as headings nor counts them in the stamp, and
    a page without front matter (a rule, ---, further down) keeps every line."""
    text = """\
        ---
        # links: only names that start from torch
        torch_links: full names
        ---
        # A page

        Every line below the front matter is prose.

        ## Pitfalls
        """
    path = page(tmp_path, text)
    model = Page.parse(path)
    assert model.front_matter == 4
    assert [(h.line, h.text) for h in model.headings] == [(4, "A page"), (8, "Pitfalls")]
    assert model.prose[:5] == [False, False, False, False, True]
    found, _ = counts.text_counts(path.read_text(encoding="utf-8"), path)
    assert found["headings with distinct anchors"] == 2
    plain = Page.parse(page(tmp_path, "# A page\n\n---\n\n## After a rule\n", "plain.md"))
    assert plain.front_matter == 0 and [h.text for h in plain.headings] == ["A page", "After a rule"]


def test_a_title_is_the_first_level_1_heading_of_a_page_or_of_a_notebooks_markdown(tmp_path):
    """Page.title and notebook_title read headings as the model does: front matter, a fence and a
    level-2 heading hold no title, a heading's attribute list is not its text."""
    from bookcheck.model import notebook_title

    model = Page.parse(page(tmp_path, """\
        ---
        # not a title
        description: a page
        ---
        ## A section

        ```python
        # not a title either
        ```

        # The title { #the-page }
        """))
    assert model.title == "The title"
    assert Page.parse(page(tmp_path, "## Only a section\n", "untitled.md")).title is None

    def cell(kind, *lines):
        return {"cell_type": kind, "metadata": {}, "source": [line + "\n" for line in lines],
                **({"outputs": [], "execution_count": None} if kind == "code" else {})}

    notebook = tmp_path / "n.ipynb"
    notebook.write_text(json.dumps({"cells": [
        cell("code", "# Set-up: a comment, not a heading"),
        cell("markdown", "Some text.", "", "```python", "# a fenced comment", "```"),
        cell("markdown", "## A section"),
        cell("markdown", "# The notebook's title", "", "# A later one"),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    assert notebook_title(notebook) == "The notebook's title"


def test_the_registry_dispatches_every_check_and_the_stamp_counts_it(tmp_path):
    """Each entry of bookcheck.markers.CHECKS is called on the nodes of its kind: a table kind
    and the headings check are items of the page, and counted."""
    from bookcheck.check import page_checks

    path = page(tmp_path, """\
        # A page

        <!-- broadcast-table -->
        | a | b | a + b |
        |---|---|---|
        | `(2, 1)` | `(3,)` | `(2, 3)` |

        ## Pitfalls

        ## Pitfalls
        """)
    checks = {c.name: c for c in page_checks(path)}
    assert sorted(checks) == ["guard", "headings", "line 4 broadcast-table"]
    checks["line 4 broadcast-table"].run()
    with pytest.raises(HarnessError, match=r"page\.md:10: the heading 'Pitfalls' has the anchor #pitfalls of the heading at line 8"):
        checks["headings"].run()
    found, _ = counts.text_counts(path.read_text(encoding="utf-8"), path)
    assert found["tables checked against torch"] == 1 and found["headings with distinct anchors"] == 3
    path.write_text(path.read_text(encoding="utf-8").replace("`(2, 3)` |", "`(3, 2)` |"), encoding="utf-8")
    [table] = [c for c in page_checks(path) if c.name.endswith("broadcast-table")]
    with pytest.raises(HarnessError, match=r"page\.md:3: .*the page says \(3, 2\), torch gives \(2, 3\)"):
        table.run()


def test_the_session_keeps_a_workshop_record_of_its_own():
    """bookcheck.plugin names, for every block, notebook and test the session runs, a record of
    failed workshop checks outside the repository: pages run the checker on the book's wrong
    answers, which would earn a reader's hints in .workshop/ of the repository."""
    record = Path(os.environ[RECORD_VARIABLE])
    assert record.is_dir() and ROOT.resolve() not in record.resolve().parents


def test_an_output_fence_under_a_skipped_block_is_refused_and_not_counted_as_verified(tmp_path):
    from bookcheck.guard import guard

    text = """\
        # A page

        <!--pytest.mark.skip(reason="shows an output that nothing checks")-->
        ```python
        print(1 + 1)
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        3
        ```
        """
    path = page(tmp_path, text)
    [problem] = guard(path)
    assert "page.md:4: the output fence under a skipped block is never compared" in problem, problem
    found, _ = counts.text_counts(path.read_text(encoding="utf-8"), path)
    assert found["verified outputs"] == 0 and found["skipped"] == 1, found


def test_a_default_device_left_set_is_a_leak_and_a_once_per_process_warning_reaches_every_block(tmp_path):
    leak = page(tmp_path, """\
        ```python
        import torch
        torch.set_default_device("meta")
        ```
        """, "leak.md")
    [problem] = check_page(leak)
    assert "left torch global state changed" in problem and "default device" in problem, problem
    # torch.meshgrid without indexing= warns once per process (TORCH_WARN_ONCE); a reader who runs
    # the second block alone sees the warning, so both blocks must be marked and both pass
    block = """\
        <!--pytest.mark.warns("UserWarning", match="indexing argument")-->
        ```python
        import torch
        print(len(torch.meshgrid(torch.arange(2), torch.arange(3))))
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        2
        ```
        """
    assert check_page(page(tmp_path, "# A page\n\n" + textwrap.dedent(block) + "\n" + textwrap.dedent(block),
                           "once.md")) == []


def test_a_set_of_strings_the_two_workers_order_differently_fails_and_the_message_says_why(tmp_path):
    # the two workers start with different hash seeds, as two readers' processes do
    path = page(tmp_path, """\
        ```python
        print({"a", "b"})
        ```

        <!--pytest-codeblocks:expected-output-->
        ```text
        {'a', 'b'}
        ```
        """)
    [problem] = check_page(path)
    assert "the order of a set of strings (print it sorted)" in problem, problem


def test_an_undeclared_warning_is_named_with_the_marker_that_declares_its_type(tmp_path):
    path = page(tmp_path, """\
        ```python
        import warnings
        warnings.warn("going away", FutureWarning)
        ```
        """)
    [problem] = check_page(path)
    assert 'FutureWarning: going away' in problem and '<!--pytest.mark.warns("FutureWarning", match="...")-->' in problem, \
        problem
