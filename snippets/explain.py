"""Which page of the book shows your error: ``python -m snippets.explain``.

Give it an error message, or paste a whole traceback on standard input:

    python -m snippets.explain "RuntimeError: Trying to backward through the graph a second time"
    python train.py 2>&1 | python -m snippets.explain

It reads the book's index of every error and warning its pages demonstrate (the same list as
the site's page "Every error the book shows", shipped in this package), and prints the entries
that match: the message as the book shows it, the cause and the fix where the book's failure
table gives them, and the page that reproduces it (an address relative to the book's site).
It works offline. With no match it says so and exits with status 1. An error that only a GPU
raises (CUDA out of memory, a device-side assert, cuDNN, tensors on two devices) is named on
that page with what to check, but no block can show it: it is printed as such, with status 1.

A message is compared by the words that stay the same from one run to the next: the last line
that names an error (``RuntimeError: ...``, or ``file:line: UserWarning: ...``; not torchrun's
``ChildFailedError``) is taken from a traceback, the hint torch appends is dropped, and shapes,
numbers, dtypes, tensor types, node names (``MulBackward0``) and quoted names are replaced by
placeholders (``RULES``). Older torch wordings of a message the book shows are known too
(``ALIASES``).

``explain(text)`` returns the matching entries, best first, as dicts; an entry of ``kind``
"named" is a GPU error the book names but does not show. ``normalise(text)`` returns the
error's type and its words as they are compared.
"""

import json
import re
import sys
from pathlib import Path

INDEX = Path(__file__).with_name("error_index.json")
CUTOFF = 0.6  # share of words in common (see _score) from which two messages that begin alike are one
SAME_START = 3  # words: two messages begin alike when their first three words are the same
ALONE = 0.8  # share of words in common from which two messages are one, however they begin
MIN_FRAGMENT = 4  # words (a placeholder counts as one): a shorter piece of a message names no error

# Older wordings of messages the book shows, each with the torch versions that printed it (the
# book's pages show what the pinned torch prints). The one list of them: the error index
# (bookbuild/indexes.py) gives each to the entry whose message holds the fragment, and the
# site's page of errors lists them under that entry.
#   (a fragment of the message as the book shows it, the older message, the torch versions)
ALIASES = (
    ("Trying to backward through the graph a second time",
     "Trying to backward through the graph a second time, but the buffers have already been freed. "
     "Specify retain_graph=True when calling backward the first time.",
     "torch 1.5 and earlier"),
    ("Trying to backward through the graph a second time",
     "Trying to backward through the graph a second time, but the saved intermediate results have already "
     "been freed. Specify retain_graph=True when calling backward the first time.",
     "torch 1.6 to 1.8"),
    ("Trying to backward through the graph a second time",
     "Trying to backward through the graph a second time (or directly access saved variables after they have "
     "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
     "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
     "you need to access saved variables after calling backward.",
     "torch 1.9 and 1.10"),
    ("use_reentrant parameter should be passed explicitly",
     "torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly. The default "
     "value of use_reentrant will be updated to be False in the future. To maintain current behavior, pass "
     "use_reentrant=True. It is recommended that you use use_reentrant=False. Refer to docs for more details on "
     "the differences between the two variants.",
     "torch 2.1 to 2.3"),
)

# The error's name where a line names one: `RuntimeError: `, `torch.OutOfMemoryError: `,
# `torch._dynamo.exc.Unsupported: `, `file.py:12: UserWarning: `. The last such name in a
# traceback is the error it ended with. The group that matched is the type's last component.
TYPE = r"\b(?:[A-Za-z_]\w*\.)+([A-Z]\w*)(?=: )|\b([A-Z]\w*(?:Error|Exception|Warning))(?=: )"

# How a message becomes the words it is compared by: each pattern, in order, is replaced by its
# text. The patterns use only the regular-expression syntax Python and JavaScript share: the
# site's search applies this same list to what a reader pastes into its search box
# (docs/assets/js/search-query.js reads it from the search index).
TAILS = (
    (r"\s*\bHint: .*", ""),  # torch's hint about anomaly detection, to the end of the message
    (r"\s*\(Triggered internally at [^)]*\)\.?", ""),
)
RULES = TAILS + (
    (r", which is output \d+ of [A-Za-z_][\w.]*,", ""),  # the version error names a node or not
    (r"\b(?:https?://|www\.)\S+|\b(?:github\.com|pytorch\.org)/\S*", " _url_ "),
    (r"torch\.Size\(\[[\d,\s]*\]\)", " _shape_ "),
    (r"\[?\btorch\.(?:cuda\.)?[A-Za-z]*Tensor(?:\s*\[[\d,\s]*\])?\]?", " _tensor_ "),
    (r"\btorch\.(?:float|double|half|bfloat|int|long|short|uint|bool|complex|cfloat|cdouble)\d*\b", " _dtype_ "),
    (r"\b(?:Float|Double|Half|BFloat16|Long|Int|Short|Byte|Char|Bool|ComplexFloat|ComplexDouble)\b", " _dtype_ "),
    (r"\b\w*Backward\w*", " _node_ "),  # MulBackward0, AsStridedBackward0, BackwardHookFunction
    (r"(?<=\bof )[A-Z]\w*(?= is a view)", " _node_ "),  # Output 0 of Unbind is a view ...
    (r"(?<=\bvmap over )[A-Za-z_]\w*", " _name_ "),
    (r"\baten::[\w.]+", " aten _op_ "),
    (r"\b[A-Za-z_][\w.]*(?= does not have a deterministic)", " _op_ "),
    (r"(?<![A-Za-z])'[^'\s][^']{0,58}'(?![A-Za-z])", " _name_ "),  # 'PowBackward1', hook 'scale'
    (r"\bCUDNN_STATUS_[A-Z_]*", " _cudnnstatus_ "),  # cuDNN's and cuBLAS's statuses have entries
    (r"\bCUBLAS_STATUS_[A-Z_]*", " _cublasstatus_ "),  # of their own
    (r"\[[\d,\s]*\]|\((?:\d+,\s*)*\d*,?\)", " _shape_ "),  # [3, 4], (5,), ()
    (r"\b\d+(?:st|nd|rd|th)\b", " _nth_ "),
    (r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)?\b", " _num_ "),
)
WORD = r"[a-z0-9_]+"
PLACEHOLDER = r"_[a-z]+_"


def _entries():
    return json.loads(INDEX.read_text(encoding="utf-8"))


def _error_line(text):
    """(type, message, line) of the last line of ``text`` that names an error (torchrun's own
    ``ChildFailedError``, which ends a failed job after the rank's error, excepted): the type's
    last component, the message (to the end of that line), and the line from the type's name on;
    ("", all of the text, all of the text) when no line names one."""
    found = list(re.finditer(TYPE, text, re.ASCII))
    if not found:
        return "", " ".join(text.split()), " ".join(text.split())
    last = ([m for m in found if m.group(1) != "ChildFailedError"] or found)[-1]
    line = text[last.start():].split("\n", 1)[0].strip()
    return last.group(1) or last.group(2), " ".join(text[last.end() + 2:].split("\n", 1)[0].split()), line


def _words(message):
    for pattern, replacement in RULES:
        message = re.sub(pattern, replacement, message, flags=re.ASCII)
    return re.findall(WORD, message.lower())


def normalise(text):
    """(type, words) of an error message or a traceback: the type named by its last error line
    ("" when none is named) and the words its message is compared by (see RULES)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be an error message (a str), got {type(text).__name__}")
    kind, message, _ = _error_line(text)
    return kind, _words(message)


def drop_tails(message):
    """The message without the hint torch appends to it (TAILS)."""
    if not isinstance(message, str):
        raise TypeError(f"message must be an error message (a str), got {type(message).__name__}")
    for pattern, replacement in TAILS:
        message = re.sub(pattern, replacement, message, flags=re.ASCII)
    return message.strip()


def _inside(long, short):
    """Whether the words ``short`` appear in ``long`` one after another."""
    n = len(short)
    return n > 0 and any(long[i:i + n] == short for i in range(len(long) - n + 1))


def _common(a, b):
    """Length of the longest common subsequence of two lists of words."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b):
            prev, row[j + 1] = row[j + 1], prev + 1 if x == y else max(row[j + 1], row[j])
    return row[-1]


def _score(pasted, key):
    """1 when the whole message ``key`` is in the pasted words, 0.9 when the pasted words (at
    least MIN_FRAGMENT of them) are a piece of it, else the share of words the two have in common
    in the same order, 2 * common / (len + len), where the two begin alike (SAME_START) or that
    share is at least ALONE; else 0 (torch's messages of two different checks can share most of
    their words: "The expanded size of the tensor (10) must match the existing size (5) at ...")."""
    if _inside(pasted, key):
        return 1.0
    if len(pasted) >= MIN_FRAGMENT and _inside(key, pasted):
        return 0.9
    if not pasted or not key:
        return 0.0
    share = 2 * _common(pasted, key) / (len(pasted) + len(key))
    return share if pasted[:SAME_START] == key[:SAME_START] or share >= ALONE else 0.0


def explain(text):
    """The index entries that match ``text`` (an error line or a whole traceback), best first."""
    if not isinstance(text, str):
        raise TypeError(f"text must be an error message (a str), got {type(text).__name__}")
    if not text.strip():
        raise ValueError("text is empty; pass an error message such as 'RuntimeError: ...', or a traceback")
    kind, pasted = normalise(text)
    scored = []
    for order, entry in enumerate(_entries()):
        score, length = max((_score(pasted, key), len(key)) for key in entry["keys"])
        # Another type with the same words is the same error raised as another class by another
        # torch (gradcheck's RuntimeError before GradcheckError): only a whole message counts.
        other = bool(kind) and entry["types"] is not None and kind not in entry["types"]
        if score >= (0.9 if other else CUTOFF):
            scored.append((-score, other, -length, order, entry))  # a tie: the longer message is the closer one
    scored.sort(key=lambda t: t[:4])
    return [entry for *_, entry in scored]


def _describe(entry):
    if entry["kind"] == "named":
        return "\n".join([
            "It needs a GPU, and the book's blocks run on CPU; the book names it, with what to check:",
            f"  {entry['heading']}",
            f"  what to check: {entry['check']}",
            f"  named in {entry['page']} ({entry['address']} on the book's site)",
        ])
    lines = [entry["message"] if entry["kind"] == "error" else f"{entry['type']} whose message contains: {entry['message']}"]
    for alias in entry["aliases"]:
        lines.append(f"  printed by {alias['torch']} as: {alias['message']}")
    if entry["cause"]:
        lines.append(f"  cause: {entry['cause']}")
        lines.append(f"  fix:   {entry['fix']}")
    lines.append(f"  listed in {entry['page']} ({entry['address']} on the book's site)")
    for shown in entry["shown"]:
        where = f"{shown['page']}: {shown['section']}" if shown["section"] else shown["page"]
        lines.append(f"  shown in {where} ({shown['address']} on the book's site)")
    return "\n".join(lines)


def main(argv=None):
    from snippets._cli import parser

    p = parser("snippets.explain", __doc__)
    p.add_argument("message", nargs="*", help="the error message (default: read it, or a traceback, from stdin)")
    p.add_argument("--all", action="store_true", help="print every match, not only the best three")
    args = p.parse_args(argv)
    text = " ".join(args.message) if args.message else sys.stdin.read()
    if not text.strip():
        p.error("give an error message, or pipe a traceback into it")
    found = explain(text)
    shown = [entry for entry in found if entry["kind"] != "named"]
    if not shown:
        if found:   # named on the page of errors, shown by no block
            print(f"No block of the book shows this error: {_error_line(text)[2]}")
            print(_describe(found[0]))
        else:
            print(f"No error of the book's list matches this one: {_error_line(text)[2]}")
        return 1
    for entry in shown if args.all else shown[:3]:
        print(_describe(entry))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
