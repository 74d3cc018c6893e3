"""python -m snippets.explain: the error index shipped in the package is the site's (current
with the pages), and every indexed message, alone or as the last line of a real traceback,
finds its own entry first; an unknown message exits 1."""

import re
import subprocess
import sys
import traceback

import pytest

from bookcheck import DOCS, indexes
from snippets import explain

PAGES = sorted(DOCS.rglob("*.md"))
ENTRIES = explain._entries()


def test_the_packaged_index_is_the_pages_index():
    assert indexes.PACKAGED.read_text(encoding="utf-8") == indexes.packaged(PAGES), (
        "snippets/error_index.json is out of date with the pages: run python -m bookcheck.indexes")
    assert len(ENTRIES) >= 80


def _same(found, entry):
    return found and found[0]["message"] == entry["message"] and found[0]["type"] == entry["type"]


def test_every_error_message_finds_its_entry_first_alone_and_in_a_traceback():
    errors = [e for e in ENTRIES if e["kind"] == "error"]
    for entry in errors:
        assert _same(explain.explain(entry["message"]), entry), entry["message"]
        kind, _, message = entry["message"].partition(": ")
        error = type(kind.rsplit(".", 1)[-1], (Exception,), {})(message)
        try:
            raise error
        except Exception as exc:  # noqa: BLE001 - formatted as Python prints it
            text = "".join(traceback.format_exception(exc))
        assert _same(explain.explain(text), entry), text


def test_every_warning_is_found_from_the_line_python_prints():
    warnings_ = [e for e in ENTRIES if e["kind"] == "warning"]
    checked = 0
    for entry in warnings_:
        sample = re.sub(r"\\(.)", r"\1", entry["message"])  # the asserted fragment, unescaped
        if not re.search(entry["message"], sample):
            continue  # a pattern with regex syntax beyond escapes
        line = f"/path/to/train.py:12: {entry['type']}: the start of it, {sample}, the end of it"
        found = explain.explain(line)
        assert any(f["message"] == entry["message"] for f in found), line
        checked += 1
    assert checked >= 0.8 * len(warnings_) and checked >= 10


def test_the_command_line_reads_a_traceback_and_says_when_nothing_matches():
    traceback_text = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
                      "    loss.backward()\n" + next(e["message"] for e in ENTRIES if "second time" in e["message"]))
    done = subprocess.run([sys.executable, "-m", "snippets.explain"], input=traceback_text, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "shown in" in done.stdout and "cause:" in done.stdout, done
    done = subprocess.run([sys.executable, "-m", "snippets.explain", "KeyError: 'learning_rate'"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout.startswith("No page of the book shows this error"), done
    done = subprocess.run([sys.executable, "-m", "snippets.explain"], input="", capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "give an error message" in done.stderr, done


@pytest.mark.parametrize("bad, error, message", [(3, TypeError, "must be an error message"),
                                                 ("  \n", ValueError, "text is empty")])
def test_explain_rejects_what_is_not_a_message(bad, error, message):
    with pytest.raises(error, match=message):
        explain.explain(bad)
