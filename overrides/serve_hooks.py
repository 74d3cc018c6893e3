"""Build hooks for `make serve` (mkdocs.yml `hooks:`): what an author sees while editing. None of
them changes what `mkdocs build` writes.

1. A short log. Under `mkdocs serve` the plugins' and hooks' INFO lines (mermaid2 and
   mkdocs-jupyter write one or two per page: about 130 lines before "Serving on") are left out;
   mkdocs' own (building, built in N seconds, watching, serving, reloading) and every warning
   stay. `make serve BOOK_SERVE_LOG=all` shows them all, and so does `mkdocs serve -v` (with
   mkdocs' debug lines).
2. An edit to snippets/ shows on the pages that include it. mkdocs.yml's `watch:` makes
   `mkdocs serve` rebuild when a file there changes, but a dirty rebuild (`--dirty`, which
   `make serve` uses) rebuilds only the pages whose source changed: a page is also rebuilt when
   a file it includes (a `--8<--` line) is newer than the page's last build.
3. The PDF under `make serve`. `mkdocs serve` builds into a temporary folder, so the home page's
   link to autograd-book.pdf finds it there only when it is copied: the PDF `make pdf` wrote,
   site/autograd-book.pdf, is copied after each build when it exists and is newer.
4. An edit shows sooner. mkdocs loads the theme again for every rebuild, and Jinja compiled its
   74 templates again each time (about a quarter of a rebuild). Under `mkdocs serve` the
   Jinja environment (mkdocs' documented `on_env` event) gets a bytecode cache (Jinja's
   documented `BytecodeCache`) that lives as long as the server: a template is compiled once,
   and again only when its source changes (Jinja checks each template's checksum). The print
   page is not made under `make serve` either (see the Makefile).
"""

import logging
import os
import re
import shutil
from pathlib import Path

import jinja2

ROOT = Path(__file__).resolve().parent.parent
PDF = ROOT / "site" / "autograd-book.pdf"
SERVING = {"on": False, "dirty": False}
# The loggers whose INFO lines stay under `mkdocs serve`: mkdocs' own build and server.
KEPT = ("mkdocs.commands", "mkdocs.livereload")
INCLUDE = re.compile(r"""^[ \t>]*--8<--[ \t]+["']([^"':]+)""", re.M)


class Compiled(jinja2.BytecodeCache):
    """The templates' bytecode, in memory, by Jinja's key of a template (its name and file); Jinja
    uses a stored entry only when its source's checksum matches."""

    def __init__(self):
        self.kept = {}

    def load_bytecode(self, bucket):
        if bucket.key in self.kept:
            bucket.bytecode_from_string(self.kept[bucket.key])

    def dump_bytecode(self, bucket):
        self.kept[bucket.key] = bucket.bytecode_to_string()


COMPILED = Compiled()


def _quiet(record: logging.LogRecord) -> bool:
    return record.levelno != logging.INFO or record.name.startswith(KEPT)


def on_startup(command, dirty):
    SERVING.update(on=command == "serve", dirty=dirty)
    mkdocs = logging.getLogger("mkdocs")
    verbose = mkdocs.getEffectiveLevel() <= logging.DEBUG or os.environ.get("BOOK_SERVE_LOG") == "all"
    if command == "serve" and not verbose:
        for handler in mkdocs.handlers:
            if isinstance(handler, logging.StreamHandler) and _quiet not in handler.filters:
                handler.addFilter(_quiet)


def included(text: str, base: Path) -> list[Path]:
    """The files a page's `--8<--` lines include (pymdownx.snippets' base_path: the checkout)."""
    return [base / name.strip() for name in INCLUDE.findall(text)]


def on_env(env, config, files):
    if SERVING["on"]:
        env.bytecode_cache = COMPILED
    return env


def on_files(files, config):
    if not (SERVING["on"] and SERVING["dirty"]):
        return files
    for file in files.documentation_pages():
        if not file.src_uri.endswith(".md") or not os.path.isfile(file.abs_dest_path):
            continue
        built = os.path.getmtime(file.abs_dest_path)
        text = Path(file.abs_src_path).read_text(encoding="utf-8")
        if any(p.is_file() and p.stat().st_mtime > built for p in included(text, ROOT)):
            file.is_modified = lambda: True  # rebuilt by this dirty build
    return files


def on_post_build(config):
    if not SERVING["on"] or not PDF.is_file():
        return
    served = Path(config["site_dir"]) / PDF.name
    if not served.is_file() or served.stat().st_mtime < PDF.stat().st_mtime:
        shutil.copy2(PDF, served)
