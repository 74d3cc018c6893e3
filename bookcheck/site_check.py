"""Build the site and check it in a real browser (Debian chromium, headless).

One browser for all the checks: the system chromium, driven by Playwright (no browser
download), started once per test session (``Browser``; test_site.py's ``browser`` fixture).
``Browser.open(url)`` loads a page, waits until its diagrams and formulas have been drawn
(or have failed), and returns what the reader sees: the DOM, every request the page made,
console errors, and what each copy button gives. New checks of the site take a ``Load``
or call ``Browser.evaluate(url, js)``.

The site step (bookcheck.steps) builds the book once (``book_build``, the tests' ``book``
fixture) and opens every page once (``site_pass``); the browser runs in the test process's one
thread (Playwright's sync API).

Used by the site's tests on the real book and on fixture sites that must fail. Also a small
command line for looking at pages as a reader would:

    python -m bookcheck.site_check screenshot URL out.png [--dark] [--width 1280] [--height 2400]
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
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


from bookcheck.results import chromium  # noqa: E402 - the one place that finds the browser


# --------------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------------


@dataclass
class Build:
    returncode: int
    log: str
    seconds: float
    site: Path


def _build_command(dest: Path, config: Path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return [str(VENV_BIN / "mkdocs"), "build", "--strict", "-f", str(config), "-d", str(dest)], env


def build_site(dest: Path, config: Path = ROOT / "mkdocs.yml") -> Build:
    """``mkdocs build --strict`` into ``dest``. Notebooks are shown with their stored outputs
    (not executed; test_notebooks_anywhere.py proves those current). The build's hook makes the
    wheel of `snippets` when it is not current (overrides/hooks.py)."""
    command, env = _build_command(dest, config)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=config.parent, env=env, capture_output=True, text=True, timeout=600)
    return Build(proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start, Path(dest))


def book_build(workdir: Path) -> Build:
    """The book's ``mkdocs build --strict`` into ``workdir``/site; a build that raised is a failed
    Build whose log says why."""
    try:
        return build_site(workdir / "site")
    except Exception as exc:  # noqa: BLE001 - reported by the test that asks for it
        return Build(1, f"{type(exc).__name__}: {exc}", 0.0, workdir / "site")


def site_pass(site: Path):
    """(inspected, copied pages, structural problems, round-trip problems) of a built book:
    every page opened once on a phone (inspect_site with site_a11y.page_checks), then what the
    copy buttons give compared with what the harness ran (bookcheck.round_trip)."""
    from . import round_trip, site_a11y

    inspected = inspect_site(site, measure=site_a11y.page_checks)
    pages, structural = round_trip.copied_pages(inspected)
    return inspected, pages, structural, round_trip.round_trip(pages)


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
    (docs / "downloads").symlink_to(ROOT / "docs" / "downloads")  # the wheel (build_site makes it)
    nav = sorted(str(p.relative_to(pages)) for p in pages.rglob("*") if p.suffix in {".md", ".ipynb"})
    lines = [f"INHERIT: {ROOT / 'mkdocs.yml'}", "site_name: fixture", "nav:"] + [f"  - {p}" for p in nav]
    config = workdir / "mkdocs.yml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


# --------------------------------------------------------------------------------------------
# Serving
# --------------------------------------------------------------------------------------------


# The one loopback server (bookcheck.serving, shared with make pdf).
from bookcheck.serving import serve  # noqa: E402,F401 - site_check.serve, as the tests call it


def site_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as paths relative to its root."""
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))


# The whole book on one page (mkdocs-print-site-plugin), what `make pdf` prints: every page's
# content again. Its links and markers are checked with every page's; the browser pass
# over the site's pages (a phone, axe, diagrams at 390 px, the copy buttons) leaves it out:
# it is checked as a print, in the PDF (tests/test_pdf.py).
PRINT_PAGE = "print_page/index.html"


# --------------------------------------------------------------------------------------------
# The browser
# --------------------------------------------------------------------------------------------


@dataclass
class Load:
    url: str
    dom: str
    requests: list = field(default_factory=list)  # (page url, request url) made by the page
    console: list = field(default_factory=list)  # console errors and uncaught exceptions
    returncode: int = 0  # 0: the page loaded
    copies: list | None = None  # [{"lang", "text"}] as the copy buttons give them
    checks: dict = field(default_factory=dict)  # {check: problems} measured in the same load


# Runs in every page before its own scripts: counts mermaid renders started and in flight,
# through whichever object is `window.mermaid` (the site's stand-in, then the real library),
# and the elements KaTeX's auto-render has been run on (window.__typesetOrder: those elements,
# in the order it was run on them), so that "every diagram has been drawn or has failed, every
# formula typeset or failed" can be waited for exactly.
TRACK_RENDERS = r"""(() => {
  let current;
  window.__renders = {started: 0, pending: 0};
  Object.defineProperty(window, "mermaid", {
    configurable: true,
    get() { return current; },
    set(value) {
      if (value && typeof value.render === "function" && !value.__tracked) {
        const render = value.render;
        value.render = function () {
          window.__renders.started++; window.__renders.pending++;
          return Promise.resolve(render.apply(value, arguments))
            .finally(() => { window.__renders.pending--; });
        };
        value.__tracked = true;
      }
      current = value;
    },
  });
  // the same for KaTeX's auto-render: how many elements it has been run on, and which, in order
  let typeset;
  window.__typeset = 0;
  window.__typesetOrder = [];
  Object.defineProperty(window, "renderMathInElement", {
    configurable: true,
    get() { return typeset; },
    set(value) {
      typeset = typeof value !== "function" ? value : function (el) {
        window.__typesetOrder.push(el);
        try { return value.apply(this, arguments); } finally { window.__typeset++; }
      };
    },
  });
})();"""

# True when the page has settled: every diagram drawn or failed, every formula typeset or
# KaTeX done with it.
SETTLED = r"""() => {
  if (document.readyState !== "complete" || !document.querySelector("article")) return false;
  // Diagrams and KaTeX load when a reader scrolls near them (diagrams.js, math.js); a check sees
  // them all at once, as a printout does: both loaders release everything on "beforeprint".
  if (document.querySelector("pre.mermaid, .arithmatex:not([data-math])")) window.dispatchEvent(new Event("beforeprint"));
  const pre = document.querySelectorAll("pre.mermaid").length;
  const r = window.__renders || {started: 0, pending: 0};
  const diagrams = pre === 0 ? r.pending === 0 : (r.started > 0 && r.pending === 0);
  const formulas = document.querySelectorAll(".arithmatex").length;
  const math = formulas === 0 || document.querySelectorAll(".katex").length >= formulas
    || (window.__typeset || 0) >= formulas;
  // Layout has settled: every stylesheet and font in use has loaded, and each typeset display
  // formula has been measured with them (math.js marks it data-overflow="yes|no").
  const styles = Array.from(document.querySelectorAll('link[rel="stylesheet"]')).every((l) => l.sheet);
  const fonts = !document.fonts || document.fonts.status === "loaded";
  const measured = Array.from(document.querySelectorAll("div.arithmatex"))
    .every((el) => !el.querySelector(".katex") || el.hasAttribute("data-overflow"));
  return diagrams && math && styles && fonts && measured;
}"""

# What Material's copy button puts on the clipboard (its extract(): mark the code element
# data-md-copying, take data-copy or innerText, trim the end), for every button on the page,
# with every collapsible block opened first (a reader opens it to copy from it; the text of a
# closed one is not rendered).
COPY_READER = r"""() => {
  const out = [];
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  document.querySelectorAll("button[data-clipboard-target]").forEach((button) => {
    const el = document.querySelector(button.getAttribute("data-clipboard-target"));
    if (!el) return;
    el.setAttribute("data-md-copying", "");
    const holder = el.closest("[data-copy]");
    const text = holder ? holder.getAttribute("data-copy") : el.innerText;
    el.removeAttribute("data-md-copying");
    const box = el.closest(".highlight");
    const lang = box ? Array.from(box.classList).filter((c) => c.indexOf("language-") === 0)[0] : "";
    out.push({lang: (lang || "").replace("language-", ""), text: text.replace(/\s+$/, "")});
  });
  return out;
}"""


class BrowserMissing(RuntimeError):
    pass


class Browser:
    """One headless chromium (the system's, driven by Playwright) for every check of a session.

    Pages opened with the same context options share one browser context (its caches), unless
    opened ``fresh`` or with files answered empty (``page``). Requests to any host but 127.0.0.1
    are recorded and never leave the machine.
    """

    def __init__(self):
        path = chromium()
        if path is None:
            raise BrowserMissing("Debian chromium is not installed")
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=path, headless=True,
            args=[f for f in CHROMIUM_FLAGS if f != "--headless"]
            + ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
        )

    def close(self):
        if self._playwright is not None:
            self._browser.close()
            self._playwright.stop()
            self._playwright = None

    @contextlib.contextmanager
    def page(self, empty=(), options=None, fresh=False):
        """A fresh page. Pages opened with the same ``options`` (playwright context options:
        viewport, colour scheme, ...) share one browser context (its HTTP and code caches: the
        mermaid and KaTeX libraries are parsed once); ``empty``: URL globs answered with an
        empty file (as if emptied), in a context of their own; ``fresh``: a context of its own
        (an empty cache, as on a reader's first visit). Every page gets TRACK_RENDERS
        and site_a11y.INIT_SCRIPT (diagrams' shadow roots open to the checks)."""
        from bookcheck import site_a11y

        own = bool(empty) or fresh
        context = self._browser.new_context(**(options or {})) if own else self._shared_context(options)
        try:
            for pattern in empty:
                context.route(pattern, lambda route: route.fulfill(status=200, body="",
                                                                    content_type="application/javascript"))
            page = context.new_page()
            page.add_init_script(TRACK_RENDERS)
            page.add_init_script(site_a11y.INIT_SCRIPT)
            page.requests, page.errors = [], []
            page.on("request", lambda r: page.requests.append((page.url, r.url)))
            page.on("console", lambda m: page.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: page.errors.append(f"Uncaught {e}"))
            yield page
        finally:
            if own:
                context.close()
            else:
                page.close()

    def _shared_context(self, options=None):
        key = json.dumps(options or {}, sort_keys=True)
        contexts = self.__dict__.setdefault("_contexts", {})
        if key not in contexts:
            contexts[key] = self._browser.new_context(**(options or {}))
        return contexts[key]

    @staticmethod
    def settle(page, timeout_ms=60000):
        from bookcheck import site_a11y

        # A page settles when every diagram and formula has been drawn or has failed, and its
        # styles and fonts are in use (SETTLED); the timeout is reached only by a page whose
        # loader never runs (it is then reported by what is missing), so it is generous: a
        # loaded machine is slow, not wrong.
        site_a11y.wait_for_state(page, SETTLED, timeout_ms, polling=50)

    @staticmethod
    def result(page, copies=True, measure=None) -> Load:
        """What the reader sees. ``measure(page)`` ({check: problems}) runs first, on the page
        as loaded (the copy reader then opens every collapsible block)."""
        checks = measure(page) if measure is not None else {}
        return Load(page.url, page.content(), list(page.requests), list(page.errors), 0,
                    page.evaluate(COPY_READER) if copies else None, checks)

    def open(self, url: str, timeout_ms: int = 60000, empty=(), copies=True, options=None, measure=None,
             fresh=False) -> Load:
        """Load ``url``, let it settle, return what the reader sees (``fresh``: in a browser
        context of its own, see ``page``)."""
        return self.open_many([url], timeout_ms=timeout_ms, empty=empty, copies=copies,
                              options=options, measure=measure, fresh=fresh)[0]

    def open_many(self, urls: list[str], at_once: int = 2, timeout_ms: int = 60000, empty=(), copies=True,
                  options=None, measure=None, fresh=False) -> list[Load]:
        """Load ``urls``, ``at_once`` pages loading side by side; one Load per URL, with
        ``measure(page)``'s problems in its ``checks``.

        Each of the ``at_once`` tabs loads its URLs one after another, as a reader follows links
        with full loads: a new document each, after about:blank (which ends every request of the
        one before, so none is counted as the next page's). A tab reuses its renderer process,
        which a new tab would start again (16 to 19% of the browser's CPU time per page, measured).
        A tab whose load failed is closed and a new one takes its place: its error page would
        still be navigating when the next about:blank is asked for, and fail that load too."""
        results = []
        n = min(at_once, len(urls))
        stacks = [contextlib.ExitStack() for _ in range(n)]
        try:
            tabs = [stack.enter_context(self.page(empty, options, fresh)) for stack in stacks]
            for i in range(0, len(urls), at_once):
                opened = []
                for t, url in enumerate(urls[i:i + at_once]):
                    page = tabs[t]
                    try:
                        page.goto("about:blank")
                        page.requests.clear()
                        page.errors.clear()
                        page.goto(url, wait_until="commit", timeout=60000)
                        opened.append((t, url, page, None))
                    except Exception as exc:  # noqa: BLE001 - reported as a page that did not load
                        opened.append((t, url, page, exc))
                for t, url, page, exc in opened:
                    if exc is None:
                        self.settle(page, timeout_ms)
                        results.append(self.result(page, copies, measure))
                        continue
                    results.append(Load(url, "", list(page.requests), [str(exc)], 1, None))
                    stacks[t].close()
                    stacks[t] = contextlib.ExitStack()
                    tabs[t] = stacks[t].enter_context(self.page(empty, options, fresh))
        finally:
            for stack in stacks:
                stack.close()
        return results

    def run(self, fn, *args, **kwargs):
        """``fn(browser, *args, **kwargs)`` with this session's playwright Browser, for checks
        that make their own contexts (tests/test_site_a11y.py)."""
        return fn(self._browser, *args, **kwargs)

    def evaluate(self, url: str, script: str):
        """Load ``url``, let it settle, return ``script`` (a JS function) evaluated in it."""
        with self.page() as page:
            page.goto(url, wait_until="load", timeout=60000)
            self.settle(page)
            return page.evaluate(script)

    def navigate(self, start_url: str, target: str, empty=(), timeout_ms: int = 60000) -> Load:
        """Open ``start_url``, then go to ``target`` by Material's instant navigation (as a
        click on a link does: no page load); return the load (its DOM is target's)."""
        with self.page(empty) as page:
            page.goto(start_url, wait_until="load", timeout=60000)
            self.settle(page, timeout_ms)
            before = page.evaluate("() => document.title")
            page.evaluate("(t) => location$.next(new URL(t, location.href))", "/" + target)
            try:  # Material swaps the content in place: wait for the new page's title
                page.wait_for_function("(a) => document.title !== a[0] || location.pathname.endsWith(a[1])",
                                       arg=[before, target], timeout=min(timeout_ms, 10000))
            except Exception:  # noqa: BLE001 - the caller sees that the DOM is not target's
                pass
            self.settle(page, timeout_ms)
            return self.result(page, copies=False)


_BROWSER: Browser | None = None


def browser() -> Browser:
    """The session's one Browser (started at the first call; close_browser ends it)."""
    global _BROWSER
    if _BROWSER is None:
        _BROWSER = Browser()
    return _BROWSER


def close_browser():
    global _BROWSER
    if _BROWSER is not None:
        _BROWSER.close()
        _BROWSER = None


def check_loaded_page(result: Load, html: str) -> list[str]:
    """What is wrong with a page as the browser shows it (empty: nothing)."""
    problems = []
    dom = result.dom
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(result.url))
    if result.returncode != 0 or "<article" not in dom:
        problems.append(f"the page did not load (exit {result.returncode})")
    off_site = sorted({u for _, u in result.requests
                       if u.split(":", 1)[0] in {"http", "https", "ws", "wss"}
                       and not (u.startswith(origin + "/") or u == origin)})
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


def check_site(site: Path, workdir: Path | None = None) -> dict[str, list[str]]:
    """Open every page of a built site; return {page: problems} for the pages with problems."""
    return site_problems(inspect_site(site, workdir))


def load_after_instant_navigation(site: Path, start: str, target: str, workdir: Path | None = None,
                                  without=()) -> tuple[Load, str]:
    """Open ``start``, then go to ``target`` by Material's instant navigation (no page load).

    Files named in ``without`` are served empty, to show what they are needed for. Returns
    the load (its DOM is ``target``'s content) and target's HTML.
    """
    with serve(site) as base:
        result = browser().navigate(base + start, target, empty=[base + name for name in without],
                                    timeout_ms=4000 if without else 60000)
    return result, (site / target / "index.html").read_text(encoding="utf-8")


# The one load of every page: a phone, light scheme. Every per-page measurement is taken in it
# (site_a11y.page_checks: render-blocking scripts, diagrams at 390 px, axe); the other three
# axe modes run on one page per template (test_site_a11y).
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "color_scheme": "light"}


def page_url(base: str, rel: str) -> str:
    """The URL a reader opens for the built file ``rel`` (a directory's index.html: the directory)."""
    return base + (rel[: -len("index.html")] if rel.endswith("index.html") else rel)


def inspect_site(site: Path, workdir: Path | None = None, only=None, measure=None,
                 options=PHONE) -> dict[str, tuple[Load, str]]:
    """Open every page of a built site in the browser; return {page: (load, page's HTML)}.

    One load per page gives what the reader sees (checked by check_loaded_page), what the copy
    buttons give (the round trip) and ``measure(page)``'s problems (``load.checks``).
    ``only``: just these pages. Not the print page (PRINT_PAGE).
    """
    pages = [rel for rel in site_pages(site) if rel != PRINT_PAGE and (only is None or rel in only)]
    with serve(site) as base:
        urls = [page_url(base, rel) for rel in pages]
        loads = browser().open_many(urls, options=options, measure=measure)
    return {rel: (load, (site / rel).read_text(encoding="utf-8")) for rel, load in zip(pages, loads)}


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
