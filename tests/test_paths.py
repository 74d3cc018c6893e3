"""The reading paths (docs/paths/): every reading time they state is the linked page's length
at 100 words a minute, rounded to 5 minutes, so a time cannot drift from its page; every path
is linked from the home page and listed in the nav.

The timed paths (the interview week, the debugging and custom-layer paths) are read as units: a
day of the week, a session of the other two (a ``## `` section whose heading ends in its budget,
``(at most 3 h)``). A unit's time is what it assigns, counted as the path's introduction states:
each page at its reading time, each workshop task at TASK_MINUTES, each drill at DRILL_MINUTES
of its kind, each part of the mock interview at the time the page gives it. A unit's self-test
(and the mock interview) may ask only what the unit and the units before it assigned: every
teaching page a drill's answer links to (tests/test_drill_answers.py checks there is one) is a
page assigned by then, and a workshop task of the mock interview is on a workshop page assigned
by then and was not derived before.
"""

import posixpath
import re
from pathlib import Path

import pytest

from bookbuild import deck
from bookcheck import DOCS
from bookcheck.model import nav_pages

ROOT = Path(__file__).resolve().parents[1]
PATHS = sorted(p for p in (ROOT / "docs" / "paths").glob("*.md") if p.name != "index.md")  # index: the section's page
TIMED_LINK = re.compile(r"\[[^\]]+\]\(([^)#]+\.md)(?:#[^)]*)?\)\s+\((\d+) min\)")


def reading_minutes(page: Path) -> int:
    return max(5, round(len(page.read_text(encoding="utf-8").split()) / 100 / 5) * 5)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_every_stated_reading_time_matches_its_page(path):
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"\n### Mock interview\n.*?(?=\n## |\Z)", "", text, flags=re.S)  # its times are its parts'
    text = " ".join(text.split())  # a link may wrap across lines
    found = TIMED_LINK.findall(text)
    for target, minutes in found:
        page = (path.parent / target).resolve()
        assert int(minutes) == reading_minutes(page), (
            f"{path.name}: {target} is stated as {minutes} min; at 100 words a minute it is "
            f"{reading_minutes(page)} min")
    if path.stem == "interview-week":
        assert len(found) >= 20


def test_four_paths_linked_from_home_and_in_the_nav():
    assert [p.stem for p in PATHS] == ["custom-layer", "interview-week", "learns-badly", "scaling"]
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    nav = [page for _, page in nav_pages()]
    for p in PATHS:
        assert f"(paths/{p.name})" in home, p.name
        assert f"paths/{p.name}" in nav, p.name


TASK_MINUTES = 60  # a workshop task: 40 minutes on paper, then implementing and checking it
DRILL_MINUTES = {"Predict": 2, "Explain": 2}  # any other kind (Write, Derive, Diagnose, Fix): 5
OTHER_DRILL_MINUTES = 5
MOST_MINUTES = 180
TIMED = {"interview-week": r"## Day \d+: .*", "learns-badly": r"## Session \d+: .*",
         "custom-layer": r"## Session \d+: .*"}
LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)(\s+\((\d+) min\))?")
DRILLS = {(d.page, d.url.rpartition("#")[2]): d for p in deck.pages(DOCS) for d in deck.drills(p, DOCS)}


def drill_minutes(d) -> int:
    return DRILL_MINUTES.get(d.kind, OTHER_DRILL_MINUTES)


def section_drills(page: str, anchor: str) -> list:
    """The drills a link to a drill page names: the drill itself, or every drill of a section."""
    if (page, anchor) in DRILLS:
        return [DRILLS[page, anchor]]
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    ids = deck._anchors(lines)
    head = next((i for i, a in ids.items() if a == anchor and lines[i].startswith("## ")), None)
    assert head is not None, f"{page}#{anchor} is neither a drill nor a section of drills"
    stop = next((i for i in sorted(ids) if i > head and lines[i].startswith("## ")), len(lines))
    found = [DRILLS[page, ids[i]] for i in sorted(ids) if head < i < stop and lines[i].startswith("### ")]
    assert found, f"{page}#{anchor}: a section with no drill"
    return found


def answer_pages(d) -> set[str]:
    """The teaching pages (docs/part*/, docs/workshop/) a drill's answer links to."""
    return {m.group(1) for m in re.finditer(r'href="((?:part\d+|workshop)/[^"#]*)', d.back)}


def site_page(md: str) -> str:
    """A page's path under docs/ as the deck writes its links (directory URLs)."""
    md = md.removesuffix(".md")
    return md.removesuffix("index") if md == "index" or md.endswith("/index") else md + "/"


def units(path: Path) -> list[dict]:
    """Each day or session of a timed path: its heading, its minutes, what it assigns and asks."""
    text = path.read_text(encoding="utf-8")
    heads = [m for m in re.finditer(r"^## .*$", text, re.M)]
    found = []
    for n, m in enumerate(heads):
        if not re.fullmatch(TIMED[path.stem], m.group(0)):
            continue
        body = text[m.end(): heads[n + 1].start() if n + 1 < len(heads) else len(text)]
        unit = dict(heading=m.group(0), minutes=0, pages=set(), tasks=set(), asked=[], parts=[], untimed=[], mock=[])
        mock = body.split("### Mock interview", 1)
        for part, in_mock in ((mock[0], False), *(((mock[1], True),) if len(mock) > 1 else ())):
            lists = [b for b in re.split(r"\n\s*\n", part) if b.startswith("- ")]  # prose assigns nothing
            for item in (" ".join(i.split()) for b in lists for i in re.split(r"\n(?=- )", b)):
                kind = re.match(r"- \W*(\w[\w-]*)", item).group(1)
                # a time in brackets that follows no link is an activity's (redo a trace, score the mock)
                unit["minutes"] += sum(int(n) for n in re.findall(r"\((\d+) min\)", LINK.sub("", item)))
                for link in LINK.finditer(item):
                    target, minutes = link.group(2), link.group(4)
                    page, _, anchor = posixpath.normpath(posixpath.join("paths", target)).partition("#")
                    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or not page.endswith(".md"):
                        continue
                    if page.startswith("reference/drills"):
                        if not (in_mock or kind == "Self-test"):
                            continue  # a drill page named elsewhere (a review) assigns no drill
                        drills = section_drills(page, anchor)
                        if in_mock:
                            unit["parts"].append((link.group(0), int(minutes or 0)))
                            unit["minutes"] += int(minutes or 0)
                        elif kind == "Self-test":
                            unit["minutes"] += sum(drill_minutes(d) for d in drills)
                        if in_mock or kind == "Self-test":
                            unit["asked"] += drills
                        if in_mock:
                            unit["mock"] += drills
                        continue
                    if page.startswith("workshop/") and anchor and not page.endswith("index.md"):
                        if in_mock:
                            unit["parts"].append((link.group(0), int(minutes or 0)))
                            unit["minutes"] += int(minutes or 0)
                            unit["mock_task"] = (page, anchor)
                        else:
                            unit["tasks"].add((page, anchor))
                            unit["minutes"] += TASK_MINUTES
                        unit["pages"].add(page)
                        continue
                    if minutes is not None:
                        unit["minutes"] += int(minutes)
                        unit["pages"].add(page)
                    elif kind in ("Read", "Skim"):
                        unit["untimed"].append(target)
        found.append(unit)
    return found


TIMED_PATHS = [p for p in PATHS if p.stem in TIMED]


def test_the_introduction_states_the_rates_the_test_counts():
    intro = " ".join((ROOT / "docs" / "paths" / "interview-week.md").read_text(encoding="utf-8")
                     .split("\n## ", 1)[0].split())
    for said in (f"a workshop task {TASK_MINUTES} minutes", "a Predict or Explain drill two minutes",
                 f"any other drill {OTHER_DRILL_MINUTES}", "at most three hours"):
        assert said in intro, f"interview-week.md: its introduction does not say '{said}'"


@pytest.mark.parametrize("path", TIMED_PATHS, ids=[p.stem for p in TIMED_PATHS])
def test_every_day_or_session_fits_its_budget(path):
    found = units(path)
    assert len(found) >= (7 if path.stem == "interview-week" else 3), f"{path.name}: its days or sessions"
    for unit in found:
        assert not unit["untimed"], f"{path.name}, {unit['heading']}: pages to read with no time: {unit['untimed']}"
        stated = re.search(r"\((\d+) h (\d+) min\)$", unit["heading"])
        assert stated, f"{path.name}: '{unit['heading']}' does not end with its time, '(2 h 40 min)'"
        assert int(stated.group(1)) * 60 + int(stated.group(2)) == unit["minutes"], (
            f"{path.name}, {unit['heading']}: what it assigns adds up to {unit['minutes']} min")
        assert 0 < unit["minutes"] <= MOST_MINUTES, (
            f"{path.name}, {unit['heading']}: {unit['minutes']} min, over {MOST_MINUTES}")


@pytest.mark.parametrize("path", TIMED_PATHS, ids=[p.stem for p in TIMED_PATHS])
def test_a_self_test_asks_only_what_was_assigned(path):
    assigned, derived = set(), set()
    for unit in units(path):
        assigned |= unit["pages"]
        allowed = {site_page(p) for p in assigned}
        assert unit["asked"] or path.stem != "interview-week", f"{path.name}, {unit['heading']}: no self-test"
        for d in unit["asked"]:
            outside = sorted(answer_pages(d) - allowed)
            assert not outside, (f"{path.name}, {unit['heading']}: {d.page} drill {d.number} draws on "
                                 f"{outside}, not assigned by then")
        if "mock_task" in unit:
            assert unit["mock_task"] not in derived, f"{path.name}: the mock's task was derived before"
        derived |= unit["tasks"]


def test_the_week_ends_with_a_timed_mock_interview():
    days = units(ROOT / "docs" / "paths" / "interview-week.md")
    last = days[-1]
    for text, minutes in last["parts"]:
        assert minutes > 0, f"the mock interview's part {text} has no time"
    kinds = [d.kind for d in last["mock"]]
    assert "mock_task" in last, "the mock interview has no workshop task to derive"
    assert sorted(kinds) == ["Diagnose", "Explain", "Explain"], f"the mock interview asks {kinds}"
    text = (ROOT / "docs" / "paths" / "interview-week.md").read_text(encoding="utf-8")
    rubric = text.split("### Mock interview", 1)[1]
    for said in ("Full credit", "Partial credit", "No credit"):
        assert said in rubric, f"the mock interview's rubric does not say what earns '{said}'"
