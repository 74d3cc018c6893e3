"""The page stamp's wording (overrides/partials/book-stamp.html), for every count it words in the
singular and the plural: each page of small fixtures goes through the build's hook
(overrides/hooks.py on_page_markdown, which writes page.meta.book_stamp from bookcheck.counts),
then the template is rendered with Jinja as the theme renders it. tests/test_site.py checks the
stamps of the built book against its pages' counts; few of its pages hold one table or one
expected error, so those wordings are shown here."""

import importlib.util
import re
import types

import jinja2
import pytest

from bookcheck import ROOT

spec = importlib.util.spec_from_file_location("book_hooks", ROOT / "overrides" / "hooks.py")
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)

BUILD = {"commit": "0123456789", "date": "2026-12-05", "verified": None,
         "also": [{"version": "2.14.1", "verified": None}]}
PY = "```python\nprint(1)\n```\n\n<!--pytest-codeblocks:expected-output-->\n```text\n1\n```\n\n"
RAISES = '<!--pytest.mark.raises("ValueError", match="bad")-->\n```python\nraise ValueError("bad")\n```\n\n'
SH = "```sh\necho 1\n```\n\n"
TABLE = """<!-- hand-trace: forward -->
| Node | Expression | Value |
|------|------------|-------|
| `a` | `2.0` | 2 |

"""


def stamp(tmp_path, markdown, monkeypatch):
    monkeypatch.setattr(hooks, "BUILD", BUILD)
    path = tmp_path / "page.md"
    path.write_text(markdown, encoding="utf-8")
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri="page.md", abs_src_path=str(path)), meta={},
                                 nb_url=None)
    hooks.on_page_markdown(markdown, page, {"docs_dir": str(tmp_path)}, None)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(ROOT / "overrides"))
    html = env.get_template("partials/book-stamp.html").render(page=page, config={"extra": {"torch_version": "2.13.0"}})
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.mark.parametrize("markdown, wording", [
    ("# P\n\n" + PY, ["The code block on this page is run by the book's test suite on torch 2.13.0, "
                      "and again on torch 2.14.1 (CPU).", "1 output shown is compared with what the blocks print."]),
    ("# P\n\n" + PY + PY, ["All 2 code blocks on this page are run", "2 outputs shown are compared"]),
    ("# P\n\n" + PY + SH, ["All 2 code blocks on this page are run by the book's test suite on torch 2.13.0, "
                           "and its 1 Python block again on torch 2.14.1 (CPU)."]),
    ("# P\n\n" + SH, ["The code block on this page is run by the book's test suite on torch 2.13.0 (CPU)."]),
    ("# P\n\n" + PY + RAISES, ["and 1 block must raise the error it shows."]),
    ("# P\n\n" + RAISES + RAISES, ["0 outputs shown are compared with what the blocks print, "
                                   "and 2 blocks must raise the error they show."]),
    ("# P\n\n" + PY + TABLE, ["Every number of its hand-trace table is recomputed with torch."]),
    ("# P\n\n" + PY + TABLE + TABLE, ["Every number of its 2 hand-trace tables is recomputed with torch."]),
    ("# P\n\n" + PY + '<!--pytest.mark.skip(reason="needs a GPU")-->\n```python\nx = 1\n```\n\n',
     ["1 of the 2 code blocks on this page is run", "1 is not: needs a GPU."]),
    ("# P\n\n" + PY + "Built on 2026-12-05.\n", ["Built on 2026-12-05 from commit 0123456789."]),
])
def test_the_stamp_words_each_count(tmp_path, monkeypatch, markdown, wording):
    text = stamp(tmp_path, markdown, monkeypatch)
    for words in wording:
        assert words in text, text
    assert "1 blocks" not in text and "1 outputs" not in text and "1 tables" not in text, text


def test_a_page_without_code_has_no_stamp(tmp_path, monkeypatch):
    assert stamp(tmp_path, "# P\n\n" + TABLE, monkeypatch) == ""
