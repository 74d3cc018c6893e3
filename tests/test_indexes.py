"""The generated indexes (bookbuild/indexes.py): every error and warning a block demonstrates
has an entry, every entry has a block, and the failure table's cause and fix reach the entries
it has a row for; the book's links to PyTorch's documentation name the verified version."""

import re

from bookcheck import DOCS

from bookbuild import indexes
from bookcheck.model import parse_page

PAGES = sorted(DOCS.rglob("*.md"))


def demonstrated():
    """(kind, type, page, line) of every block that raises or warns on purpose."""
    found = []
    for path in PAGES:
        for b in parse_page(path):
            if b.kind == "run":
                for kind, mark in (("error", b.mark("raises")), ("warning", b.mark("warns"))):
                    if mark is not None:
                        found.append((kind, str(mark.args[0]).rsplit(".", 1)[-1], b))
    return found


def test_every_demonstrated_error_and_warning_has_an_entry_and_every_entry_a_block():
    entries = indexes.errors(PAGES)
    blocks = demonstrated()
    assert len(blocks) >= 130 and len(entries) >= 80
    for kind, type_name, b in blocks:
        matching = [e for e in entries if e.type == type_name and any(s.path == b.path for s in e.where)]
        assert matching, f"{b.where}: its {kind} {type_name} has no entry"
        if kind == "error":
            assert any(m in (b.expected_output or "") for e in matching for m in e.messages), b.where
        else:
            for fragment in indexes._fragments(b.mark("warns").kwargs["match"]):
                assert any(fragment in e.messages for e in matching), (b.where, fragment)
    for e in entries:
        assert e.where, e
    text = indexes.error_index(DOCS / "reference" / "errors.md", PAGES)
    assert text.count("### ") == len(entries)
    anchors = re.findall(r"^### .* \{ #([\w-]+) \}$", text, re.M)
    assert len(anchors) == len(entries) == len(set(anchors)), "every error needs a heading with an anchor of its own"


def test_blocks_that_show_one_error_with_other_shapes_share_its_entry():
    """The version counter's error is shown with several tensors and node names: one entry, one heading."""
    entries = indexes.errors(PAGES)
    version = [e for e in entries if "modified by an inplace operation" in e.message]
    assert len(version) == 1 and len(version[0].messages) >= 3, [e.message for e in version]
    assert len({s.path for s in version[0].where}) >= 3
    assert "Hint:" not in version[0].heading and "Hint:" in " ".join(version[0].messages)


def test_the_gpu_errors_are_named_by_hand_with_what_to_check():
    named = indexes.named()
    assert len(named) >= 4
    generated = {e.anchor for e in indexes.errors(PAGES)}
    for e in named:
        assert e.anchor.startswith("gpu-") and e.anchor not in generated and e.check and e.key, e
        assert not e.where, f"{e.message}: a named error has no block; it needs a GPU"


def test_the_failure_table_gives_its_cause_and_fix_to_the_messages_it_lists():
    rows = indexes.failure_rows()
    assert len(rows) >= 5
    entries = indexes.errors(PAGES)
    inplace = [e for e in entries if "modified by an inplace operation" in e.message]
    assert inplace and all("in-place op changed a tensor" in e.cause for e in inplace)
    for type_name, fragments, cause, fix in rows:
        hits = [e for e in entries if e.type == type_name and all(f in e.message for f in fragments)]
        assert hits, f"no block of the book shows the failure table's {type_name}: {fragments}"


def test_a_link_in_the_failure_tables_cause_or_fix_still_leads_there_from_the_page_of_errors():
    page = indexes.error_index(indexes.ERRORS_PAGE, PAGES)
    links = re.findall(r"^Cause: .*?\]\(([^)]+)\)", page, re.M)
    assert links, "no row of the failure table links a section in its cause or fix"
    for link in re.findall(r"\]\(([^)#]+\.md)[^)]*\)", "\n".join(l for l in page.splitlines() if l.startswith("Cause: "))):
        assert (indexes.ERRORS_PAGE.parent / link).resolve().is_file(), link
    assert indexes._rebase("[a](x.md#b) [c](#d) [e](https://f)", DOCS / "part1" / "p.md", DOCS / "reference" / "q.md") == \
        "[a](../part1/x.md#b) [c](#d) [e](https://f)"


def test_links_to_pytorch_docs_name_the_verified_version():
    from bookcheck import versions

    minor = ".".join(versions.pinned().split(".")[:2])
    for path in PAGES:
        for link in re.findall(r"https://docs\.pytorch\.org/docs/([^/]+)/", path.read_text(encoding="utf-8")):
            assert link == minor, f"{path}: a link to the docs of {link!r}; the book is verified on {minor}"


def test_errors_reads_again_only_a_page_that_changed_and_a_caller_cannot_change_what_it_keeps(tmp_path):
    page = tmp_path / "page.md"
    page.write_text('# A page\n\n## Leaves\n\n<!--pytest.mark.raises("RuntimeError", match="a leaf")-->\n'
                    "```python\nraise RuntimeError('a leaf')\n```\n\n<!--pytest-codeblocks:expected-output-->\n"
                    "```text\nRuntimeError: a leaf Variable that requires grad\n```\n", encoding="utf-8")
    [entry] = indexes.errors([page])
    assert (entry.message, entry.where[0].anchor) == ("RuntimeError: a leaf Variable that requires grad", "leaves")
    entry.messages.append("changed by a caller")
    entry.where[0].section = "changed by a caller"
    [again] = indexes.errors([page])
    assert again.messages == ["RuntimeError: a leaf Variable that requires grad"] and again.where[0].section == "Leaves"
    page.write_text(page.read_text(encoding="utf-8").replace("## Leaves", "## Leaf tensors"), encoding="utf-8")
    [edited] = indexes.errors([page])
    assert (edited.where[0].section, edited.where[0].anchor) == ("Leaf tensors", "leaf-tensors")
