"""python -m snippets.explain: the error index shipped in the package is the site's (current
with the pages); every indexed message, alone, in a real traceback, or with other shapes,
numbers and node names, finds its own entry first; the messages readers paste
(tests/fixtures/error_pastes.toml) find their entry, a GPU error is reported as named and not
shown, and a message the book does not show finds nothing; an unknown message exits 1."""

import re
import subprocess
import sys
import traceback

import pytest

import pastes
from bookcheck import DOCS
from bookbuild import indexes
from snippets import explain

PAGES = sorted(DOCS.rglob("*.md"))
ENTRIES = explain._entries()
CASES = pastes.cases()


def test_the_packaged_index_is_the_pages_index():
    assert indexes.PACKAGED.read_text(encoding="utf-8") == indexes.packaged(PAGES), (
        "snippets/error_index.json is out of date with the pages: run python -m bookbuild.indexes")
    assert len([e for e in ENTRIES if e["kind"] != "named"]) >= 80
    assert len({e["address"] for e in ENTRIES}) == len(ENTRIES), "two entries share an anchor"


def _first(text):
    found = explain.explain(text)
    return found[0]["address"] if found else None


def _printed(line):
    """``line`` (``Type: message``) as Python prints it at the end of a traceback."""
    kind, _, message = line.partition(": ")
    error = type(kind.rsplit(".", 1)[-1], (Exception,), {})(message)
    try:
        raise error
    except Exception as exc:  # noqa: BLE001 - formatted as Python prints it
        return "".join(traceback.format_exception(exc))


def test_every_error_message_finds_its_entry_first_alone_and_in_a_traceback():
    checked = 0
    for entry in ENTRIES:
        if entry["kind"] != "error":
            continue
        for line in entry["messages"]:
            if ": " not in line:
                continue  # an asserted fragment of a warning, merged into this message
            assert _first(line) == entry["address"], line
            assert _first(_printed(line)) == entry["address"], line
            checked += 1
    assert checked >= 80


def _other_values(line):
    """``line`` with other numbers, shapes, tensor types and node names, and torch's hint."""
    line = re.sub(r"\b\d+\b", lambda m: str(int(m.group()) + 3), line)
    line = re.sub(r"\b\w*Backward\d*\b", "GatherBackward7", line)
    line = line.replace("torch.FloatTensor", "torch.cuda.HalfTensor").replace("torch.DoubleTensor", "torch.cuda.FloatTensor")
    return line + " Hint: enable anomaly detection to find the operation that failed to compute its gradient, " \
                  "with torch.autograd.set_detect_anomaly(True)."


def test_a_message_with_other_values_finds_its_entry_first():
    changed = 0
    for entry in ENTRIES:
        if entry["kind"] != "error":
            continue
        for line in (m for m in entry["messages"] if ": " in m):
            other = _other_values(line)
            changed += other.split(" Hint:")[0] != line
            assert _first(other) == entry["address"], other
    assert changed >= 40


def test_every_warning_is_found_from_the_line_python_prints():
    checked = 0
    for entry in ENTRIES:
        if entry["kind"] == "named":
            continue
        for fragment in (m for m in entry["messages"] if ": " not in m or entry["kind"] == "warning"):
            line = f"/path/to/train.py:12: {entry['type']}: the start of it, {fragment}, the end of it"
            assert _first(line) == entry["address"], line
            checked += 1
    assert checked >= 10


def test_every_older_wording_names_a_message_the_book_shows_and_finds_it():
    assert len(explain.ALIASES) >= 4
    for fragment, old, versions in explain.ALIASES:
        owners = [e for e in ENTRIES if any(fragment in m for m in e["messages"])]
        assert len(owners) == 1, f"{fragment!r} is in {len(owners)} entries: an alias names one message"
        assert any(a["message"] == old and a["torch"] == versions for a in owners[0]["aliases"]), old
        assert re.fullmatch(r"torch \d+\.\d+.*", versions), versions
        assert _first(f"RuntimeError: {old}") == owners[0]["address"] or _first(f"UserWarning: {old}") == owners[0]["address"]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_message_as_a_reader_pastes_it(case):
    found = [e["address"] for e in explain.explain(case.paste)]
    hint = "; does a block show it now? make the case shown" if case.expect == "absent" else ""
    assert pastes.outcome(case, found, ENTRIES) == "right", f"found {found[:3]}, expected " \
        f"{[e['address'] for e in pastes.expected(case, ENTRIES)]}{hint}"
    first = explain.explain(case.paste)[:1]
    assert [e["kind"] == "named" for e in first] == ([True] if case.expect == "named" else [False] * len(first))


def test_the_message_set_is_large_and_varied():
    assert len(CASES) >= 30
    assert sum(c.expect != "shown" for c in CASES) >= 8
    assert sum("File \"" in c.paste for c in CASES) >= 8  # tracebacks
    assert sum("Hint:" in c.paste for c in CASES) >= 3
    for case in CASES:
        shown = [m for e in pastes.expected(case, ENTRIES) for m in e["messages"]]
        assert case.paste not in shown, f"{case.id}: the book's own line; vary it as a reader's run would"


def test_the_command_line_reads_a_traceback_and_says_when_nothing_matches():
    traceback_text = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
                      "    loss.backward()\n" + next(e["message"] for e in ENTRIES if "second time" in e["message"]))
    done = subprocess.run([sys.executable, "-m", "snippets.explain"], input=traceback_text, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "shown in" in done.stdout and "cause:" in done.stdout, done
    assert "reference/errors/#runtimeerror-trying-to-backward-through-the-graph" in done.stdout, done.stdout
    assert "printed by torch 1.5 and earlier as:" in done.stdout, done.stdout
    done = subprocess.run([sys.executable, "-m", "snippets.explain", "KeyError: 'learning_rate'"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == "No error of the book's list matches this one: KeyError: 'learning_rate'\n", done
    done = subprocess.run([sys.executable, "-m", "snippets.explain"], input="", capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "give an error message" in done.stderr, done


def test_a_gpu_error_is_named_and_not_shown():
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 15.77 GiB"
    found = explain.explain(oom)
    assert [e["kind"] for e in found] == ["named"] and found[0]["address"] == "reference/errors/#gpu-cuda-out-of-memory"
    assert not found[0]["shown"] and found[0]["check"]
    done = subprocess.run([sys.executable, "-m", "snippets.explain", oom], capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    assert done.returncode == 1 and lines[0] == f"No block of the book shows this error: {oom}", done
    assert lines[1] == "It needs a GPU, and the book's blocks run on CPU; the book names it, with what to check:", lines
    assert "what to check:" in done.stdout, done.stdout
    assert "reference/errors/#gpu-cuda-out-of-memory" in done.stdout and "shown in" not in done.stdout, done.stdout


@pytest.mark.parametrize("message, anchor", [
    ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, "
     "k, &alpha, a, lda, b, ldb, &beta, c, ldc)`", "gpu-cublas-status"),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
     "non-contiguous input.", "gpu-cudnn-status"),
    ("torch.AcceleratorError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously "
     "reported at some other API call", "gpu-device-side-assert"),
])
def test_each_gpu_library_s_error_finds_its_own_entry_first(message, anchor):
    found = explain.explain(message)
    assert found and found[0]["address"] == f"reference/errors/#{anchor}", [e["address"] for e in found]


def test_a_type_name_alone_matches_no_gpu_error():
    # a type named in an entry's prose (torch.AcceleratorError is a RuntimeError) is not a message
    found = explain.explain("RuntimeError: Caught RuntimeError in DataLoader worker process 0.")
    assert all(e["kind"] != "named" for e in found), [e["address"] for e in found]


def test_normalise_drops_the_hint_and_replaces_what_varies():
    kind, words = explain.normalise(
        "x.py:3: UserWarning: nothing\nRuntimeError: one of the variables needed for gradient computation has been "
        "modified by an inplace operation: [torch.cuda.FloatTensor [64, 128]], which is output 0 of ReluBackward0, "
        "is at version 2; expected version 1 instead. Hint: enable anomaly detection")
    assert kind == "RuntimeError"
    assert words[-9:] == ["_tensor_", "is", "at", "version", "_num_", "expected", "version", "_num_", "instead"]
    assert explain.normalise("Function 'PowBackward1' returned nan values in its 1th output.")[1] == \
        ["function", "_node_", "returned", "nan", "values", "in", "its", "_nth_", "output"]
    assert explain.normalise("no error named here") == ("", ["no", "error", "named", "here"])


@pytest.mark.parametrize("bad, error, message", [(3, TypeError, "must be an error message"),
                                                 ("  \n", ValueError, "text is empty")])
def test_explain_rejects_what_is_not_a_message(bad, error, message):
    with pytest.raises(error, match=message):
        explain.explain(bad)


def test_torchruns_last_error_line_with_its_message_below_it_is_passed_over():
    """torchrun ends a failed job with ``ChildFailedError:`` and a summary on the lines after it:
    the rank's own error, printed above, is the one to look up."""
    (entry, line), = [(e, m) for e in ENTRIES for m in e["messages"]
                      if m.startswith("RuntimeError: Expected to have finished reduction")][:1]
    ranks = "".join(f"[rank0]: {row}\n" for row in _printed(line).splitlines())
    text = (ranks + "Traceback (most recent call last):\n  File \"/usr/bin/torchrun\", line 8, in <module>\n"
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
            "============================================================\nscript.py FAILED\n")
    assert _first(text) == entry["address"]
