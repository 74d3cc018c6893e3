"""`make serve`'s hooks (overrides/serve_hooks.py): a short log, snippet edits shown on the pages
that include them, the PDF served after `make pdf`. Measured end to end under `make serve` in the
closing note of the change; here each rule on its own, without a server."""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path

import pytest
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def hooks():
    spec = importlib.util.spec_from_file_location("book_serve_hooks", ROOT / "overrides" / "serve_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record(name, level=logging.INFO):
    return logging.LogRecord(name, level, __file__, 1, "a line", None, None)


def test_the_serve_log_keeps_mkdocs_own_lines_and_every_warning(hooks):
    assert hooks._quiet(record("mkdocs.livereload"))  # "Serving on", "Reloading browsers"
    assert hooks._quiet(record("mkdocs.commands.serve")) and hooks._quiet(record("mkdocs.commands.build"))
    assert not hooks._quiet(record("mkdocs.plugins.mermaid2"))  # a line or two per page
    assert not hooks._quiet(record("mkdocs.hooks.book"))
    assert hooks._quiet(record("mkdocs.plugins.mermaid2", logging.WARNING))


def test_the_filter_is_added_under_serve_only_and_not_when_asked_for_everything(hooks, monkeypatch):
    handler = logging.StreamHandler()
    logger = logging.getLogger("mkdocs")
    monkeypatch.setattr(logger, "handlers", [handler])
    monkeypatch.delenv("BOOK_SERVE_LOG", raising=False)
    hooks.on_startup("build", False)
    assert handler.filters == []
    monkeypatch.setenv("BOOK_SERVE_LOG", "all")
    hooks.on_startup("serve", True)
    assert handler.filters == []
    monkeypatch.delenv("BOOK_SERVE_LOG")
    hooks.on_startup("serve", True)
    assert handler.filters == [hooks._quiet]


def test_a_page_is_rebuilt_when_a_file_it_includes_is_newer_than_its_last_build(hooks, tmp_path):
    assert [p.relative_to(ROOT).as_posix() for p in hooks.included('x\n    --8<-- "snippets/a.py:part"\n', ROOT)] == ["snippets/a.py"]
    hand_trace = (ROOT / "docs" / "part1" / "hand-trace.md").read_text(encoding="utf-8")
    assert ROOT / "snippets" / "autograd_graph.py" in hooks.included(hand_trace, ROOT)

    docs, site, snippets = tmp_path / "docs", tmp_path / "site", tmp_path / "snippets"
    for folder in (docs, site / "a", site / "b", snippets):
        folder.mkdir(parents=True)
    (snippets / "s.py").write_text("x = 1\n")
    (docs / "a.md").write_text('# A\n\n```python\n--8<-- "snippets/s.py"\n```\n')
    (docs / "b.md").write_text("# B\n")
    for page in ("a", "b"):
        (site / page / "index.html").write_text("built")
        os.utime(site / page / "index.html", (1e9, 1e9))  # built long ago...
    for path in (docs / "a.md", docs / "b.md"):
        os.utime(path, (1e8, 1e8))  # ...after the last edit of each page
    files = Files([File(name, str(docs), str(site), True) for name in ("a.md", "b.md")])
    hooks.ROOT = tmp_path
    hooks.SERVING.update(on=True, dirty=True)  # what on_startup("serve", True) records
    assert [f.is_modified() for f in files.documentation_pages()] == [False, False]
    hooks.on_files(files, {})
    # s.py is newer than a's build: a is rebuilt; b includes nothing
    assert [f.is_modified() for f in files.documentation_pages()] == [True, False]
    hooks.SERVING.update(on=False)  # `mkdocs build`: nothing changed
    again = Files([File(name, str(docs), str(site), True) for name in ("a.md", "b.md")])
    hooks.on_files(again, {})
    assert [f.is_modified() for f in again.documentation_pages()] == [False, False]


def test_the_pdf_is_served_after_make_pdf(hooks, tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    hooks.PDF = tmp_path / "site" / "autograd-book.pdf"
    hooks.SERVING.update(on=True)
    hooks.on_post_build({"site_dir": str(served)})
    assert not (served / "autograd-book.pdf").exists()  # no `make pdf` yet: nothing to serve
    hooks.PDF.parent.mkdir()
    hooks.PDF.write_bytes(b"%PDF-1.7 ...")
    hooks.on_post_build({"site_dir": str(served)})
    assert (served / "autograd-book.pdf").read_bytes() == b"%PDF-1.7 ..."
    hooks.SERVING.update(on=False)
    hooks.PDF.write_bytes(b"%PDF-1.7 newer")
    os.utime(hooks.PDF, (2e9, 2e9))
    hooks.on_post_build({"site_dir": str(served)})  # `mkdocs build`: its site is left alone
    assert (served / "autograd-book.pdf").read_bytes() == b"%PDF-1.7 ..."


def test_under_serve_a_template_is_compiled_once_and_again_when_it_changes(hooks, tmp_path, monkeypatch):
    """mkdocs makes a Jinja environment for every rebuild; under serve it gets the hooks' bytecode
    cache (on_env), so a rebuild loads the compiled templates and compiles only a changed one."""
    import jinja2

    (tmp_path / "main.html").write_text("<p>{{ page }}</p>", encoding="utf-8")
    compiled = []
    real = jinja2.Environment.compile
    monkeypatch.setattr(jinja2.Environment, "compile",
                        lambda self, source, name=None, *a, **k: compiled.append(name) or real(self, source, name, *a, **k))

    def rebuild():
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(tmp_path)))
        env = hooks.on_env(env, config={}, files=None)
        return env.get_template("main.html").render(page="a")

    monkeypatch.setattr(logging.getLogger("mkdocs"), "handlers", [])
    hooks.on_startup("build", False)
    assert rebuild() == rebuild() == "<p>a</p>" and compiled == ["main.html"] * 2  # mkdocs build: no cache
    compiled.clear()
    hooks.on_startup("serve", True)
    assert rebuild() == rebuild() == "<p>a</p>" and compiled == ["main.html"]
    (tmp_path / "main.html").write_text("<b>{{ page }}</b>", encoding="utf-8")
    assert rebuild() == "<b>a</b>" and compiled == ["main.html"] * 2
    assert rebuild() == "<b>a</b>" and compiled == ["main.html"] * 2


def test_make_serve_leaves_out_the_print_page_unless_asked_and_builds_keep_it(monkeypatch):
    """The print page combines every page again on each rebuild (about 0.5 s of one): off under
    `make serve` (mkdocs.yml's print-site `enabled: !ENV [BOOK_PRINT_PAGE, true]`), on for every
    build, and `make serve PRINT_PAGE=true` turns it on."""
    import subprocess

    from bookcheck.model import read_config

    def enabled():
        [options] = [p["print-site"] for p in read_config(ROOT / "mkdocs.yml")["plugins"] if isinstance(p, dict) and "print-site" in p]
        return options["enabled"]

    monkeypatch.delenv("BOOK_PRINT_PAGE", raising=False)
    assert enabled() is True
    monkeypatch.setenv("BOOK_PRINT_PAGE", "false")
    assert enabled() is False

    def serve_command(*args):
        out = subprocess.run(["make", "-n", "serve", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        [line] = [x for x in out.splitlines() if " serve --dirty" in x]
        return line

    assert serve_command().startswith("BOOK_PRINT_PAGE=false ")
    assert serve_command("PRINT_PAGE=true").startswith("BOOK_PRINT_PAGE=true ")
