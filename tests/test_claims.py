"""The general sentences of the prose (bookcheck/claims.py): every one is shown by a block,
linked to one, or reviewed; and the listing can fail."""

import time

import pytest

from bookcheck import claims

UNSHOWN = """# A page

## Saving

Every tensor that a backward needs is saved in its node.

Some unrelated text.
"""

BLOCK = """
```python
print(1)
```

<!--pytest-codeblocks:expected-output-->
```text
1
```
"""


def listing(tmp_path, text, reviews=(), name="page.md"):
    page = tmp_path / name
    page.write_text(text, encoding="utf-8")
    book = claims.Book([page])
    return claims.classify(book, list(reviews))


def test_every_general_sentence_of_the_book_is_shown_linked_or_reviewed():
    start = time.perf_counter()
    book = claims.Book()
    sentences, problems = claims.classify(book, claims.load_reviews())
    elapsed = time.perf_counter() - start
    open_ = [f"{s.page}:{s.line}: {s.text}" for s in sentences
             if s.result == "open" and not claims.under_rewrite(s.page)]
    assert not problems, "\n".join(problems)
    assert not open_, ("general sentences that no block shows (show, link or review each one; "
                       "python -m bookcheck.claims lists them):\n" + "\n".join(open_))
    assert len(sentences) > 500  # the scan read the book's prose, not nothing
    assert elapsed < 5, f"the listing took {elapsed:.1f} s; it is a page scan and must stay fast"


def test_an_unshown_general_sentence_is_listed_and_a_block_after_it_shows_it(tmp_path):
    sentences, problems = listing(tmp_path, UNSHOWN)
    assert [(s.line, s.result) for s in sentences] == [(5, "open")]
    assert sentences[0].text == "Every tensor that a backward needs is saved in its node."
    assert not problems
    shown, _ = listing(tmp_path, UNSHOWN + BLOCK)
    assert [s.result for s in shown] == ["shown"]


def test_a_block_in_another_section_or_far_away_does_not_show_it(tmp_path):
    other_section, _ = listing(tmp_path, UNSHOWN + "\n## Elsewhere\n" + BLOCK)
    assert [s.result for s in other_section] == ["open"]
    far = UNSHOWN + "\n".join(f"Line {n} of prose." for n in range(claims.WINDOW + 1)) + "\n" + BLOCK
    far_away, _ = listing(tmp_path, far)
    assert [s.result for s in far_away] == ["open"]


@pytest.mark.parametrize("text, general", [
    ("Autograd never saves this.", True),
    ("Only a leaf that requires grad is refused.", True),
    ("`x.view(-1)` raises here.", True),
    ("Every tensor carries a counter.", True),
    ("The sum adds a term for every element.", False),  # a quantifier inside a phrase
    ("Call `torch.all(x)` on it.", False),  # inline code is not prose
    ("Run it under no grad mode.", False),
])
def test_which_sentences_are_general(tmp_path, text, general):
    sentences, _ = listing(tmp_path, f"# T\n\n{text}\n")
    assert bool(sentences) is general


def test_a_link_to_a_section_with_a_block_shows_it(tmp_path):
    text = UNSHOWN.replace("in its node.", "in its node ([shown here](#where)).") + \
        "\n" + "\n".join(f"Line {n}." for n in range(10)) + "\n\n## Where\n" + BLOCK
    sentences, _ = listing(tmp_path, text)
    assert [s.result for s in sentences] == ["linked"]
    no_block = text.replace(BLOCK, "\nPlain text here.\n")
    sentences, _ = listing(tmp_path, no_block)
    assert [s.result for s in sentences] == ["open"]


def test_reviews_resolve_entries_and_stale_or_malformed_reviews_fail(tmp_path):
    page = str(tmp_path / "page.md")
    sentence = "Every tensor that a backward needs is saved in its node."
    reviewed, problems = listing(tmp_path, UNSHOWN, [
        {"page": page, "sentence": "every  TENSOR that a backward needs is saved in its node.",
         "kind": "definition", "why": "says what saving means"}])
    assert [s.result for s in reviewed] == ["reviewed"] and not problems
    _, problems = listing(tmp_path, UNSHOWN, [
        {"page": page, "sentence": sentence, "kind": "definition", "why": "x"},
        {"page": page, "sentence": "A sentence that was reworded.", "kind": "advice", "why": "x"}])
    assert any("stale review" in p for p in problems)
    _, problems = listing(tmp_path, UNSHOWN, [{"page": page, "sentence": sentence, "kind": "because"}])
    assert any("give shown_by" in p for p in problems)
    _, problems = listing(tmp_path, UNSHOWN, [{"page": page, "sentence": sentence, "shown_by": page + "#saving"}])
    assert any("not a section that holds a run block" in p for p in problems)


def test_one_review_names_every_page_that_shares_its_sentence_and_each_must_hold_it(tmp_path):
    sentence = "Every tensor that a backward needs is saved in its node."
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text(UNSHOWN, encoding="utf-8")
    second.write_text(UNSHOWN, encoding="utf-8")
    review = {"pages": [str(first), str(second)], "sentence": sentence, "kind": "definition", "why": "x"}
    found, problems = claims.classify(claims.Book([first, second]), [review])
    assert [s.result for s in found] == ["reviewed", "reviewed"] and not problems
    second.write_text(UNSHOWN.replace(sentence, "Every tensor is saved."), encoding="utf-8")
    _, problems = claims.classify(claims.Book([first, second]), [review])
    assert problems == [f"{claims.rel(claims.REVIEWED)}: stale review, no longer on {second}: {sentence!r}"]
    for bad in ({**review, "pages": []}, {**review, "pages": str(first)}, {**review, "page": str(first)}):
        found, problems = claims.classify(claims.Book([first]), [bad])
        assert [s.result for s in found] == ["open"] and "either page (a path) or pages" in problems[0], bad


def test_the_reviews_name_blocks_that_exist():
    book = claims.Book()
    for review in claims.load_reviews():
        if "shown_by" in review:
            assert book.anchor_holds_block(review["shown_by"]), review


def test_the_glossary_says_when_batch_norm_mixes_the_examples_of_a_batch():
    # It mixes them only when it normalises with its batch's statistics: in training mode, or
    # without running statistics; in eval mode with running statistics accumulation is exact.
    text = (claims.DOCS / "reference" / "glossary.md").read_text(encoding="utf-8")
    entry = text[text.index("\nmicro-batch\n"):]
    entry = " ".join(entry[:entry.index("\n\n", 2)].split())
    assert "in training mode" in entry and "`track_running_stats=False`" in entry, entry
    assert "accumulation is exact" in entry and "accumulation-at-scale.md#pitfalls" in entry, entry
    shown = (claims.DOCS / "part2" / "accumulation-at-scale.md").read_text(encoding="utf-8")
    for line in ("train: 4 micro-batches give the full-batch gradient: False",
                 "eval : 4 micro-batches give the full-batch gradient: True",
                 "eval, no running statistics: 4 micro-batches give the full-batch gradient: False"):
        assert line in shown, line


def test_a_link_resolves_to_the_anchor_of_the_sites_table_of_contents(tmp_path):
    """Sections and anchors are the page model's (Python-Markdown's toc, as the site makes
    them): "Sums &amp; products" is #sums-products, and a repeated heading gets _1."""
    text = ("# T\n\n## Where\n\nEvery tensor is saved, as [sums](#sums-products) and [again](#again_1) show.\n\n"
            "## Sums &amp; products\n" + BLOCK + "\n## Again\n\nProse.\n\n## Again\n" + BLOCK)
    page = claims.read_page(tmp_path / "page.md", text)
    assert [s.heading.anchor for s in page.sections] == ["t", "where", "sums-products", "again", "again_1"]
    assert claims.section_has_run_block(page, "sums-products") and claims.section_has_run_block(page, "again_1")
    assert not claims.section_has_run_block(page, "again")
    sentences, _ = listing(tmp_path, text)
    assert [(s.result, s.how) for s in sentences] == [("linked", "#sums-products")]


def test_a_notebooks_markdown_cells_are_prose_and_its_code_cells_show_them(tmp_path):
    """A notebook of docs/ is read too: a general sentence of a Markdown cell is placed at its
    cell, a code cell shows it, a fence inside a Markdown cell and the set-up cell do not, and a
    link to a page's address on the site (../../page/#anchor, from notebooks/<name>/) counts."""
    import json

    def notebook(*cells):
        kinds = {"md": "markdown", "py": "code"}
        return json.dumps({"cells": [{"cell_type": kinds[k], "source": s, "metadata": {}} for k, s in cells]})

    (tmp_path / "docs" / "notebooks").mkdir(parents=True)
    (tmp_path / "docs" / "part1").mkdir()
    target = tmp_path / "docs" / "part1" / "saving.md"
    target.write_text("# Saving\n\n## Saved tensors\n" + BLOCK, encoding="utf-8")
    path = tmp_path / "docs" / "notebooks" / "n.ipynb"
    path.write_text(notebook(
        ("md", "# A notebook\n\nEvery tensor that a backward needs is saved."),
        ("py", "# Set-up: torch\nimport torch"),
        ("md", "## Later\n\nEvery node is freed after backward.\n\n```python\nx = 1\n```"),
        ("md", "## Linked\n\nNo node is kept, as [saving](../../part1/saving/#saved-tensors) shows."),
        ("md", "## Shown\n\nEvery cell below runs."),
        ("py", "print(1)"),
    ), encoding="utf-8")
    book = claims.Book([path, target])
    sentences, problems = claims.classify(book, [])
    found = [(s.where.rsplit("/", 1)[-1], s.result) for s in sentences if s.page.endswith(".ipynb")]
    assert found == [("n.ipynb, cell 1", "open"), ("n.ipynb, cell 3", "open"),
                     ("n.ipynb, cell 4", "linked"), ("n.ipynb, cell 5", "shown")], found
    shown = next(s for s in sentences if s.result == "shown")
    assert shown.how.endswith("n.ipynb, cell 6")
