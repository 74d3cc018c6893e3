"""The reading paths (docs/paths/): every reading time they state is the linked page's length
at 100 words a minute, rounded to 5 minutes, so a time cannot drift from its page; every path
is linked from the home page and listed in the nav."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = sorted((ROOT / "docs" / "paths").glob("*.md"))
TIMED_LINK = re.compile(r"\[[^\]]+\]\(([^)#]+\.md)(?:#[^)]*)?\)\s+\((\d+) min\)")


def reading_minutes(page: Path) -> int:
    return max(5, round(len(page.read_text(encoding="utf-8").split()) / 100 / 5) * 5)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_every_stated_reading_time_matches_its_page(path):
    text = " ".join(path.read_text(encoding="utf-8").split())  # a link may wrap across lines
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
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for p in PATHS:
        assert f"(paths/{p.name})" in home, p.name
        assert f": paths/{p.name}" in nav, p.name
