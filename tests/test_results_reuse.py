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
