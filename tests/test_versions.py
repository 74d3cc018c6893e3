"""Two verified torch versions (bookcheck/versions.py): a block whose output differs on the
other version shows both, in tabs; run on a version, a block is compared with what the page
shows for it; the guard rejects tabs that lie; --update-outputs writes them; the differences
page lists them."""

import textwrap

import pytest

from bookcheck import HarnessError, ROOT, run, update, versions
from bookbuild import indexes
from bookcheck.guard import guard
from bookcheck.model import parse_page
from bookcheck.run import check_block

OTHER = versions.also()[0]
PINNED = versions.pinned()

TABBED = f'''\
    # A page

    ```python
    print("new")
    ```

    === "torch {PINNED}"

        <!--pytest-codeblocks:expected-output-->
        ```text
        old
        ```

    === "torch {OTHER}"

        <!--pytest.mark.output_on("{OTHER}")-->
        ```text
        new
        ```
    '''

PLAIN = '''\
    # A page

    ```python
    print("new")
    ```

    <!--pytest-codeblocks:expected-output-->
    ```text
    old
    ```
    '''


def page(tmp_path, text, name="page.md"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def on(monkeypatch, version):
    monkeypatch.setattr(run, "running", lambda: version)


def test_the_versions_come_from_mkdocs_yml_and_differ():
    assert PINNED == "2.13.0" and OTHER == "2.14.1"
    assert PINNED not in versions.also()


def test_a_block_is_compared_with_the_output_its_page_shows_for_the_running_version(tmp_path, monkeypatch):
    path = page(tmp_path, TABBED)
    assert guard(path) == []
    blocks = parse_page(path)
    block = blocks[0]
    assert block.outputs == {OTHER: "new\n"} and block.expected_output == "old\n"
    on(monkeypatch, OTHER)
    check_block(blocks, block)  # prints "new": what the page shows for OTHER
    on(monkeypatch, PINNED)
    with pytest.raises(HarnessError, match="differs from the real output"):
        check_block(blocks, block)  # prints "new", the page shows "old" for the pinned version


def test_a_difference_the_page_does_not_show_fails_on_the_other_version(tmp_path, monkeypatch):
    path = page(tmp_path, PLAIN.replace("old", "new"))
    blocks = parse_page(path)
    on(monkeypatch, OTHER)
    check_block(blocks, blocks[0])  # the same on both: one output, no tabs
    path = page(tmp_path, PLAIN)
    blocks = parse_page(path)
    with pytest.raises(HarnessError, match="differs from the real output"):
        check_block(blocks, blocks[0])


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace(f'output_on("{OTHER}")', 'output_on("2.99.0")'), "the other verified versions are"),
    (lambda t: t.replace("\n    new\n", "\n    old\n"), "the same output as on torch"),
    (lambda t: t.replace(f'=== "torch {OTHER}"', '=== "newer torch"'), f'content tab === "torch {OTHER}"'),
    (lambda t: t.replace(f'=== "torch {PINNED}"', '=== "older"'), f'content tab === "torch {PINNED}"'),
    (lambda t: t.replace("<!--pytest-codeblocks:expected-output-->", ""), "must follow the output block"),
])
def test_the_guard_rejects_a_version_output_that_is_not_shown_as_one(tmp_path, change, message):
    path = page(tmp_path, change(textwrap.dedent(TABBED)))
    problems = guard(path)
    assert any(message in p for p in problems), problems


def test_update_outputs_on_the_other_version_writes_the_tabs_and_keeps_the_pinned_output(tmp_path, monkeypatch):
    path = page(tmp_path, PLAIN)
    monkeypatch.setattr(versions, "running", lambda: OTHER)
    update.rewrite(path, {3: "new\n"})
    assert path.read_text(encoding="utf-8") == textwrap.dedent(TABBED)
    assert guard(path) == []
    update.rewrite(path, {3: "newer\n"})  # tabs already there: only that version's text changes
    assert parse_page(path)[0].outputs == {OTHER: "newer\n"} and parse_page(path)[0].expected_output == "old\n"


def test_the_differences_table_lists_each_tabbed_block_with_the_lines_that_differ(tmp_path):
    path = page(tmp_path, TABBED.replace("    # A page", "    # A page\n\n    ## A section"))
    table = indexes.differences_table(tmp_path / "differences.md", [path])
    assert f"| Where | torch {PINNED} prints | torch {OTHER} prints |" in table
    assert "| [A page: A section](page.md#a-section) | `old` | `new` |" in table
    assert "No block" in indexes.differences_table(tmp_path / "d.md", [page(tmp_path, PLAIN, "plain.md")])


def test_every_tabbed_block_of_the_book_is_on_the_differences_page():
    pages = sorted((ROOT / "docs").rglob("*.md"))
    found = indexes.differences(pages)
    tabbed = sum(len(b.outputs) for p in pages for b in parse_page(p))
    assert len(found) == tabbed >= 5
    assert "<!-- torch-differences -->" in (ROOT / "docs" / "reference" / "torch-versions.md").read_text()


def test_the_venv_set_up_reads_the_pins_with_python_alone():
    """`make torch-venvs` runs tools.torch_venvs (and bookcheck.versions) with Python alone, before the book's venv exists:
    with mkdocs and yaml unimportable, its command line still lists the versions to set up."""
    import subprocess
    import sys

    code = ("import sys; sys.modules.update(mkdocs=None, yaml=None); sys.argv = ['torch_venvs', 'venv', '--help']\n"
            "import runpy; runpy.run_module('tools.torch_venvs', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
