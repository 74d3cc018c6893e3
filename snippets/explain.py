"""Which page of the book shows your error: ``python -m snippets.explain``.

Give it an error message, or paste a whole traceback on standard input:

    python -m snippets.explain "RuntimeError: Trying to backward through the graph a second time"
    python train.py 2>&1 | python -m snippets.explain

It reads the book's index of every error and warning its pages demonstrate (the same list as
the site's page "Every error the book shows", shipped in this package), and prints the entries
that match: the message as the book shows it, the cause and the fix where the book's failure
table gives them, and the page that reproduces it (an address relative to the book's site).
It works offline. With no match it says so and exits with status 1.

``explain(text)`` returns the matching entries, best first, as dicts.
"""

import difflib
import json
import re
import sys
from pathlib import Path

INDEX = Path(__file__).with_name("error_index.json")
CUTOFF = 0.6  # similarity of two messages (numbers masked) from which they count as the same


def _entries():
    return json.loads(INDEX.read_text(encoding="utf-8"))


def _normal(text):
    """Lower case, numbers masked, white space collapsed: 'at version 2' ~ 'at version 3'."""
    return " ".join(re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", text.lower()).split())


def _last_error_line(text):
    """The line of a traceback that names the error (``Type: message``), else the last line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Warning)\b", line):
            return line
        if re.search(r":\d+: [A-Za-z_]\w*Warning: ", line):  # file:line: UserWarning: message
            return line.split(": ", 1)[1]
    return lines[-1] if lines else ""


def explain(text):
    """The index entries that match ``text`` (an error line or a whole traceback), best first."""
    if not isinstance(text, str):
        raise TypeError(f"text must be an error message (a str), got {type(text).__name__}")
    line = _last_error_line(text)
    if not line:
        raise ValueError("text is empty; pass an error message such as 'RuntimeError: ...', or a traceback")
    kind_type, _, message = line.partition(": ") if ": " in line else ("", "", line)
    given_type = kind_type.rsplit(".", 1)[-1] if re.fullmatch(r"[A-Za-z_][\w.]*", kind_type) else ""
    scored = []
    for entry in _entries():
        if given_type and given_type != entry["type"]:
            continue
        if entry["kind"] == "warning":
            score = 1.0 if re.search(entry["message"], line) else 0.0
        else:
            shown = entry["message"].partition(": ")[2] or entry["message"]
            a, b = _normal(message or line), _normal(shown)
            if (message or line).strip() == shown:
                score = 2.0  # the very message, numbers included
            else:
                score = 1.0 if a == b else difflib.SequenceMatcher(None, a, b).ratio()
            if len(a) >= 25 and (a in b or b in a):
                score = max(score, 0.9)
        if score >= CUTOFF:
            scored.append((score, entry))
    scored.sort(key=lambda pair: -pair[0])
    return [entry for _, entry in scored]


def _describe(entry):
    lines = [entry["message"] if entry["kind"] == "error"
             else f"{entry['type']} whose message contains: {entry['message']}"]
    if entry["cause"]:
        lines.append(f"  cause: {entry['cause']}")
        lines.append(f"  fix:   {entry['fix']}")
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
    if not found:
        print(f"No page of the book shows this error: {_last_error_line(text)}")
        return 1
    for entry in found if args.all else found[:3]:
        print(_describe(entry))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
