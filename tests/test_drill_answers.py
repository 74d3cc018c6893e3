"""What every drill's answer must hold, read from the pages with drills (bookbuild.deck.pages: the
drill pages, docs/reference/drills*.md, and the chapters that end with a ``## Drills`` section):

- a link to the section of a teaching page (a page of the Parts or of the workshop, with an
  anchor that page has; on a chapter, ``#anchor`` is a section of the chapter itself), so a
  reader who missed the drill knows where to reread;
- for an Explain drill, a bar and a follow-up: a list that opens "A good answer mentions" (3 to 5
  points), then "Follow-up:" with the interviewer's next question, then that question's own
  answer, folded inside the answer (``??? question "Answer to the follow-up"``), with a block.

The site build (--strict) also checks every anchor; this test names the drill that lacks one.
"""

from __future__ import annotations

import posixpath
import re

import pytest

from bookcheck import DOCS

from bookbuild import deck
from bookcheck.model import outside_fences

PAGES = deck.pages(DOCS)
DRILLS = [d for path in PAGES for d in deck.drills(path, DOCS)]
TEACHING = re.compile(r"^(part\d+|workshop)/")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FOLLOW_UP = re.compile(r'^    \?\?\?\+? question "Answer to the follow-up"\s*$')


def answer_lines(drill) -> list[str]:
    """The lines of a drill's folded answer, as the page writes them."""
    lines = (DOCS / drill.page).read_text(encoding="utf-8").splitlines()
    anchors = deck._anchors(lines)
    head = next(i for i, a in anchors.items() if drill.url.endswith("#" + a) and lines[i].startswith("### "))
    start = next(j for j in range(head + 1, len(lines)) if deck.ANSWER.match(lines[j]))
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith("    ")):
        end += 1
    return lines[start:end]


def page_anchors(page: str) -> set[str]:
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    return set(deck._anchors(lines).values())


def teaching_links(drill) -> list[tuple[str, str]]:
    """(page under docs/, anchor) of every link in the answer to a section of a teaching page."""
    found = []
    for target in LINK.findall("\n".join(answer_lines(drill))):
        path, _, anchor = target.partition("#")
        if re.match(r"^[a-z][a-z0-9+.-]*:", path) or not (path.endswith(".md") or path == "") or not anchor:
            continue
        page = posixpath.normpath(posixpath.join(posixpath.dirname(drill.page), path)) if path else drill.page
        if TEACHING.match(page):
            found.append((page, anchor))
    return found


def name(d) -> str:
    return f"{d.page.removeprefix('reference/').removesuffix('.md')}-{d.number}"


@pytest.mark.parametrize("drill", DRILLS, ids=name)
def test_every_answer_links_the_section_that_teaches_it(drill):
    links = teaching_links(drill)
    assert links, (f"{drill.page} drill {drill.number}: the answer links no section of a teaching page "
                   "(a page of docs/part*/ or docs/workshop/, with its #anchor); add one where it says 'See'")
    for page, anchor in links:
        assert (DOCS / page).exists(), f"{drill.page} drill {drill.number}: {page} does not exist"
        assert anchor in page_anchors(page), f"{drill.page} drill {drill.number}: {page} has no section #{anchor}"


EXPLAIN = [d for d in DRILLS if d.kind == "Explain"]


def test_there_are_explain_drills_on_several_pages():
    assert len(EXPLAIN) >= 15 and len({d.page for d in EXPLAIN}) >= 4, [name(d) for d in EXPLAIN]


@pytest.mark.parametrize("drill", EXPLAIN, ids=name)
def test_every_explain_drill_has_a_bar_and_a_follow_up(drill):
    lines = answer_lines(drill)
    prose = outside_fences(lines)
    where = f"{drill.page} drill {drill.number}"
    bar = next((i for i, s in enumerate(lines) if prose[i] and s.strip() == "A good answer mentions:"), None)
    assert bar is not None, f"{where}: no 'A good answer mentions:' list in the answer"
    points, i = [], bar + 1
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    - ") or lines[i].startswith("      ")):
        if lines[i].startswith("    - "):
            points.append(lines[i])
        elif points and not lines[i].strip() and i + 1 < len(lines) and not lines[i + 1].startswith("    - "):
            break
        i += 1
    assert 3 <= len(points) <= 5, f"{where}: the bar lists {len(points)} points; it needs 3 to 5"
    ask = [i for i, s in enumerate(lines) if prose[i] and s.startswith("    **Follow-up:**")]
    assert ask, f"{where}: no '**Follow-up:**' question after the model answer"
    assert ask[0] > bar
    fold = [i for i, s in enumerate(lines) if FOLLOW_UP.match(s)]
    assert fold and fold[0] > ask[0], f"{where}: the follow-up's answer is not folded after it"
    body = lines[fold[0] + 1:]
    assert any(s.startswith("        ```python") for s in body), f"{where}: the follow-up's answer runs no block"
    assert any(LINK.search(s) for s in body), f"{where}: the follow-up's answer links no section"
