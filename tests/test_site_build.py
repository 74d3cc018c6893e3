"""The built site is reused only while everything a build reads is unchanged
(bookbuild/site_build.py, `make build`).

Each test runs a stand-in build (it writes site/index.html and counts its runs) in a small git
project, so what is checked is the decision to build, not mkdocs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild import site_build
from bookcheck import results, steps

# The stand-in build: writes site/index.html, counts its runs in builds.txt beside site/,
# and, given a path after the site, appends a line to it (a file edited while it builds).
STAND_IN = """
import pathlib, sys
site = pathlib.Path(sys.argv[1]); site.mkdir(exist_ok=True)
(site / "index.html").write_text("built")
count = site.parent / "builds.txt"
count.write_text(str(int(count.read_text()) + 1) if count.exists() else "1")
if len(sys.argv) > 2:
    with open(sys.argv[2], "a") as f:
        f.write("edited during the build\\n")
"""


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=A reader", "-c", "user.email=reader@example.invalid",
                    "-c", "commit.gpgsign=false", *args], cwd=project, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    # The records of passing runs the stamps print: kept apart from the project's own.
    monkeypatch.setattr(results, "VERIFIED", tmp_path / "records" / "verified.json")
    root = tmp_path / "p"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "page.md").write_text("# A page\n")
    (root / ".gitignore").write_text("site/\nbuilds.txt\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def build(project: Path, *extra: str, fresh: bool = False) -> int:
    """Run the stand-in through site_build; return how many times it has run in all."""
    status = site_build.build(project / "site", [sys.executable, "-c", STAND_IN, "site", *extra],
                              fresh=fresh, root=project)
    assert status == 0
    return int((project / "builds.txt").read_text())


def test_a_site_is_built_once_then_reused_until_something_it_reads_changes(project, monkeypatch):
    assert build(project) == 1
    assert (project / "site" / site_build.KEY_FILE).read_text().strip() == site_build.key(project)
    assert build(project) == 1  # nothing changed: reused
    page = project / "docs" / "page.md"
    page.write_text("# A page\n\nOne more sentence.\n")
    assert build(project) == 2  # a project file
    assert build(project) == 2
    git(project, "commit", "-q", "-am", "second")
    assert build(project) == 3  # the commit the stamps print (the files are as they were)
    monkeypatch.setenv("SITE_URL", "https://example.invalid/book/")
    assert build(project) == 4  # an environment variable
    assert build(project, fresh=True) == 5  # make build FRESH=1
    (project / "site" / "index.html").unlink()
    assert build(project) == 6  # a site with a page missing is not a whole build
    assert build(project) == 6
    monkeypatch.setenv("CI", "true")
    assert build(project) == 7  # CI reuses nothing
    assert build(project) == 8


def test_a_page_not_yet_committed_makes_the_stamps_say_local_changes(project):
    """The stamps print the commit a site was built from; a new page that git does not track yet
    is built too, so the commit alone would not hold it."""
    assert site_build.build_facts(project)["commit"].count(" ") == 0  # the commit alone
    (project / "docs" / "new.md").write_text("# A new page\n")
    assert site_build.build_facts(project)["commit"].endswith(" with local changes")


def test_a_record_of_passing_runs_of_this_tree_builds_the_site_again(project):
    """The page stamps say "verified" once every test step has passed on exactly these files:
    that record is part of the key."""
    assert build(project) == 1
    tree = results.Keys(project).tree()
    for step in steps.TEST_STEPS:
        results.record_verified(tree, {"checks": 1, "torch": "2.13.0", "python": "3.11"}, results.step_path(step))
    assert site_build.build_facts(project)["verified"] is not None
    assert build(project) == 2
    assert build(project) == 2
    results.forget_verified(results.step_path(steps.TEST_STEPS[0]))
    assert build(project) == 3


def test_a_failed_build_or_one_whose_inputs_changed_meanwhile_is_not_recorded(project):
    site = project / "site"
    failing = [sys.executable, "-c", "import pathlib; pathlib.Path('site').mkdir(); raise SystemExit(3)"]
    assert site_build.build(site, failing, root=project) == 3
    assert not (site / site_build.KEY_FILE).exists()
    assert build(project) == 1
    page = str(project / "docs" / "page.md")
    assert build(project, page, fresh=True) == 2  # the build edits a page it read
    assert not (site / site_build.KEY_FILE).exists()
    assert build(project) == 3  # so the next run builds from the edited page
    assert build(project) == 3


def test_the_stamps_print_the_facts_the_key_holds():
    """overrides/hooks.py and the PDF's cover print build_facts(); a fact added there without
    being in the key would leave a stale site reused."""
    hooks = (site_build.ROOT / "overrides" / "hooks.py").read_text(encoding="utf-8")
    cover = (site_build.ROOT / "overrides" / "print_hooks.py").read_text(encoding="utf-8")
    assert "BUILD.update(site_build.build_facts())" in hooks
    assert "facts = site_build.build_facts()" in cover
    assert "datetime" not in hooks + cover and '"rev-parse"' not in hooks + cover
    facts = site_build.build_facts()
    assert set(facts) == {"commit", "date", "verified", "also"}
    json.dumps(facts)  # part of the key as JSON


def test_usage_names_what_is_missing(project, capsys):
    with pytest.raises(ValueError, match="command is empty: pass the build's command line after --"):
        site_build.build(project / "site", [], root=project)
    assert site_build.main(["site", "mkdocs", "build"]) == 2
    assert "usage: python -m bookbuild.site_build [--fresh] SITE -- COMMAND" in capsys.readouterr().err


# The stand-in of a build that reads mkdocs-jupyter's cache settings as mkdocs.yml does.
SEES_CACHE = """
import os, pathlib
site = pathlib.Path("site"); site.mkdir(exist_ok=True)
(site / "index.html").write_text("built")
pathlib.Path("cache.txt").write_text(os.environ.get("BOOK_NOTEBOOK_HTML_CACHE", "off") + " "
                                     + os.environ.get("BOOK_NOTEBOOK_HTML_DIR", "-"))
"""


def test_notebook_html_is_cached_per_environment_and_only_when_the_site_may_be_reused(project, monkeypatch):
    def cache_seen(fresh=False):
        (project / "site" / site_build.KEY_FILE).unlink(missing_ok=True)
        assert site_build.build(project / "site", [sys.executable, "-c", SEES_CACHE], fresh=fresh, root=project) == 0
        return (project / "cache.txt").read_text().split()

    on, folder = cache_seen()
    assert on == "true" and Path(folder).parent == project / ".cache" / "notebook-html"
    assert cache_seen() == [on, folder]  # the same environment: the same folder
    Path(folder).mkdir(parents=True)
    monkeypatch.setenv("SITE_URL", "https://example.invalid/book/")  # another environment
    on, other = cache_seen()
    assert on == "true" and other != folder and not Path(folder).exists()  # the old folder removed
    assert cache_seen(fresh=True) == ["off", "-"]  # make build FRESH=1: converted afresh
    monkeypatch.setenv("CI", "true")
    assert cache_seen() == ["off", "-"]  # CI reuses nothing
