"""Build the site and check it in a real browser (Debian chromium, headless).

Used by test_site.py on the real book and on fixture sites that must fail. Also a small
command line for looking at pages as a reader would:

    python tests/site_check.py screenshot URL out.png [--dark] [--width 1280] [--height 2400]
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-features=AutofillServerCommunication,MediaRouter,OptimizationHints",
    "--hide-scrollbars",
]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


# --------------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------------


@dataclass
class Build:
    returncode: int
    log: str
    seconds: float
    site: Path


def build_site(dest: Path, config: Path = ROOT / "mkdocs.yml") -> Build:
    """``mkdocs build --strict`` into ``dest``, notebooks executed afresh (no cache)."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", MKDOCS_JUPYTER_CACHE="false")
    start = time.perf_counter()
    proc = subprocess.run(
        [str(VENV_BIN / "mkdocs"), "build", "--strict", "-f", str(config), "-d", str(dest)],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return Build(proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start, Path(dest))


def fixture_project(pages: Path, workdir: Path) -> Path:
    """A throw-away project that inherits the book's mkdocs.yml but has ``pages`` as docs.

    Every ``.md`` and ``.ipynb`` under ``pages`` is a page, listed in the nav.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    for name in ("overrides", "snippets"):
        (workdir / name).symlink_to(ROOT / name)
    docs = workdir / "docs"
    shutil.copytree(pages, docs)
    (docs / "assets").symlink_to(ROOT / "docs" / "assets")
    nav = sorted(str(p.relative_to(pages)) for p in pages.rglob("*") if p.suffix in {".md", ".ipynb"})
    lines = [f"INHERIT: {ROOT / 'mkdocs.yml'}", "site_name: fixture", "nav:"] + [f"  - {p}" for p in nav]
    config = workdir / "mkdocs.yml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


# --------------------------------------------------------------------------------------------
# Serving
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def serve(directory: Path):
    """Serve ``directory`` on 127.0.0.1 (a free port); yield the base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def site_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as paths relative to its root."""
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))


# --------------------------------------------------------------------------------------------
# Loading a page in the browser
# --------------------------------------------------------------------------------------------


@dataclass
class Load:
    url: str
    dom: str
    requests: list = field(default_factory=list)  # (initiator, url) made by the page
    console: list = field(default_factory=list)  # console errors
    returncode: int = 0
    copies: list | None = None  # [{"lang", "text"}] as the copy buttons give them (if injected)


def load(url: str, budget_ms: int = 15000) -> Load:
    """Open ``url`` headless, let scripts run, return the DOM, the page's requests, errors."""
    with tempfile.TemporaryDirectory() as tmp:
        netlog = Path(tmp) / "net.json"
        proc = subprocess.run(
            [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp}/profile", f"--log-net-log={netlog}",
             "--enable-logging=stderr", "--v=0", f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = page_requests(netlog, url)
    console = [
        line for line in proc.stderr.splitlines()
        if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)
    ]
    copies = None
    found = re.search(r'<script id="__copies" type="application/json">(.*?)</script>', proc.stdout, re.S)
    if found:
        copies = json.loads(found.group(1))
    return Load(url, proc.stdout, requests, console, proc.returncode, copies)


def page_requests(netlog: Path, page_url: str) -> list[tuple[str, str]]:
    """Requests the page made (initiated by its origin, or its own navigation)."""
    text = netlog.read_text(encoding="utf-8", errors="replace").rstrip()
    if not text.endswith("}"):
        text = text.rstrip(",") + "]}"
    try:
        log = json.loads(text)
    except json.JSONDecodeError:
        log = json.loads(text + "]}")
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(page_url))
    found = []
    for event in log.get("events", []):
        if names.get(event.get("type")) != "URL_REQUEST_START_JOB":
            continue
        params = event.get("params", {})
        initiator, url = params.get("initiator", ""), params.get("url", "")
        own_frame = params.get("request_type") in {"main frame", "sub frame"} and url.startswith(origin)
        if initiator == origin or own_frame:
            found.append((initiator, url))
    return found


def check_loaded_page(result: Load, html: str) -> list[str]:
    """What is wrong with a page as the browser shows it (empty: nothing)."""
    problems = []
    dom = result.dom
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(result.url))
    if result.returncode != 0 or "<article" not in dom:
        problems.append(f"the page did not load (exit {result.returncode})")
    off_site = sorted({u for _, u in result.requests if not (u.startswith(origin + "/") or u == origin)})
    if off_site:
        problems.append("requests off the site's origin: " + ", ".join(off_site))
    diagrams = html.count('<pre class="mermaid">')
    left = dom.count('<pre class="mermaid"')
    if left:
        problems.append(f"{left} of {diagrams} mermaid diagram(s) not rendered (pre.mermaid left in the page)")
    rendered = len(re.findall(r'<div class="mermaid"', dom))
    if rendered < diagrams - left:
        problems.append(f"only {rendered} of {diagrams} diagrams rendered")
    if 'aria-roledescription="error"' in dom or re.search(r'id="dmermaid-|class="error-icon"', dom):
        problems.append("mermaid drew a syntax-error diagram")
    if "katex-error" in dom:
        problems.append("KaTeX could not render a formula (katex-error in the page)")
    formulas, typeset = dom.count('class="arithmatex"'), dom.count('<span class="katex">')
    if typeset < formulas:
        problems.append(f"KaTeX rendered {typeset} of {formulas} formulas")
    if result.console:
        problems.append("JavaScript errors: " + " | ".join(result.console))
    return problems


def site_problems(inspected: dict[str, tuple[Load, str]]) -> dict[str, list[str]]:
    """{page: problems} for the pages of an inspect_site() result that have problems."""
    found = {rel: check_loaded_page(result, html) for rel, (result, html) in inspected.items()}
    return {rel: problems for rel, problems in found.items() if problems}


def check_site(site: Path, workdir: Path) -> dict[str, list[str]]:
    """Open every page of a built site; return {page: problems} for the pages with problems."""
    return site_problems(inspect_site(site, workdir))


def load_after_instant_navigation(site: Path, start: str, target: str, workdir: Path, without=()) -> tuple[Load, str]:
    """Open ``start``, then go to ``target`` by Material's instant navigation (no page load).

    A copy of the site is used, whose ``start`` page gets a script that navigates the way a
    click on a link does; files named in ``without`` are emptied in the copy. Returns the load (its DOM is ``target``'s content) and target's HTML.
    """
    copy = workdir / "site"
    shutil.copytree(site, copy)
    for name in without:  # files emptied in the copy, to show what they are needed for
        (copy / name).write_text("", encoding="utf-8")
    page = copy / start / "index.html"
    script = (
        "<script>document$.subscribe(function () {"
        f" if (location.pathname.endsWith('/{start}')) setTimeout(function () {{"
        f" location$.next(new URL('/{target}', location.href)); }}, 500); }});</script>"
    )
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8")
    with serve(copy) as base:
        result = load(base + start)
    return result, (site / target / "index.html").read_text(encoding="utf-8")


# What Material's copy button puts on the clipboard (its extract(): mark the code element
# data-md-copying, take data-copy or innerText, trim the end), for every button on the page,
# collected after Material has mounted them, with every collapsible block opened first (a
# reader opens it to copy from it; the text of a closed one is not rendered). It loads nothing.
COPY_READER = r"""<script>document$.subscribe(function () { setTimeout(function () {
  var out = [];
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });  // as a reader must
  document.querySelectorAll("button[data-clipboard-target]").forEach(function (button) {
    var el = document.querySelector(button.getAttribute("data-clipboard-target"));
    if (!el) return;
    el.setAttribute("data-md-copying", "");
    var holder = el.closest("[data-copy]");
    var text = holder ? holder.getAttribute("data-copy") : el.innerText;
    el.removeAttribute("data-md-copying");
    var box = el.closest(".highlight");
    var lang = box ? Array.from(box.classList).filter(function (c) { return c.indexOf("language-") === 0; })[0] : "";
    out.push({lang: (lang || "").replace("language-", ""), text: text.replace(/\s+$/, "")});
  });
  var data = document.createElement("script");
  data.id = "__copies"; data.type = "application/json";
  data.textContent = JSON.stringify(out).replace(/</g, "\\u003c");
  document.body.appendChild(data);
}, 300); });</script>"""


def inspect_site(site: Path, workdir: Path, workers: int = 3, only=None) -> dict[str, tuple[Load, str]]:
    """Open every page of a built site in the browser; return {page: (load, page's HTML)}.

    The pages are served from a copy of the site in which each HTML page also carries
    COPY_READER (``only``: just these pages), so one browser pass gives both what the reader sees (checked by
    check_loaded_page) and what the copy buttons give (used by the round trip).
    """
    from concurrent.futures import ThreadPoolExecutor

    copy = workdir / "site"
    shutil.copytree(site, copy)
    pages = [rel for rel in site_pages(site) if only is None or rel in only]
    for rel in pages:
        page = copy / rel
        page.write_text(page.read_text(encoding="utf-8").replace("</body>", COPY_READER + "</body>"), encoding="utf-8")
    with serve(copy) as base:
        def one(rel):
            url = base + (rel[: -len("index.html")] if rel.endswith("index.html") else rel)
            return rel, (load(url), (site / rel).read_text(encoding="utf-8"))

        with ThreadPoolExecutor(workers) as pool:
            return dict(pool.map(one, pages))


def screenshot(url: str, out: Path, dark: bool = False, width: int = 1280, height: int = 2400) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        flags = [*CHROMIUM_FLAGS, f"--user-data-dir={tmp}/profile", f"--window-size={width},{height}",
                 "--virtual-time-budget=15000", f"--screenshot={out}"]
        if dark:
            flags.append("--force-dark-mode")
            flags.append("--blink-settings=preferredColorScheme=0")
        subprocess.run([chromium(), *flags, url], capture_output=True, timeout=120, check=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    shot = sub.add_parser("screenshot")
    shot.add_argument("url")
    shot.add_argument("out", type=Path)
    shot.add_argument("--dark", action="store_true")
    shot.add_argument("--width", type=int, default=1280)
    shot.add_argument("--height", type=int, default=2400)
    args = parser.parse_args()
    screenshot(args.url, args.out, args.dark, args.width, args.height)
