"""The built site as a cache keyed on content: `make build` (and `make test`, which builds first)
runs ``mkdocs build --strict`` only when the site in site/ was not built from exactly what a build
would read now.

What a build reads, hashed into the site's key (stored in ``site/.book-build``):

- every file of the project and the environment (bookcheck.results: Keys.tree and environment,
  the keys that decide whether a check is run again: pages, snippets, hooks, templates,
  mkdocs.yml; Python, every installed distribution, the browser, the environment variables);
- what the build hooks print on the pages and nothing in the project holds (``build_facts``):
  the commit and whether the checkout has local changes, the date (UTC), and the records of
  whole passing test runs of this tree that the page stamps state.

The key is taken before the build and again after it; the site is recorded as current only when
both agree (a file changed while it was being built is built again next time). Never reused under
``CI=true`` or with ``--fresh`` (``make test FRESH=1``); a build that fails records nothing and
leaves no key behind.

When reuse is allowed, the build also keeps mkdocs-jupyter's HTML of each notebook (its
documented ``cache`` option; mkdocs.yml turns it on only when BOOK_NOTEBOOK_HTML_CACHE says so),
in a folder of its own for this environment (``notebook_cache``): mkdocs-jupyter keys its cache
on a notebook's bytes and its own options, not on the versions of the libraries that render it,
which the folder's name holds (Keys.env: Python and every installed distribution). Converting
the 14 notebooks is about 5 s of a build; the first build after a passing run (whose record
the page stamps print) then converts none.

    python -m bookbuild.site_build [--fresh] SITE -- COMMAND...
        run COMMAND (the build) unless SITE is current; then record SITE's key
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY_FILE = ".book-build"


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def build_facts(root: Path = ROOT) -> dict:
    """What the page stamps print beside the page's own counts (overrides/hooks.py): the commit
    and date of the build, and the passing runs of exactly this tree (on the pinned torch and on
    each other verified version), or None for each that is missing."""
    from bookcheck import results, versions

    commit = _git(root, "rev-parse", "--short=10", "HEAD")
    dirty = bool(_git(root, "status", "--porcelain"))  # an untracked page is built too: a local change
    return {
        "commit": (commit + (" with local changes" if dirty else "")) if commit else "unknown (not a git checkout)",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "verified": results.verified(root),
        "also": [dict(version=v, verified=results.verified(root, path=results.verified_path(v)))
                 for v in versions.also()],
    }


def key(root: Path = ROOT) -> str:
    """The key of a site built from ``root`` now: its files, the environment, the build facts."""
    from bookcheck import results

    keys = results.Keys(root)
    h = hashlib.sha256()
    for part in (keys.tree(), keys.env(), json.dumps(build_facts(root), sort_keys=True)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def current(site: Path, root: Path = ROOT) -> bool:
    """True when ``site`` holds a whole build from exactly what a build would read now."""
    try:
        stored = (Path(site) / KEY_FILE).read_text(encoding="ascii").strip()
    except OSError:
        return False
    return stored == key(root) and (Path(site) / "index.html").is_file()


def notebook_cache(root: Path = ROOT) -> Path:
    """The folder of mkdocs-jupyter's cache for this environment (under .cache/, which git
    ignores); the folders of other environments are removed."""
    from bookcheck import results

    parent = Path(root) / ".cache" / "notebook-html"
    here = parent / hashlib.sha256(results.Keys(root).env().encode()).hexdigest()[:16]
    if parent.is_dir():
        for other in parent.iterdir():
            if other != here:
                shutil.rmtree(other, ignore_errors=True)
    return here


def build(site: Path, command: list[str], fresh: bool = False, root: Path = ROOT) -> int:
    """Run ``command`` (which builds ``site``) unless the site is current; return its exit status
    (0 when nothing needed building)."""
    from bookcheck import results

    if not command:
        raise ValueError("command is empty: pass the build's command line after --, e.g. -- mkdocs build --strict")
    site = Path(site)
    reuse = not fresh and not results.in_ci()
    before = key(root)
    if reuse and current(site, root):
        print(f"{site}/ is current (built from these files, this environment and these records of "
              f"passing runs, today): not built again; make build FRESH=1 builds it anyway", flush=True)
        return 0
    (site / KEY_FILE).unlink(missing_ok=True)
    env = None
    if reuse:  # mkdocs.yml reads these (the mkdocs-jupyter entry)
        env = dict(os.environ, BOOK_NOTEBOOK_HTML_CACHE="true", BOOK_NOTEBOOK_HTML_DIR=str(notebook_cache(root)))
    status = subprocess.run(command, cwd=root, env=env).returncode
    if status == 0 and key(root) == before:
        (site / KEY_FILE).write_text(before + "\n", encoding="ascii")
    return status


def main(argv: list[str]) -> int:
    fresh = "--fresh" in argv[: argv.index("--")] if "--" in argv else False
    if "--" not in argv or len([a for a in argv[: argv.index("--")] if a != "--fresh"]) != 1:
        print("usage: python -m bookbuild.site_build [--fresh] SITE -- COMMAND...", file=sys.stderr)
        return 2
    split = argv.index("--")
    site = next(a for a in argv[:split] if a != "--fresh")
    return build(Path(site), argv[split + 1:], fresh=fresh)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
