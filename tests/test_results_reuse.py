"""A check that passed before is reused only while its inputs are unchanged (bookcheck.results,
tests/pages_plugin.py): the keys change with the files a check depends on, a failure is never
reused, and --fresh runs everything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bookcheck import ROOT, results


def project(tmp: Path) -> Path:
    files = {
        "mkdocs.yml": "site_name: t\n",
        "docs/a.md": "# A\n",
        "docs/b.md": "# B\n",
        "docs/inc.txt": "included\n",
        "snippets/x.py": "X = 1\n",
        "tests/test_t.py": "def test_t():\n    pass\n",
    }
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
    return tmp


def keys(root: Path) -> tuple[str, str]:
    k = results.Keys(root)
    return k.key("docs/a.md::line 1", root / "docs" / "a.md"), k.key("tests/test_t.py::test_t", None)


def test_a_page_check_depends_on_its_page_the_snippets_and_includes_only(tmp_path):
    root = project(tmp_path)
    page, other = keys(root)
    assert keys(root) == (page, other)  # deterministic

    (root / "docs" / "b.md").write_text("# B, edited\n")
    page2, other2 = keys(root)
    assert page2 == page, "another page's edit must not rerun this page's checks"
    assert other2 != other, "a non-page check depends on every file"

    for name in ("docs/a.md", "snippets/x.py", "docs/inc.txt", "mkdocs.yml"):
        before = keys(root)[0]
        (root / name).write_text((root / name).read_text() + "# edited\n")
        assert keys(root)[0] != before, name


PROBE = '''
import os

def test_probe():
    assert os.environ.get("PROBE_FAILS") != "1", "the probe was told to fail"
'''


def run_probe(tmp_path, probe, *args, fails=False):
    env = dict(os.environ, BOOK_RESULTS=str(tmp_path / "results.json"), PROBE_FAILS="1" if fails else "0")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", str(probe), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_passes_are_reused_failures_never(tmp_path):
    # The probe lives in tests/ so that it is a file of the project (its key covers it).
    probe = ROOT / "tests" / f"_probe_{os.getpid()}.py"
    probe.write_text(PROBE)
    try:
        code, out = run_probe(tmp_path, probe)
        assert code == 0 and "checks passed before" not in out, out
        code, out = run_probe(tmp_path, probe)
        assert code == 0 and "1 of 1 checks passed before with identical inputs" in out, out
        code, out = run_probe(tmp_path, probe, "--fresh", fails=True)
        assert code == 1 and "the probe was told to fail" in out, out
        code, out = run_probe(tmp_path, probe)  # the failure removed the record: it runs again
        assert code == 0 and "checks passed before" not in out, out
        probe.write_text(PROBE + "\n# edited\n")
        code, out = run_probe(tmp_path, probe, fails=True)  # edited: not reused, so the failure shows
        assert code == 1 and "the probe was told to fail" in out, out
    finally:
        probe.unlink()


class _Tab:
    def __init__(self, opened):
        self.opened, self.url = opened, None

    def goto(self, url, wait_until=None):
        self.url = url
        self.opened.append(url)

    def close(self):
        pass


class _Browser:
    """Just what site_a11y.check_pages uses of a playwright browser."""

    def __init__(self):
        self.opened = []

    def new_context(self, **options):
        return self

    def add_init_script(self, script):
        pass

    def new_page(self):
        return _Tab(self.opened)

    def close(self):
        pass


def test_a_browser_check_opens_again_only_pages_whose_key_changed_or_that_failed(tmp_path, monkeypatch):
    import site_a11y

    monkeypatch.setattr(results, "MEMO", tmp_path / "per-page.json")
    browser = _Browser()
    urls = {"a.html": "http://h/a", "b.html": "http://h/b"}
    broken = {"http://h/b"}

    def check(page):
        return ["broken"] if page.url in broken else []

    def run(keys, active=True):
        browser.opened.clear()
        found = site_a11y.check_pages(browser, urls, check, {}, results.Memo("probe", active), keys)
        return found, list(browser.opened)

    assert run({"a.html": "1", "b.html": "1"}) == ({"b.html": ["broken"]}, ["http://h/a", "http://h/b"])
    broken.clear()
    assert run({"a.html": "1", "b.html": "1"}) == ({}, ["http://h/b"])  # a passed with key 1; b failed
    assert run({"a.html": "2", "b.html": "1"}) == ({}, ["http://h/a"])  # a's page changed
    assert run({"a.html": "2", "b.html": "1"}) == ({}, [])
    assert run({"a.html": "2", "b.html": "1"}, active=False) == ({}, ["http://h/a", "http://h/b"])  # --fresh


def test_a_page_key_ignores_the_build_date_and_commit_but_nothing_else(tmp_path):
    import site_a11y

    page = tmp_path / "p.html"
    page.write_text("<p>x</p><aside>Built on 2026-11-30 from commit abc123.</aside>")
    key = site_a11y.page_key(tmp_path, "p.html", "inputs", "axe", {"w": 390})
    page.write_text("<p>x</p><aside>Built on 2026-12-01 from commit def456 with local changes.</aside>")
    assert site_a11y.page_key(tmp_path, "p.html", "inputs", "axe", {"w": 390}) == key
    assert site_a11y.page_key(tmp_path, "p.html", "inputs", "axe", {"w": 1440}) != key
    assert site_a11y.page_key(tmp_path, "p.html", "other inputs", "axe", {"w": 390}) != key
    page.write_text("<p>y</p><aside>Built on 2026-12-01 from commit def456 with local changes.</aside>")
    assert site_a11y.page_key(tmp_path, "p.html", "inputs", "axe", {"w": 390}) != key


def test_the_round_trip_runs_again_only_pages_whose_key_changed(tmp_path, monkeypatch):
    import round_trip

    monkeypatch.setattr(results, "MEMO", tmp_path / "per-page.json")
    ran = tmp_path / "ran.txt"

    def page(n, shown=None):
        code = f"open({str(ran)!r}, 'a').write('{n}')\nprint({n})"
        # As round_trip.pair_blocks gives them: with the page model's block (not JSON).
        return [{"block": object(), "code": code, "shown": str(n) if shown is None else shown, "skip": False,
                 "where": f"p{n}.md:1"}]

    pages = {"a": page(1), "b": page(2, shown="20")}
    assert list(round_trip.round_trip(pages, workers=1, memo=results.Memo("probe", active=True))) == ["b"]
    assert sorted(ran.read_text()) == ["1", "2"]
    ran.write_text("")
    pages["b"] = page(3)
    assert round_trip.round_trip(pages, workers=1, memo=results.Memo("probe", active=True)) == {}
    assert ran.read_text() == "3"  # a passed with the same key; b changed (and had failed)
    ran.write_text("")
    assert round_trip.round_trip(pages, workers=1, memo=results.Memo("probe", active=False)) == {}
    assert sorted(ran.read_text()) == ["1", "3"]
