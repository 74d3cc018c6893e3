"""Error messages as readers paste them (tests/fixtures/error_pastes.toml), and what each must
find: the entries of the error index (snippets/error_index.json) that are right for it. Used by
tests/test_explain.py (the terminal) and tests/test_search.py (the site's search box).

    cases()                   every case of the file
    expected(case, entries)   the entries right for it; [] where nothing may be found
    outcome(case, found, entries)   "right", "near", "none" or "wrong" for what a tool found
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "error_pastes.toml"
EXPECTS = ("shown", "named", "absent")


@dataclass(frozen=True)
class Case:
    id: str
    expect: str  # shown, named or absent
    paste: str
    error: str = ""  # a fragment of the message of the entry (entries, with several) it must find
    type: str = ""
    several: bool = False
    pending: str = ""  # a demonstration being added: found once the index has its entry

    def __str__(self):
        return self.id


def cases() -> list[Case]:
    data = tomllib.loads(FIXTURE.read_text(encoding="utf-8"))
    out = [Case(**{**c, "paste": c["paste"].strip("\n")}) for c in data["case"]]
    for c in out:
        assert c.expect in EXPECTS, f"{c.id}: expect must be one of {EXPECTS}"
        assert (c.expect == "absent") == (not c.error), f"{c.id}: a shown or named case names its error, an absent one none"
    assert len({c.id for c in out}) == len(out), "two cases share an id"
    return out


def _texts(entry: dict) -> list[str]:
    return entry["messages"] + [a["message"] for a in entry["aliases"]]


def expected(case: Case, entries: list[dict]) -> list[dict]:
    """The entries ``case`` must find (the first of what is found must be one of them); [] for
    an absent case, and for a pending one whose demonstration the index does not hold yet."""
    if case.expect == "absent":
        return []
    named = case.expect == "named"
    hits = [e for e in entries if (e["kind"] == "named") == named and any(case.error in t for t in _texts(e))
            and (not case.type or e["type"] == case.type)]
    if not hits and case.pending:
        return []
    assert hits, f"{case.id}: no entry of the error index holds {case.error!r}"
    assert case.several or len(hits) == 1, f"{case.id}: {case.error!r} is in {len(hits)} entries: give its type"
    return hits


def outcome(case: Case, found: list[str], entries: list[dict], demonstrations: bool = False) -> str:
    """How a tool did on ``case``, given the addresses it found, best first (for an absent case,
    only those of entries of the index): "right" (the first is right; for an absent case, nothing
    is found), "near" (a right one is found, not first), "none" (nothing found, where something
    must be) or "wrong". With ``demonstrations``, the sections that show the error are right too."""
    hits = expected(case, entries)
    right = {e["address"] for e in hits}
    if demonstrations:
        right |= {s["address"] for e in hits for s in e["shown"]}
    if not right:
        return "right" if not found else "wrong"
    if not found:
        return "none"
    if found[0] in right:
        return "right"
    return "near" if right & set(found) else "wrong"
