"""Browser checks of the reader's site, as plain functions over a playwright ``Page``.

Each ``*_problems`` function takes a sync playwright ``Page`` already navigated to a page of the
built site (with INIT_SCRIPT added to its context before navigation, see below) and returns a list
of problem strings (empty: nothing wrong). They are used by tests/test_site_a11y.py and can be run
from any shared browser pass:

- blocking_script_problems: no parser-blocking script over BLOCKING_BUDGET bytes (gzip).
- first_load_problems: the page loads at most FIRST_LOAD_BUDGET bytes (gzip) on a phone, every
  diagram drawn, and every request it made (its workers' included) is counted, fonts by use
  (FONTS: as on a first visit, though the pages before share the browser); Material's search
  files (SEARCH_FILES, the same for every page) are checked once against SEARCH_BUDGET.
- axe_problems: no axe-core violation of impact serious or critical (axe-core vendored in
  bookcheck/vendor/axe-core, not part of the site).
- diagram_problems: every diagram rendered (scrolled into view first: mermaid loads lazily),
  named (accTitle/accDescr), its smallest label at least MIN_LABEL_PX CSS px as shown, no wider
  at that size than the column of a desktop (DESKTOP_COLUMN_PX), and a diagram wider than its
  column (a phone's) scrolls in a keyboard-focusable region with a visible hint and opens with
  the last node it declares in view.
- formula_problems: every typeset display formula's box is as tall as the formula; one wider
  than its column scrolls in a keyboard-focusable box with a visible hint, with room before its
  start and after its end (measure_formulas gives the figures).
- width_problems: with every collapsible open, the page is no wider than the screen (what
  reaches past its edge outside a scroll region is named).
- linked_code_gap: in a link whose text is code, the rows of pixels between the lowest ink of the
  code's glyphs (an underscore's) and the link's underline (screenshots of the page).
- search_results: the pages Material's search lists for a query (typed in the search box);
  search_hits: each page with the sections shown under it and their scores (tests/test_search.py).

The module also measures: ``initial_load`` (bytes loaded, gzip; first_load_problems' figure),
``math_typeset_ms`` (time until KaTeX has typeset every formula on a throttled
connection). Sites are served by ``site_check.serve`` (gzip, as a real host serves them).
"""

from __future__ import annotations

import base64
import re
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
BLOCKING_BUDGET = 50 * 1024  # bytes, gzip: no render-blocking script may be larger
FIRST_LOAD_BUDGET = 500 * 1024  # bytes, gzip: the most a page may load on a phone, search apart
# Material's search: its index (search/search_index.json, the text of every page) and its worker,
# which Material fetches on every page, as its documentation describes. One pair of files for the
# whole site, fetched on a reader's first page and from the browser's cache after: checked once
# against SEARCH_BUDGET (tests/test_site_a11y.py, from the built files), not in each page's
# first load. Measured when the budget was restated: 478 KB (gzip) of index, 12 KB of worker.
SEARCH_BUDGET = 600 * 1024  # bytes, gzip
SEARCH_FILES = re.compile(r"/search/search_index\.json$|/assets/javascripts/workers/search\.[0-9a-f]+\.min\.js$")
MIN_LABEL_PX = 11.0  # CSS px: the smallest diagram label a reader must be able to read
# CSS px: the content column of a page on a desktop (1440 px wide, both sidebars shown; Material's
# layout). A diagram must fit it at MIN_LABEL_PX, so that only a phone scrolls one sideways:
# diagram_problems reads the width a diagram needs (the loader's min-width) on any screen, and
# tests/test_site_a11y.py measures this column at 1440 px.
DESKTOP_COLUMN_PX = 688
SERIOUS = {"serious", "critical"}
# Lighthouse's "slow 4G" mobile profile: 150 ms round trip, 1.6 Mbit/s down, 750 kbit/s up.
SLOW_4G = {"offline": False, "latency": 150, "downloadThroughput": 1.6e6 / 8, "uploadThroughput": 750e3 / 8}

# Material renders each diagram into a *closed* shadow root, which no check can look into. The
# tests open them (add this to the browser context before navigating); the site is unchanged.
INIT_SCRIPT = """
(function () {
  var attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    return attach.call(this, Object.assign({}, init, { mode: "open" }));
  };
})();
"""


# --------------------------------------------------------------------------------------------
# 1. Render-blocking scripts
# --------------------------------------------------------------------------------------------

BLOCKING_JS = """() => {
  var sizes = {};
  performance.getEntriesByType("resource").forEach(function (e) {
    sizes[e.name] = { encoded: e.encodedBodySize, decoded: e.decodedBodySize, blocking: e.renderBlockingStatus };
  });
  return Array.from(document.scripts)
    .filter(function (s) { return s.src && !s.async && !s.defer && s.type !== "module"; })
    .map(function (s) { return { src: s.src, size: sizes[s.src] || null }; });
}"""


def blocking_scripts(page) -> list[dict]:
    """Scripts the parser had to fetch and run before going on (classic, neither async nor
    defer, written in the HTML), with their size on the wire (gzip when served so)."""
    return page.evaluate(BLOCKING_JS)


def blocking_script_problems(page, budget: int = BLOCKING_BUDGET) -> list[str]:
    problems = []
    for script in blocking_scripts(page):
        size = script["size"]
        if size is None:
            problems.append(f"render-blocking script {script['src']}: its size is unknown (not loaded?)")
        elif size["encoded"] > budget:
            problems.append(
                f"render-blocking script {script['src']}: {size['encoded']} bytes on the wire "
                f"({size['decoded']} decoded), over the budget of {budget}"
            )
    return problems


# The fonts of the page's stylesheets (@font-face): {"used": the URL a browser fetches (the first
# of its src) for each face the document has loaded or is loading, "unused": every URL of each
# face none of whose instances in document.fonts has left "unloaded"}; a rule no face matches is
# in neither, and counted from the timeline. Read by use, not from the timeline: in a browser
# context that other pages of the site used, a page's timeline lists fonts of the cache that the
# page does not use (read when the stylesheet is), and has counted fonts it uses short (measured
# on chromium 156: KaTeX_AMS, 28 KB, listed on pages with no AMS symbol in every pass; in two
# passes of eight, 54 pages each 42 KB short, KaTeX_Main's and KaTeX_Math's size, left out or
# listed without a size).
FONTS = """() => {
  const key = (family, weight, style) => [family.replace(/^["']|["']$/g, ""),
    { normal: "400", bold: "700" }[weight] || weight, style].join("|");
  const faces = new Map();
  document.fonts.forEach((f) => {
    const k = key(f.family, f.weight, f.style);
    faces.set(k, (faces.get(k) || []).concat(f.status));
  });
  const used = [], unused = [];
  const read = (rules, base) => Array.from(rules).forEach((rule) => {
    if (rule.cssRules) read(rule.cssRules, base);
    if (!(rule instanceof CSSFontFaceRule)) return;
    const s = rule.style, statuses = faces.get(key(s.getPropertyValue("font-family"),
      s.getPropertyValue("font-weight") || "400", s.getPropertyValue("font-style") || "normal")) || [];
    const urls = Array.from(s.getPropertyValue("src").matchAll(/url\\(\\s*["']?([^"')]+)["']?\\s*\\)/g),
      (m) => new URL(m[1], base).href);
    if (!statuses.length) return; // no face of the document matches the rule: the timeline decides
    if (statuses.some((status) => status !== "unloaded")) used.push(urls[0]);
    else unused.push(...urls);
  });
  Array.from(document.styleSheets).forEach((sheet) => {
    let rules = null;
    try { rules = sheet.cssRules; } catch (e) { return; }
    read(rules, sheet.href || document.baseURI);
  });
  return { used: used.filter(Boolean), unused };
}"""

# The size on the wire of each of ``urls`` (Content-Length, which the site's server sends, gzip
# when it compresses; the body's length when a server sends none), fetched past the caches.
WIRE_SIZES = """async (urls) => Promise.all(urls.map(async (url) => {
  const response = await fetch(url, { cache: "no-store" });
  const body = await response.arrayBuffer(), length = response.headers.get("content-length");
  return { name: url, encoded: length === null ? body.byteLength : Number(length), type: "font" };
}))"""


def short_name(url: str) -> str:
    """A resource as a report names it: its file name, or for a page's folder (a URL ending in /)
    the folder's name and the slash ("hand-trace/"; "/" for the site's root)."""
    path = urlsplit(url).path
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name + "/" if path.endswith("/") else name


def initial_load(page) -> dict:
    """Bytes the page has loaded so far (on the wire, i.e. gzip when served so: the document and
    every resource in its timeline, a cached one counted at its size, Material's search files
    apart: SEARCH_FILES), and the blocking part. Fonts are counted by use (FONTS): every font a
    face the page uses needs, at its size on the wire (WIRE_SIZES when the timeline leaves it
    out or gives it no size: ``fonts_fetched``), and none it does not use (``fonts_unused``); so
    a page measures the same after other pages in one browser context as alone.
    ``uncounted``: requests the page made (page.requests, recorded by site_check's browser; they
    include its workers' requests) that are not in that timeline, so their bytes are not counted."""
    entries = page.evaluate(
        """() => performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"))
              .map(e => ({ name: e.name, encoded: e.encodedBodySize, type: e.initiatorType }))"""
    )
    fonts = page.evaluate(FONTS)
    blocking = sum((s["size"] or {}).get("encoded", 0) for s in blocking_scripts(page))
    entries = [e for e in entries if not SEARCH_FILES.search(e["name"].split("?", 1)[0])]
    names = {e["name"] for e in entries}
    made = [url for _, url in getattr(page, "requests", []) if url.startswith(("http:", "https:"))
            and not SEARCH_FILES.search(url.split("?", 1)[0])]
    unused = set(fonts["unused"])
    left_out = sorted(set(fonts["used"]) - {e["name"] for e in entries if e["encoded"] > 0})
    skipped = unused | set(left_out)
    counted = [e for e in entries if e["name"] not in skipped]
    counted += page.evaluate(WIRE_SIZES, left_out) if left_out else []
    return {"bytes": sum(e["encoded"] for e in counted), "requests": len(counted), "blocking": blocking,
            "largest": sorted(((e["encoded"], short_name(e["name"])) for e in counted), reverse=True)[:4],
            "fonts_unused": sorted(short_name(e["name"]) for e in entries if e["name"] in unused),
            "fonts_fetched": [short_name(url) for url in left_out],
            "uncounted": sorted({url for url in made if url not in names})}


def first_load_problems(page, budget: int = FIRST_LOAD_BUDGET, wait_ms: int = 10000) -> list[str]:
    """The page, as loaded on a phone, is within ``budget`` bytes (gzip). Measured once it has
    settled, with every diagram drawn (the site's pass draws them all, as a printout does): at
    least what a first load that shows only the first screen fetches. A request still in flight
    (a font the last layout asked for) is waited for, up to ``wait_ms``: a resource enters the
    timeline when it has arrived; one that never does (a worker's) is reported."""
    made = sorted({url for _, url in getattr(page, "requests", []) if url.startswith(("http:", "https:"))
                   and not SEARCH_FILES.search(url.split("?", 1)[0])})
    try:
        page.wait_for_function(
            """urls => { const seen = new Set(performance.getEntriesByType("navigation")
                           .concat(performance.getEntriesByType("resource")).map(e => e.name));
                         return urls.every(u => seen.has(u)); }""",
            arg=made, timeout=wait_ms, polling=100)
    except Exception:  # noqa: BLE001 - what is still missing is reported below
        pass
    load = initial_load(page)
    problems = []
    if not (load["bytes"] <= budget):  # NaN (a size not read) fails too
        largest = ", ".join(f"{name} {size // 1024} KB" for size, name in load["largest"])
        fetched = load["fonts_fetched"]
        problems.append(f"{load['bytes'] // 1024} KB loaded (gzip, {load['requests']} requests), over the budget of "
                        f"{budget // 1024} KB; the largest: {largest}"
                        + (f"; fonts the timeline left out, sized by a fetch: {', '.join(fetched)}" if fetched else ""))
    if load["uncounted"]:
        problems.append("requests whose bytes the page's timeline does not show (a worker's?): " + ", ".join(load["uncounted"]))
    return problems


def math_typeset_ms(context, url: str, conditions: dict = SLOW_4G, timeout_ms: int = 120000) -> float | None:
    """Milliseconds from navigation until every formula of ``url`` is typeset, with the network
    throttled (``conditions``, CDP Network.emulateNetworkConditions) and the cache empty.
    None when the page has no math."""
    page = context.new_page()
    try:
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        cdp.send("Network.emulateNetworkConditions", conditions)
        start = time.perf_counter()
        page.goto(url, wait_until="commit", timeout=timeout_ms)
        page.wait_for_selector(".md-content", timeout=timeout_ms)
        if page.evaluate("document.querySelectorAll('.arithmatex').length") == 0:
            return None
        page.wait_for_function(
            """() => { var all = document.querySelectorAll('.arithmatex');
                       return all.length && Array.from(all).every(e => e.querySelector('.katex')); }""",
            timeout=timeout_ms,
            polling=50,
        )
        return (time.perf_counter() - start) * 1000
    finally:
        page.close()


# --------------------------------------------------------------------------------------------
# 3. WCAG AA with axe-core
# --------------------------------------------------------------------------------------------


# What is left out when every rule of axe-core runs (axe_violations(..., every_rule=True)), each
# with the reason: a rule by its id, or every rule with a tag. Every other rule runs, the
# experimental ones and those axe-core leaves off by default included, at every impact.
NOT_RUN = {
    "focus-order-semantics": (
        "experimental: it asks every element in the tab order for a widget or landmark role, "
        "while WCAG 2.1.1's technique for a region that scrolls (which axe's own "
        "scrollable-region-focusable rule requires) is tabindex=0 on the region itself; it fires on "
        "the book's wide code, formulas and diagrams, Material's search results list and "
        "nbconvert's notebook cells"),
    "target-size": (
        "WCAG 2.2's target size, off by default in axe-core: on a desktop it fires only on the one "
        "or two links of the sidebar that Material's sticky sidebar title covers in part at the "
        "page's scroll position (the sidebar scrolls to the page's own link); in view, its links are "
        "18 px tall and 27 px apart, which passes"),
    "deprecated": "rules axe-core has deprecated and leaves off (aria-roledescription, duplicate-id, ...)",
    "wcag2aaa": ("WCAG AAA success criteria (7:1 contrast, identical links, no timed refresh): the "
                 "book's target is AA, and WCAG advises against requiring AAA of whole sites"),
}


def axe_violations(page, impacts=SERIOUS, every_rule=False) -> list[dict]:
    """axe-core's violations on the page (WCAG 2 A/AA and best-practice rules), of ``impacts``;
    with ``every_rule``, of every rule axe-core has (the experimental ones too) but NOT_RUN."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async ([every, skip]) => {
          const options = { resultTypes: ["violations"] };
          if (every) options.rules = Object.fromEntries(axe.getRules().map((r) =>
            [r.ruleId, { enabled: !skip.includes(r.ruleId) && !r.tags.some((t) => skip.includes(t)) }]));
          const r = await axe.run(document, options);
          return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map(n => ({ target: n.target.join(" "), summary: n.failureSummary,
                                       data: (n.any[0] || {}).data || null })) }));
        }""",
        [every_rule, sorted(NOT_RUN)],
    )
    return [v for v in found if every_rule or v["impact"] in impacts]


def axe_problems(page, every_rule=False) -> list[str]:
    problems = []
    for v in axe_violations(page, every_rule=every_rule):
        shown = "; ".join(
            n["target"] + (f" ({_contrast(n['data'])})" if v["id"] == "color-contrast" and n["data"] else "")
            for n in v["nodes"][:4]
        )
        problems.append(f"axe {v['id']} ({v['impact']}): {v['help']}; {len(v['nodes'])} node(s): {shown}")
    return problems


def axe_in_modes(page, modes, every_rule=False) -> dict[str, list[str]]:
    """axe_problems in each (scheme, width) of ``modes``, in order, on one load of the page: the
    reader's own actions between two modes (the window resized, the header's palette toggle
    clicked) instead of a load each. {"scheme-width": problems} for every mode."""
    found = {}
    for scheme, width in modes:
        switch_scheme(page, scheme)
        unmarked = resize(page, width)
        found[f"{scheme}-{width}"] = unmarked + axe_problems(page, every_rule=every_rule)
    return found


# After a resize (a window made narrower, a phone rotated) math.js, diagrams.js and Material (its
# code blocks, where a pointer can hover) measure every display formula, drawn diagram and code
# block again: the page is as one loaded at the new width once each is marked as wide (a scroll
# region reachable by keyboard) exactly when it is wider than its box. A code block inside a
# closed collapsible is not drawn, so Material's observer of its size does not see the resize
# until a reader opens it (and marks it then): it is left out. reader.js measures the other
# regions (tables, notebook outputs) 200 ms after a resize and records the width it measured at
# (data-book-regions-width); a region it made a tab stop (data-book-scrolls) must still scroll
# at the new width.
UNMARKED_FOR_WIDTH = """() => [].concat(
  [document.documentElement.getAttribute('data-book-regions-width')].filter((w) => w !== null && w !== String(innerWidth))
    .map((w) => 'regions measured at ' + w + ' px by reader.js, not at ' + innerWidth),
  Array.from(document.querySelectorAll('div.arithmatex')).filter((el) => el.querySelector('.katex')
    && el.getAttribute('data-overflow') !== (el.scrollWidth > el.clientWidth + 1 ? 'yes' : 'no'))
    .map((el) => 'formula ' + JSON.stringify(el.textContent.trim().slice(0, 40)) + ' (data-overflow=' + el.getAttribute('data-overflow') + ')'),
  Array.from(document.querySelectorAll('[data-book-diagram]')).filter((el) =>
    el.hasAttribute('tabindex') !== (el.scrollWidth > el.clientWidth + 1))
    .map((el) => 'diagram ' + JSON.stringify(el.getAttribute('aria-label') || '') + (el.hasAttribute('tabindex') ? ' (a tab stop, not wide)' : ' (wide, no tab stop)')),
  !matchMedia('(hover)').matches ? [] : Array.from(document.querySelectorAll('.md-content pre > code')).filter((el) =>
    !el.closest('details:not([open])') && el.hasAttribute('tabindex') !== (el.scrollWidth > el.offsetWidth))
    .map((el) => 'code block ' + JSON.stringify(el.textContent.trim().split('\\n')[0].slice(0, 40)) + (el.hasAttribute('tabindex') ? ' (a tab stop, not wide)' : ' (wide, no tab stop)')),
  Array.from(document.querySelectorAll('[data-book-scrolls]')).filter((el) =>
    !el.closest('details:not([open])') && !(el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1))
    .map((el) => 'region ' + JSON.stringify(el.getAttribute('aria-label') || el.tagName.toLowerCase()) + ' (a tab stop, not wide)')
)"""
MARKED_FOR_WIDTH = f"() => ({UNMARKED_FOR_WIDTH})().length === 0"


# Material eases some changes of a resize or a scheme (its header, search overlay, colours) over
# a quarter of a second: each running transition is taken to its end, the state a reader then
# sees, since a tab the browser does not draw (a second one) would not reach it.
FINISH_TRANSITIONS = """() => document.getAnimations().forEach((a) => {
  if (a.effect && a.effect.getTiming().iterations !== Infinity) a.finish(); })"""


def wait_for_state(page, state: str, timeout_ms: int, polling: int) -> bool:
    """Wait up to ``timeout_ms`` for ``state`` (a JS function) to hold on the page; whether it
    did. A state never reached is not an error here: what is missing is left for the checks to
    report, each by what it finds (a diagram not drawn, a formula not measured)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(state, timeout=timeout_ms, polling=polling)
        return True
    except PlaywrightTimeout:
        return False


def resize(page, width: int, height: int = 900, timeout_ms: int = 60000) -> list[str]:
    """The viewport made ``width`` x ``height`` CSS px, every formula, diagram and code block
    marked for it (waited for up to ``timeout_ms``), and every transition the resize started
    ended. Returns what is still not marked for the width after the wait (UNMARKED_FOR_WIDTH):
    a page loaded at that width would show it marked, so each is a problem."""
    size = page.viewport_size or {}
    if (size.get("width"), size.get("height")) != (width, height):
        page.set_viewport_size({"width": width, "height": height})
    marked = wait_for_state(page, MARKED_FOR_WIDTH, timeout_ms, polling=100)
    page.evaluate(FINISH_TRANSITIONS)
    if marked:
        return []
    return [f"not marked for {width} px {timeout_ms // 1000} s after a resize: {what}"
            for what in page.evaluate(UNMARKED_FOR_WIDTH)]


# Material's palette: the scheme each toggle label switches to, by the scheme the page shows.
SCHEMES = {"light": "default", "dark": "slate"}


def switch_scheme(page, scheme: str, timeout_ms: int = 30000) -> None:
    """The page shown in ``scheme`` ("light" or "dark"), as a reader switches it: a click on the
    header's palette toggle when it shows the other one; then every transition of the page's
    colours is ended (axe reads the colours as they are drawn)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme={scheme!r}: pass one of {', '.join(SCHEMES)}")
    shown = "() => document.body.getAttribute('data-md-color-scheme')"
    if page.evaluate(shown) != SCHEMES[scheme]:
        page.locator(f"form[data-md-component='palette'] label[title='Switch to {scheme} mode']").click()
        page.wait_for_function(f"s => ({shown})() === s", arg=SCHEMES[scheme], timeout=timeout_ms)
    page.evaluate(FINISH_TRANSITIONS)


def _contrast(data) -> str:
    if not isinstance(data, dict):
        return ""
    return f"{data.get('fgColor')} on {data.get('bgColor')} = {data.get('contrastRatio')}:1, needs {data.get('expectedContrastRatio')}"


# --------------------------------------------------------------------------------------------
# 2. Diagrams: rendered, named, readable on a phone
# --------------------------------------------------------------------------------------------


def reveal_diagrams(page, timeout_ms: int = 60000) -> int:
    """Scroll every diagram into view (mermaid loads when one approaches the viewport) and wait
    until none is left unrendered; return how many diagrams the page shows."""
    count = page.evaluate("document.querySelectorAll('pre.mermaid, div.mermaid').length")
    if not count:
        return 0
    for i in range(count):
        page.evaluate(
            "i => { const all = document.querySelectorAll('pre.mermaid, div.mermaid');"
            " if (all[i]) all[i].scrollIntoView({ block: 'center' }); }",
            i,
        )
        page.wait_for_timeout(50)
    page.wait_for_function(
        "() => !document.querySelector('pre.mermaid') &&"
        " Array.from(document.querySelectorAll('div.mermaid')).every(d => !d.shadowRoot || d.shadowRoot.querySelector('svg'))",
        timeout=timeout_ms,
        polling=100,
    )
    page.evaluate("window.scrollTo(0, 0)")
    return count


MEASURE_DIAGRAMS = """(minPx) => Array.from(document.querySelectorAll('div.mermaid')).map((host, i) => {
  const root = host.shadowRoot;
  if (!root) return { i, error: "its shadow root is closed (add site_a11y.INIT_SCRIPT to the context)" };
  const svg = root.querySelector("svg");
  if (!svg) return { i, error: "no svg" };
  const box = svg.getBoundingClientRect();
  const vb = svg.viewBox && svg.viewBox.baseVal;
  const scale = vb && vb.width ? box.width / vb.width : 1;
  let smallest = Infinity, text = "";
  root.querySelectorAll("text, tspan, foreignObject span, foreignObject p, foreignObject div").forEach(el => {
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) return;
    const px = parseFloat(getComputedStyle(el).fontSize) * scale;
    if (px < smallest) { smallest = px; text = el.textContent.trim().slice(0, 40); }
  });
  const title = svg.querySelector(":scope > title"), desc = svg.querySelector(":scope > desc");
  const overflows = host.scrollWidth > host.clientWidth + 1;
  // the width the loader keeps the drawing at (labels at MIN_LABEL_PX), and how much narrower
  // than the page's column the diagram's box is (inside an admonition, a tab, a list)
  const article = host.closest(".md-content__inner"), cs = article && getComputedStyle(article);
  const column = article ? article.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) : 0;
  const inset = article ? Math.max(0, column - host.getBoundingClientRect().width) : 0;
  // the node declared last (mermaid's ids end in "flowchart-NAME-N", N in the order declared)
  let last = null, n = -1;
  root.querySelectorAll("g.node[id*='flowchart-']").forEach(g => {
    const m = /-([0-9]+)$/.exec(g.id);
    if (m && +m[1] > n) { n = +m[1]; last = g; }
  });
  const hr = host.getBoundingClientRect(), lr = last && last.getBoundingClientRect();
  const lastShown = !last || (lr.left >= hr.left - 1 && lr.right <= hr.right + 1);
  const hint = host.nextElementSibling && host.nextElementSibling.classList.contains("book-scroll-hint")
    ? host.nextElementSibling : null;
  return { i, smallest: Math.round(smallest * 100) / 100, text, scale,
           title: title ? title.textContent.trim() : "", desc: desc ? desc.textContent.trim() : "",
           label: svg.getAttribute("aria-labelledby") || "", overflows, column, inset,
           minWidth: Math.round(parseFloat(svg.style.minWidth) || 0),
           focusable: host.tabIndex >= 0, lastShown, lastNode: last ? last.id : "", hintShown: !!hint && hint.offsetParent !== null && getComputedStyle(hint).visibility !== "hidden" };
})"""


def measure_diagrams(page) -> list[dict]:
    reveal_diagrams(page)
    return page.evaluate(MEASURE_DIAGRAMS, MIN_LABEL_PX)


def diagram_problems(page, min_px: float = MIN_LABEL_PX, desktop_px: float = DESKTOP_COLUMN_PX) -> list[str]:
    problems = []
    for d in measure_diagrams(page):
        where = f"diagram {d['i'] + 1}"
        if "error" in d:
            problems.append(f"{where}: {d['error']}")
            continue
        room = desktop_px - d["inset"]
        if d["minWidth"] > room + 1:
            problems.append(f"{where}: its labels need it {d['minWidth']} CSS px wide, more than the {room:.0f} px "
                            f"it has on a desktop (1440 px), where it would open scrolled: draw it top to bottom "
                            f"(flowchart TB), with fewer boxes a row or shorter labels")
        if d["smallest"] < min_px:
            problems.append(f"{where}: its smallest label ({d['text']!r}) is {d['smallest']} CSS px, under {min_px}")
        if not d["title"] or not d["desc"]:
            problems.append(f"{where}: no accessible title and description (accTitle/accDescr)")
        if d["overflows"] and not d["focusable"]:
            problems.append(f"{where}: wider than the column but its scroll region cannot be reached by keyboard")
        if d["overflows"] and not d["hintShown"]:
            problems.append(f"{where}: wider than the column and no visible hint that it scrolls")
        if d["overflows"] and not d["lastShown"]:
            problems.append(f"{where}: wider than the column and its last node ({d['lastNode']}) is off-screen when it opens")
    return problems


# --------------------------------------------------------------------------------------------
# 2b. Display formulas: as tall as their box; a wide one scrolls, with a hint and margins
# --------------------------------------------------------------------------------------------

MEASURE_FORMULAS = """() => Array.from(document.querySelectorAll('div.arithmatex')).map((box, i) => {
  const math = box.querySelector('.katex');
  if (!math) return { i, typeset: false };
  const b = box.getBoundingClientRect(), m = math.querySelector('.katex-html') || math;
  // the typeset formula's ink box: the union of KaTeX's lines, at the box's scroll position 0
  const keep = box.scrollLeft; box.scrollLeft = 0;
  const lines = Array.from(m.children).map((c) => c.getBoundingClientRect()).filter((r) => r.width);
  const left = Math.min(...lines.map((r) => r.left)), right = Math.max(...lines.map((r) => r.right));
  const k = math.getBoundingClientRect();
  box.scrollLeft = keep;
  const hint = box.nextElementSibling && box.nextElementSibling.classList.contains('book-scroll-hint') ? box.nextElementSibling : null;
  return { i, typeset: true, boxHeight: b.height, mathHeight: k.height,
           wide: box.scrollWidth > box.clientWidth + 1, marked: box.getAttribute('data-overflow'),
           focusable: box.tabIndex >= 0,
           hintShown: !!hint && !hint.hidden && hint.offsetParent !== null,
           before: left - b.left, after: box.scrollWidth - (right - b.left),
           text: (box.textContent || '').trim().slice(0, 40) };
})"""
FORMULA_MARGIN_PX = 8  # the least room before a wide formula's start and after its end


def measure_formulas(page) -> list[dict]:
    return page.evaluate(MEASURE_FORMULAS)


def formula_problems(page) -> list[str]:
    problems = []
    for f in measure_formulas(page):
        where = f"display formula {f['i'] + 1}"
        if not f["typeset"]:
            continue  # an untypeset formula is reported by the site's pass (check_loaded_page)
        if not (abs(f["boxHeight"] - f["mathHeight"]) <= 2):
            problems.append(f"{where} ({f['text']!r}): its box is {f['boxHeight']:.0f} px tall for "
                            f"{f['mathHeight']:.0f} px of formula")
        if f["wide"]:
            if f["marked"] != "yes" or not f["focusable"]:
                problems.append(f"{where}: wider than the column but its box cannot be reached by keyboard")
            if not f["hintShown"]:
                problems.append(f"{where}: wider than the column and no visible hint that it scrolls")
            if not (min(f["before"], f["after"]) >= FORMULA_MARGIN_PX):
                problems.append(f"{where}: wider than the column and flush to an edge of its box "
                                f"({f['before']:.0f} px before, {f['after']:.0f} px after)")
        elif f["hintShown"]:
            problems.append(f"{where}: fits its column but shows the hint that it scrolls")
    return problems


# --------------------------------------------------------------------------------------------
# 2c. The page's width: no wider than the screen, every collapsible open
# --------------------------------------------------------------------------------------------

# Opens every <details> (a reader opens an answer), then lists the elements that reach past the
# right edge of the screen outside any scroll region: the outermost of each, its tag, the class
# of its parent and the start of its text. A scroll region (overflow-x other than visible)
# contains what it holds; the page's own width is the document's scroll width.
OPEN_AND_MEASURE_WIDTH = """() => {
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const width = document.documentElement.clientWidth, candidates = [], found = [];
  const scrolls = (el) => { for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    if (getComputedStyle(p).overflowX !== 'visible') return true; } return false; };
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0) continue;
    // its box reaches past the edge, or its content does (a line of a <pre>, which wraps nothing)
    const box = r.right > width + 1;
    if ((box || (getComputedStyle(el).overflowX === 'visible' && el.scrollWidth > el.clientWidth + 1
                 && r.left + el.scrollWidth > width + 1)) && !scrolls(el)) candidates.push({ el, box });
  }
  // the outermost that sticks out: an element whose box does, else the innermost whose content does
  for (const c of candidates) {
    if (found.some((f) => f.contains(c.el))) continue;
    if (!c.box && candidates.some((d) => d.el !== c.el && c.el.contains(d.el))) continue;
    found.push(c.el);
  }
  return { width, scrollWidth: document.documentElement.scrollWidth, out: found.map((el) =>
    el.tagName.toLowerCase() + ' in ' + el.parentElement.tagName.toLowerCase()
    + (el.parentElement.className ? '.' + String(el.parentElement.className).split(' ')[0] : '')
    + ': ' + (el.textContent || '').trim().slice(0, 40)) };
}"""


def width_problems(page) -> list[str]:
    """The page, with every collapsible open, is no wider than the screen: what sticks out of
    it, outside any scroll region, is listed. It opens the page's <details>, so it is the last
    check of a load."""
    found = page.evaluate(OPEN_AND_MEASURE_WIDTH)
    if found["scrollWidth"] <= found["width"] + 1 and not found["out"]:
        return []
    return [f"{found['scrollWidth']} px wide on a screen of {found['width']} px, its collapsibles open: "
            + "; ".join(found["out"][:3] or ["no element found outside a scroll region"])]


# A link whose text is code, holding an underscore, shown as it is, without its underline, and
# without its text: the page's own rendering, through screenshots (a PNG read by the browser).
LINKED_CODE = "a:not(.md-button) > code"
INK_ROWS = """async (shots) => {
  let width = 0, height = 0;
  const pixels = await Promise.all(shots.map(async (b64) => {
    const image = await createImageBitmap(await (await fetch('data:image/png;base64,' + b64)).blob());
    [width, height] = [image.width, image.height];
    const canvas = new OffscreenCanvas(image.width, image.height);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(image, 0, 0);
    return ctx.getImageData(0, 0, image.width, image.height).data;
  }));
  // rows (of device pixels) where two shots differ
  const differ = (a, b) => { const rows = [];
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) { const i = 4 * (y * width + x);
      if (Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) > 60) { rows.push(y); break; } }
    return rows; };
  return { underline: differ(pixels[0], pixels[1]), ink: differ(pixels[1], pixels[2]) };
}"""


def linked_code_gap(page, contains: str = "_") -> dict:
    """The first link on the page whose text is code holding ``contains``: its text, the rows of
    device pixels its underline and its glyphs' ink cover, and the gap between them (rows of
    neither, under the lowest ink and over the line; < 1: the line touches or covers the ink)."""
    handle = page.evaluate_handle(
        "([sel, c]) => Array.from(document.querySelectorAll('.md-typeset ' + sel)).find((el) => el.textContent.includes(c)) || null",
        [LINKED_CODE, contains])
    code = handle.as_element()
    assert code is not None, f"no link whose code holds {contains!r} on {page.url}"
    code.scroll_into_view_if_needed()
    box = code.bounding_box()
    clip = {"x": box["x"], "y": box["y"], "width": box["width"], "height": box["height"] + 12}
    shots = []
    for style in ("", "text-decoration: none !important", "text-decoration: none !important; --x: 1"):
        code.evaluate("(el, s) => { el.parentElement.style.cssText = s; el.style.color = s.includes('--x') ? 'transparent' : ''; }", style)
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        shots.append(base64.b64encode(page.screenshot(clip=clip)).decode())
    code.evaluate("(el) => { el.parentElement.style.cssText = ''; el.style.color = ''; }")
    rows = page.evaluate(INK_ROWS, shots)
    gap = (min(rows["underline"]) - max(rows["ink"]) - 1) if rows["underline"] and rows["ink"] else None
    return {"text": code.text_content(), "gap": gap, **rows}


def axe_after_diagrams(page) -> list[str]:
    reveal_diagrams(page)
    return axe_problems(page)


def page_checks(page) -> dict[str, list[str]]:
    """Every per-page check, in one load of a settled page (site_check's pass over the site):
    render-blocking scripts, diagrams (revealed, then measured), axe-core, then the bytes loaded
    (after the diagrams: all of them drawn), then the page's width with its collapsibles open."""
    checks = {"blocking": blocking_script_problems(page), "diagrams": diagram_problems(page),
              "formulas": formula_problems(page), "axe": axe_problems(page)}
    checks["first_load"] = first_load_problems(page)
    checks["width"] = width_problems(page)  # last: it opens every collapsible
    return checks


# --------------------------------------------------------------------------------------------
# 5. Search
# --------------------------------------------------------------------------------------------


FIRST_RESULTS = 10  # Material lists ten results, then four more each time the list is scrolled to its end


def _enter_query(page, query: str, timeout_ms: int, paste: bool = False) -> None:
    """Enter ``query`` in Material's search box and wait for the list of its results. With
    ``paste``, as a reader pastes it: on one line, then the book's handling of a paste
    (assets/js/search.js) is waited for, and the results of what the box then holds.

    Material searches on each keyup and writes the count of each answer beside the box's
    current text, so an answer to an earlier text that comes late would pass for the query's.
    The box is first emptied and its own answer waited for: Material's placeholder ("Type to
    start searching", from the page's translations), not "Initializing search", which the
    page shows until the index is loaded. Then the query is entered whole and one keyup sent:
    the next count shown is the query's. Every wait is for a state of the page, none for a
    time. A query of several lines is entered as the box holds a pasted one: on one line."""
    box = page.locator("input[data-md-component='search-query']")
    button = page.locator("label.md-header__button[for='__search']")  # shown on a phone only
    if button.is_visible() and not page.evaluate("document.querySelector('[data-md-toggle=search]').checked"):
        button.click()  # the box opens from this button in the header
    box.click()
    state = """([q, wantEmpty]) => {
        const m = document.querySelector('.md-search-result__meta');
        const box = document.querySelector("input[data-md-component='search-query']");
        if (!m || box.value !== q) return false;
        const t = JSON.parse(document.getElementById('__config').textContent).translations;
        const text = m.textContent.trim();
        if (wantEmpty) return text === t["search.result.placeholder"];
        const other = t["search.result.other"].split("#").map(s => s.replace(/[.*+?^${}()|[\\]\\\\]/g, "\\\\$&"));
        const count = new RegExp("^" + other.join("[0-9.]+k?") + "$");
        return text === t["search.result.none"] || text === t["search.result.one"] || count.test(text); }"""
    box.fill("")
    box.press("End")
    page.wait_for_function(state, arg=["", True], timeout=timeout_ms)
    if paste:
        line = " ".join(query.split())
        box.evaluate("""(el, q) => { el.removeAttribute("data-book-pasted"); el.value = q;
            el.dispatchEvent(new InputEvent("input", {inputType: "insertFromPaste", bubbles: true})); }""", line)
        page.wait_for_function("""q => document.querySelector("input[data-md-component='search-query']")
            .getAttribute("data-book-pasted") === q""", arg=line, timeout=timeout_ms)
    else:
        box.fill(query)
    box.press("End")
    page.wait_for_function(state, arg=[box.input_value(), False], timeout=timeout_ms)


def search_hits(page, query: str, timeout_ms: int = 30000, paste: bool = False) -> list[list[tuple[str, float]]]:
    """What Material's search lists for ``query`` entered (``paste``: pasted) in the search box: the first
    FIRST_RESULTS pages, each a list of (address relative to the site's root, with its anchor;
    score) of the page and of the sections shown under it, in the order shown. [] for "No
    matching documents"."""
    _enter_query(page, query, timeout_ms, paste)
    items = page.evaluate("""() => Array.from(document.querySelectorAll('.md-search-result__item')).map(li =>
        Array.from(li.querySelectorAll('a.md-search-result__link')).map(a =>
            [a.href, parseFloat(a.querySelector('article').dataset.mdScore)]))""")
    base = page.evaluate("() => new URL(JSON.parse(document.getElementById('__config').textContent).base + '/', location.href).href")
    page.keyboard.press("Escape")

    def address(href):
        href = re.sub(r"\?[^#]*", "", href)  # Material adds ?h=words (highlighting)
        return href[len(base):] if href.startswith(base) else href

    return [[(address(href), score) for href, score in group] for group in items]


def search_results(page, query: str, scroll: bool = False, timeout_ms: int = 30000) -> list[str]:
    """The pages Material's search lists for ``query`` entered in the search box, in order
    (paths relative to the site's root): the first FIRST_RESULTS shown, or with ``scroll``
    every result (the list is scrolled until it holds as many as its header counts)."""
    _enter_query(page, query, timeout_ms)
    meta = page.locator(".md-search-result__meta").text_content()
    count = re.match(r"^\s*(\d+) matching", meta)
    assert count or re.match(r"^\s*No matching", meta), (query, meta)
    total = int(count.group(1)) if count else 0
    if scroll and total > FIRST_RESULTS:
        # Material appends a batch when the list's end comes into view: scroll to the end, and
        # back to the top when the end is already shown, until every result is listed
        page.wait_for_function(
            """n => { const s = document.querySelector('.md-search__scrollwrap');
                      if (document.querySelectorAll('.md-search-result__item').length >= n) return true;
                      s.scrollTop = s.scrollTop + s.clientHeight >= s.scrollHeight - 1 ? 0 : s.scrollHeight;
                      return false; }""",
            arg=total, timeout=timeout_ms, polling=50)
    shown = total if scroll else min(total, FIRST_RESULTS)
    assert page.locator(".md-search-result__item").count() == shown, (query, meta)
    hrefs = page.eval_on_selector_all(".md-search-result__item > .md-search-result__link", "els => els.map(e => e.href)")
    base = page.evaluate("() => new URL(JSON.parse(document.getElementById('__config').textContent).base + '/', location.href).href")
    seen = []
    for href in hrefs:
        href = href.split("#", 1)[0].split("?", 1)[0]  # Material adds ?h=query (highlighting)
        rel = href[len(base):] if href.startswith(base) else href
        if rel not in seen:
            seen.append(rel)
    page.keyboard.press("Escape")
    return seen
