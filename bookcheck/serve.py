"""State of `make serve` kept across rebuilds (mkdocs re-reads mkdocs.yml and re-executes
the build hooks on every rebuild; this module is imported once).

``make serve`` rebuilds only the pages whose source changed (mkdocs' dirty build). When a
page is added or deleted, the navigation of every page changes: that rebuild is a full one,
and the deleted page's output is removed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

STATE: dict = {"dirty": False, "pages": None}


def started(dirty: bool) -> None:
    STATE["dirty"] = bool(dirty)


def pages_changed(files) -> bool:
    """Record the build's pages; on a dirty build after an addition or a deletion, mark
    every file modified (a full rebuild) and remove deleted pages' outputs."""
    pages = {f.src_uri: f.abs_dest_path for f in files.documentation_pages()}
    before, STATE["pages"] = STATE["pages"], pages
    if not STATE["dirty"] or before is None or set(before) == set(pages):
        return False
    for uri in set(before) - set(pages):
        dest = Path(before[uri])
        dest.unlink(missing_ok=True)
        if dest.parent.is_dir() and not any(dest.parent.iterdir()):
            shutil.rmtree(dest.parent, ignore_errors=True)
    for f in files:
        f.is_modified = lambda: True
    return True
