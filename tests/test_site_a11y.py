"""The reader's site: fast on a phone, diagrams readable at 390 px, WCAG AA, search that finds
API names, a site_url in every build. The browser checks are the functions of site_a11y.py;
fixture pages under tests/fixtures/a11y prove that each one rejects what it claims to reject.

Browser tests need playwright (a pinned dependency) and Debian's chromium. With CI=true a check
that cannot run fails; elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bookcheck import site_a11y, site_check
from bookcheck.model import config, plugin_config
from bookcheck.model import parse_page

ROOT = site_check.ROOT
DOCS = ROOT / "docs"
FIXTURES = Path(__file__).parent / "fixtures" / "a11y"
# Every mode a reader can be in, in the order one load goes through them (site_a11y.axe_in_modes:
# a resize or the palette toggle between two): checked on one page per template (TEMPLATES) and
# a few more (EVERY_RULE_PAGES); every page is checked in the first, in the site's one pass.
MODES = (("light", 390), ("light", 1440), ("dark", 1440), ("dark", 390))
TEMPLATES = {
    "index.html": "the home page",
    "part1/hand-trace/index.html": "a Markdown page with diagrams, math, tables and collapsible answers",
    "part1/jacobians/index.html": "a Markdown page with wide display formulas",
    "notebooks/01-hand-trace/index.html": "a notebook page",
    "reference/drills/index.html": "a drill page",
    "404.html": "the 404 page",
}

# API name -> the page that teaches it (a search for the name must list that page).
API_PAGES = {
    "register_hook": "part6/hooks/",
    "clip_grad_norm_": "part6/gradient-health/",
    "register_post_accumulate_grad_hook": "part6/optimizer-in-backward/",
    "functional_call": "part6/torch-func/",
    "set_detect_anomaly": "part1/backward-failures/",
    "retain_grad": "part1/tracking/",
    "inference_mode": "part2/tracking-off/",
    "requires_grad_": "part1/tracking/",
    "gradcheck": "part2/gradient-checking/",
    "once_differentiable": "part2/custom-gradients/",
    "no_grad": "part2/tracking-off/",
    "retain_graph": "part1/forks/",
}


# --------------------------------------------------------------------------------------------
# Without a browser
# --------------------------------------------------------------------------------------------


def test_every_diagram_has_an_accessible_title_and_description():
    missing = []
    count = 0
    for page in sorted(DOCS.rglob("*.md")):
        for block in parse_page(page):
            if block.syntax != "mermaid":
                continue
            count += 1
            for key in ("accTitle", "accDescr"):
                if not re.search(rf"^\s*{key}\s*:\s*\S", block.code, re.M):
                    missing.append(f"{block.where}: no {key}")
    assert count >= 30, count
    assert missing == []


def test_search_separator_keeps_api_names_whole():
    separator = plugin_config("search").get("separator")
    assert separator, "plugins.search.separator is not set in mkdocs.yml"
    words = [w for w in re.split(separator, "a.register_hook(h); torch.autograd.set_detect_anomaly(True) "
                                            "clip_grad_norm_(p, 1.0) x.retain_grad() torch 2.13.0") if w]
    for name in ("register_hook", "set_detect_anomaly", "clip_grad_norm_", "retain_grad", "2.13.0"):
        assert name in words, (name, words)
    # Material's default (white space and hyphens) leaves `a.register_hook(h);` one word:
    assert "register_hook" not in re.split(r"[\s\-]+", "a.register_hook(h);")


def test_site_url_defaults_to_the_local_address_and_is_published_from_one_place():
    # The text, not the value: the value depends on SITE_URL; the text holds the !ENV default.
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r'^site_url: !ENV \[SITE_URL, "http://127\.0\.0\.1:8000/"\]$', text, re.M), text[:600]
    workflow = (ROOT / ".github" / "workflows" / "publish.yml").read_text(encoding="utf-8")
    assert len(re.findall(r"^\s*SITE_URL:", workflow, re.M)) == 1


@pytest.fixture(scope="module")
def built(book):
    """The built site's folder (the session's build)."""
    assert book.returncode == 0, book.log[-3000:]
    return book.site


def html_pages(site: Path) -> list[str]:
    return [p for p in site_check.site_pages(site) if p != "404.html"]


CANONICAL = re.compile(r'<link rel="canonical" href="([^"]*)"')


def test_sitemap_lists_every_page_and_instant_navigation_is_on(built):
    sitemap = (built / "sitemap.xml").read_text(encoding="utf-8")
    locs = re.findall(r"<loc>(.*?)</loc>", sitemap)
    # Every page but the print page, a copy of all of them (a search engine would send a reader
    # to one 7 MB page).
    pages = [rel for rel in html_pages(built) if rel != site_check.PRINT_PAGE]
    assert len(pages) < len(html_pages(built)), "no print page was built"
    assert len(locs) == len(pages), (len(locs), len(pages))
    assert not any(loc.endswith("/print_page/") for loc in locs), locs
    assert all(loc.startswith("http") for loc in locs)
    page = (built / "part1" / "hand-trace" / "index.html").read_text(encoding="utf-8")
    assert CANONICAL.search(page).group(1).startswith("http")  # a page with diagrams, too
    # The only absolute address in a <link> is the canonical one, in Material's form, on every
    # page (mermaid2 sorts the attributes of a page with diagrams: site_hooks.py writes it back).
    for rel in site_check.site_pages(built):
        text = (built / rel).read_text(encoding="utf-8")
        links = re.findall(r"<link [^>]*>", text)
        absolute = [tag for tag in links if re.search(r'href="(?:https?:)?//', tag)]
        assert all(CANONICAL.match(tag) for tag in absolute), (rel, absolute)
    config = re.search(r'<script id="__config" type="application/json">(.*?)</script>', page).group(1)
    assert '"navigation.instant"' in config


def test_materials_search_files_are_within_their_budget(built):
    """Material's search index (every page's text, and the page of errors' data for a pasted
    message, "book_errors") and its worker, the same two files for every page: within
    site_a11y.SEARCH_BUDGET (gzip, as served), the one place they are counted. Every page's
    config names Material's own worker, an existing file."""
    import gzip

    index = built / "search" / "search_index.json"
    full = json.loads(index.read_text(encoding="utf-8"))
    assert len(full["docs"]) >= 100 and any(d["location"] == "part6/hooks/" for d in full["docs"])
    assert full["book_errors"]["entries"], "no error data in the index (overrides/hooks.py)"
    workers = sorted((built / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    assert len(workers) == 1, workers
    for rel in site_check.site_pages(built):
        html = (built / rel).read_text(encoding="utf-8")
        config = json.loads(re.search(r'<script id="__config" type="application/json">(.*?)</script>', html, re.S).group(1))
        assert config["search"].split("/")[-1] == workers[0].name, (rel, config["search"])
    assert all(site_a11y.SEARCH_FILES.search("/" + f.relative_to(built).as_posix()) for f in (index, workers[0]))
    size = sum(len(gzip.compress(f.read_bytes(), 6)) for f in (index, workers[0]))
    assert size <= site_a11y.SEARCH_BUDGET, f"{size // 1024} KB (gzip) of search files, over {site_a11y.SEARCH_BUDGET // 1024} KB"
    # The verification page states their size as last measured: within a twentieth of it.
    stated = re.search(r"(\d+) KB at the last measurement",
                       " ".join((DOCS / "reference" / "verification.md").read_text(encoding="utf-8").split()))
    assert stated, "the verification page no longer states the search files' size"
    assert abs(size / 1024 - int(stated.group(1))) <= 0.05 * int(stated.group(1)), (size // 1024, stated.group(0))


def test_every_nav_section_has_an_index_page_listing_its_pages(built):
    """Material's navigation.indexes: each section of the nav opens with an index.md, so /paths/
    and /part1/ are pages; an index page holding <!-- section-pages --> links every other page
    of its section."""
    nav = config()["nav"]
    assert "navigation.indexes" in config()["theme"]["features"]
    sections = {title: [next(iter(e.values())) if isinstance(e, dict) else e for e in value]
                for item in nav if isinstance(item, dict) for title, value in item.items() if isinstance(value, list)}
    assert len(sections) >= 9, sorted(sections)
    for title, pages in sections.items():
        index = pages[0]
        assert index.endswith("/index.md"), (title, index)
        folder = index.removesuffix("/index.md")
        assert (built / folder / "index.html").is_file(), title
        if "<!-- section-pages -->" not in (DOCS / index).read_text(encoding="utf-8"):
            continue
        html = (built / folder / "index.html").read_text(encoding="utf-8")
        article = html.split("<article", 1)[1].split("</article>", 1)[0]
        links = set(re.findall(r'<a href="([^"#]+)"', article))
        wanted = {os.path.relpath(p.removesuffix(".md").removesuffix(".ipynb"), folder) + "/" for p in pages[1:]}
        assert wanted <= links, (title, sorted(wanted - links))


def test_404_page_links_from_the_base_path(built):
    """The 404 page is served at any depth, so its links cannot be relative: they start at the
    site's base path (the path of site_url)."""
    html = (built / "404.html").read_text(encoding="utf-8")
    base = urlsplit(CANONICAL.search((built / "index.html").read_text(encoding="utf-8")).group(1)).path
    assert base.startswith("/") and base.endswith("/"), base
    links = re.findall(r'(?:href|src)="([^"#:]+)"', html)
    assets = [u for u in links if "/assets/" in u]
    assert assets, links[:10]
    assert all(u.startswith(base) for u in assets), [u for u in assets if not u.startswith(base)]


def meta_tags(html: str) -> dict[str, str]:
    """{name or property: content} of a page's <meta> tags (in any attribute order: the mermaid2
    plugin re-serialises pages with diagrams)."""
    out = {}
    for tag in re.findall(r"<meta\b[^>]*>", html):
        attrs = dict(re.findall(r'([\w:-]+)="([^"]*)"', tag))
        key = attrs.get("name") or attrs.get("property")
        if key and "content" in attrs:
            out[key] = attrs["content"]
    return out


def test_pages_have_their_own_description_and_open_graph_tags(built):
    seen = {}
    for rel in html_pages(built):
        html = (built / rel).read_text(encoding="utf-8")
        meta = meta_tags(html)
        assert meta.get("description"), rel
        for prop in ("og:title", "og:description", "og:type", "og:url", "og:site_name"):
            assert meta.get(prop), (rel, prop)
        assert meta["og:description"] == meta["description"], rel
        seen.setdefault(meta["description"], []).append(rel)
        assert re.search(r'<link [^>]*href="[^"]*assets/images/logo\.svg"[^>]*rel="icon"|<link rel="icon" href="[^"]*logo\.svg"', html), rel
    # The print page is the whole book: it has the site's description, as the home page has.
    md_pages = [rel for rel in html_pages(built) if "notebooks/" not in rel and rel != site_check.PRINT_PAGE]
    shared = {d[:70]: v for d, v in seen.items() if len(v) > 1}
    alone = [rel for rel in md_pages if len(seen[meta_tags((built / rel).read_text(encoding="utf-8"))["description"]]) == 1]
    assert len(alone) >= len(md_pages) - 3, shared


def test_notebook_pages_carry_no_inline_jupyter_css(built):
    pages = [rel for rel in html_pages(built) if rel.startswith("notebooks/")]
    assert len(pages) >= 4, pages
    for rel in pages:
        html = (built / rel).read_text(encoding="utf-8")
        assert "<style" not in html, rel
        assert len(html.encode()) < 150_000, (rel, len(html.encode()))
        assert "clipboard-copy" not in html, rel  # Material's copy button only


# An element's id, and a link with an anchor, in double or single quotes (the print page's
# sections are written id='section-3').
ID = re.compile(r"""\sid=["']([^"']*)""")
ANCHOR_LINK = re.compile(r"""\shref=["']([^"'#]*#[^"']*)""")


def test_every_toc_link_and_in_page_anchor_resolves(built):
    """Every link to an anchor (the table of contents included, notebooks and the print page
    too) points at an id that exists on the page it names."""
    ids = {}
    for rel in site_check.site_pages(built):
        ids[rel] = set(ID.findall((built / rel).read_text(encoding="utf-8")))
    broken = []
    for rel in html_pages(built):
        html = (built / rel).read_text(encoding="utf-8")
        for href in ANCHOR_LINK.findall(html):
            path, anchor = href.split("#", 1)
            if not anchor or path.startswith(("http:", "https:")):
                continue
            target = rel if not path else os.path.normpath(os.path.join(os.path.dirname(rel), path))
            if not target.endswith(".html"):
                target = os.path.join(target, "index.html") if target != "." else "index.html"
            if target in ids and anchor not in ids[target]:
                broken.append(f"{rel}: {href}")
    assert broken == []


# --------------------------------------------------------------------------------------------
# In the browser
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(built):
    with site_check.serve(built) as base:
        yield base


def page_urls(site: Path, base: str) -> dict[str, str]:
    out = {}
    for rel in html_pages(site):
        out[rel] = site_check.page_url(base, rel)
    return out


def open_page(context, url):
    page = context.new_page()
    page.goto(url, wait_until="load")
    return page


def context_for(browser, width, scheme):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    context.add_init_script(site_a11y.INIT_SCRIPT)
    return context


def measured(inspected, check: str) -> dict[str, list[str]]:
    """{page: problems} of one per-page check, from the site's one pass (site_a11y.page_checks)."""
    missing = [rel for rel, (load, _) in inspected.items() if check not in load.checks]
    assert missing == [], f"{check} was not measured on {missing}"
    return {rel: load.checks[check] for rel, (load, _) in inspected.items() if load.checks[check]}


def test_no_page_has_a_render_blocking_script_over_budget(inspected):
    assert measured(inspected, "blocking") == {}


def test_every_page_loads_at_most_500_kb_on_a_phone(inspected):
    """Every page at 390 px, gzip as a host serves it, with every diagram drawn (the site's one
    pass; a first load that shows the first screen only fetches no more), as on a first visit:
    the fonts the page uses and no other, though the pages before it share its browser context
    (site_a11y.initial_load; the next test)."""
    assert site_a11y.FIRST_LOAD_BUDGET == 500 * 1024
    problems = measured(inspected, "first_load")
    assert problems == {}, "\n".join(f"{rel}: {p}" for rel, ps in problems.items() for p in ps)


def test_no_page_is_wider_than_a_phone_with_its_collapsibles_open(inspected):
    """Every page at 390 px, each <details> opened as a reader opens an answer: nothing reaches
    past the screen's edge outside a scroll region. A notebook's reference solution, folded in a
    Markdown cell, was a <pre> with no scroll region (overrides/rewrites.py now gives it
    Material's markup): its page was up to 1,249 px wide once the answer was open."""
    problems = measured(inspected, "width")
    assert problems == {}, "\n".join(f"{rel}: {p}" for rel, ps in problems.items() for p in ps)


def test_the_width_check_finds_a_long_line_in_a_folded_answer(browser):
    """site_a11y.width_problems opens the page's collapsibles: a long line of code in one is
    found; in a scroll region, as Material puts code, it is not."""
    line = "x = " + " + ".join(["value"] * 40)

    def run(b):
        context = b.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
        page = context.new_page()
        found = {}
        for name, style in (("bare", ""), ("scrolls", "overflow-x: auto")):
            page.set_content(f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                             f'<details><summary>Answer</summary><pre style="{style}">{line}</pre></details>')
            found[name] = site_a11y.width_problems(page)
        context.close()
        return found

    found = browser.run(run)
    assert len(found["bare"]) == 1 and "pre in details: x = value + value" in found["bare"][0], found
    assert found["scrolls"] == [], found


def test_a_page_loads_as_many_bytes_after_other_pages_as_alone(served, browser):
    """part7/ddp uses two of KaTeX's fonts; reference/drills-explain uses KaTeX_AMS too. Loaded
    after it in one tab (as in the site's pass: one renderer, whose memory cache the pages share),
    ddp's timeline also lists KaTeX_AMS, read from the cache; its first load is measured as in a
    browser context of its own: the same bytes."""
    loads = {}

    def drawn_then_measured(page):
        site_a11y.reveal_diagrams(page)
        site_a11y.first_load_problems(page)
        loads.setdefault(page.url, []).append(site_a11y.initial_load(page))
        return {}

    before, ddp = served + "reference/drills-explain/", served + "part7/ddp/"
    for load in browser.open_many([before, ddp], at_once=1, options=site_check.PHONE, copies=False, measure=drawn_then_measured) + [
            browser.open(ddp, options=site_check.PHONE, copies=False, fresh=True, measure=drawn_then_measured)]:
        assert load.returncode == 0, load.console
    (first,), (after, alone) = loads[before], loads[ddp]
    assert after["bytes"] == alone["bytes"], (after, alone)
    assert "KaTeX_AMS-Regular.woff2" not in first["fonts_unused"], first
    assert "KaTeX_AMS-Regular.woff2" in after["fonts_unused"], (
        "one tab no longer lists in ddp's timeline a font of its cache that ddp does not use: the "
        f"case this test is about is gone (see site_a11y.FONTS): {after}")


class TimelinePage:
    """A stand-in for a loaded page, for initial_load's arithmetic: its timeline (the document,
    a script, two fonts: KaTeX_AMS, listed though no face uses it, and KaTeX_Main listed
    without a size), the fonts its faces use (FONTS), and the size a fetch gives each font
    (WIRE_SIZES). The pass over the site meets a timeline like this now and then (site_a11y's
    FONTS comment); this page makes it happen every time."""

    BASE = "http://127.0.0.1:8000/"
    TIMELINE = [{"name": BASE + "part1/", "encoded": 20_000, "type": "navigation"},
                {"name": BASE + "assets/app.js", "encoded": 400_000, "type": "script"},
                {"name": BASE + "vendor/katex/fonts/KaTeX_AMS-Regular.woff2", "encoded": 28_000, "type": "css"},
                {"name": BASE + "vendor/katex/fonts/KaTeX_Main-Regular.woff2", "encoded": 0, "type": "css"}]
    FONTS = {"used": [BASE + "vendor/katex/fonts/KaTeX_Main-Regular.woff2"],
             "unused": [BASE + "vendor/katex/fonts/KaTeX_AMS-Regular.woff2"]}
    WIRE = {BASE + "vendor/katex/fonts/KaTeX_Main-Regular.woff2": 90_000}

    def __init__(self):
        self.requests = [(self.BASE + "part1/", e["name"]) for e in self.TIMELINE]

    def evaluate(self, script, arg=None):
        if script == site_a11y.FONTS:
            return self.FONTS
        if script == site_a11y.WIRE_SIZES:
            return [{"name": url, "encoded": self.WIRE[url], "type": "font"} for url in arg]
        if script == site_a11y.BLOCKING_JS:
            return []
        assert "performance.getEntriesByType" in script, script
        return self.TIMELINE

    def wait_for_function(self, *args, **kwargs):
        return True


def test_a_font_in_use_is_counted_at_its_size_on_the_wire_and_an_unused_one_not_at_all():
    load = site_a11y.initial_load(TimelinePage())
    assert load["bytes"] == 20_000 + 400_000 + 90_000, load
    assert load["fonts_fetched"] == ["KaTeX_Main-Regular.woff2"], load
    assert load["fonts_unused"] == ["KaTeX_AMS-Regular.woff2"], load
    assert load["uncounted"] == [], load
    [problem] = site_a11y.first_load_problems(TimelinePage(), budget=500_000)
    assert problem.startswith("498 KB loaded (gzip, 3 requests), over the budget of 488 KB; the largest: app.js "
                              "390 KB, KaTeX_Main-Regular.woff2 87 KB, part1/ 19 KB;"), problem
    assert problem.endswith("fonts the timeline left out, sized by a fetch: KaTeX_Main-Regular.woff2"), problem
    assert site_a11y.first_load_problems(TimelinePage(), budget=510_000) == []
    assert [site_a11y.short_name(TimelinePage.BASE + p) for p in ("", "part1/hand-trace/", "a/b.js?v=1")] == [
        "/", "hand-trace/", "b.js"]


def test_no_serious_or_critical_axe_violation_on_any_page(inspected):
    """Every page, on a phone in the light scheme (the site's one pass)."""
    problems = measured(inspected, "axe")
    assert problems == {}, "\n".join(f"{rel}: {p}" for rel, ps in problems.items() for p in ps)


def test_templates_cover_every_kind_of_page(built):
    pages = set(site_check.site_pages(built))
    assert set(TEMPLATES) <= pages, set(TEMPLATES) - pages


# What axe reads of a page that depends on its mode: the scheme, the colours of each kind of
# element, which formulas, diagrams and code blocks are scroll regions, and every tab stop of
# the content a reader can reach (outside closed collapsibles), by its name.
MODE_STATE = """() => {
  const kinds = ["body", ".md-header", ".md-tabs", ".md-sidebar .md-nav__link", ".md-typeset a",
    ".md-typeset code", ".highlight .kn, .highlight .k", ".highlight .c1", ".highlight .mi",
    ".md-typeset .admonition-title, .md-typeset summary", ".md-typeset th", ".md-footer", ".katex"];
  const colours = Object.fromEntries(kinds.map((s) => { const el = document.querySelector(s);
    const c = el && getComputedStyle(el); return [s, c ? [c.color, c.backgroundColor] : null]; }));
  return { scheme: document.body.getAttribute("data-md-color-scheme"), colours,
    formulas: Array.from(document.querySelectorAll("div.arithmatex")).map((el) => el.getAttribute("data-overflow")),
    diagrams: Array.from(document.querySelectorAll("[data-book-diagram]")).map((el) => el.hasAttribute("tabindex")),
    code: Array.from(document.querySelectorAll(".md-content pre > code")).filter((el) => !el.closest("details:not([open])"))
      .map((el) => el.hasAttribute("tabindex")),
    stops: Array.from(document.querySelectorAll(".md-content [tabindex]")).filter((el) => !el.closest("details:not([open])"))
      .map((el) => el.getAttribute("aria-label") || el.tagName.toLowerCase()) };
}"""


def _settled_page(b, url, width, scheme="light", height=900, **options):
    """A page of the site loaded at ``width`` x ``height`` in ``scheme`` (and playwright's
    context ``options``), settled (site_check.SETTLED: its diagrams drawn and formulas typeset);
    the caller closes its context."""
    context = b.new_context(viewport={"width": width, "height": height}, color_scheme=scheme, **options)
    context.add_init_script(site_check.TRACK_RENDERS)
    context.add_init_script(site_a11y.INIT_SCRIPT)
    page = context.new_page()
    page.goto(url, wait_until="load")
    site_check.Browser.settle(page)
    return context, page


# hand-trace: a diagram and two tables that scroll at 390 px and not at 1440; chain-rule: a
# formula that does; a notebook: a table and an output that do, and a folded solution.
@pytest.mark.parametrize("rel", ["part1/hand-trace/", "part1/chain-rule/", "notebooks/01-hand-trace/"])
def test_a_resize_and_the_palette_toggle_leave_a_page_as_a_load_in_that_mode(built, browser, rel):
    """site_a11y.axe_in_modes checks several modes on one load, with the reader's resize and
    palette toggle between them: what axe reads then (MODE_STATE) is what a load in that mode
    shows, both ways between the two modes furthest apart."""
    modes = [("light", 1440), ("dark", 390)]

    def state(b, url, loaded_in, shown_in):
        context, page = _settled_page(b, url, loaded_in[1], loaded_in[0])
        try:
            site_a11y.reveal_diagrams(page)
            site_a11y.resize(page, loaded_in[1])  # every formula, diagram and code block measured once
            site_a11y.switch_scheme(page, shown_in[0])
            site_a11y.resize(page, shown_in[1])
            return page.evaluate(MODE_STATE)
        finally:
            context.close()

    with site_check.serve(built) as base:
        for start, end in (modes, modes[::-1]):
            loaded = browser.run(state, base + rel, end, end)
            changed = browser.run(state, base + rel, start, end)
            assert loaded["scheme"] == site_a11y.SCHEMES[end[0]]
            assert len([c for c in loaded["colours"].values() if c]) >= 9, loaded["colours"]
            assert changed == loaded, f"{rel}: loaded in {start}, then switched to {end}"
    with pytest.raises(ValueError, match="scheme='sepia': pass one of light, dark"):
        site_a11y.switch_scheme(None, "sepia")


def test_a_resize_reports_what_stays_unmarked_and_leaves_out_folded_code(built, browser):
    """site_a11y.resize names each formula, diagram or code block still not marked for the new
    width after its wait (a page loaded at that width would mark it), instead of passing on
    silently; a code block inside a closed collapsible, which Material measures only when a
    reader opens it, is not waited for: drills-accumulation's folded answers, 1440 -> 390 px,
    and a notebook's folded solution, 390 -> 1440 px (each waited the whole minute before)."""

    def resized(b, url, start, end, mark_first=False):
        context, page = _settled_page(b, url, start)
        try:
            assert site_a11y.resize(page, start) == []
            if mark_first:  # a short code block outside any collapsible made a tab stop by hand
                page.evaluate("""() => { const c = Array.from(document.querySelectorAll('.md-content pre > code'))
                    .find((el) => !el.closest('details') && el.scrollWidth <= el.offsetWidth);
                    c.setAttribute('tabindex', '0'); }""")
            began = time.monotonic()
            problems = site_a11y.resize(page, end, timeout_ms=3000)
            return problems, time.monotonic() - began
        finally:
            context.close()

    with site_check.serve(built) as base:
        for rel, start, end in (("reference/drills-accumulation/", 1440, 390), ("notebooks/01-hand-trace/", 390, 1440)):
            problems, took = browser.run(resized, base + rel, start, end)
            assert problems == [] and took < 3, (rel, problems, took)
        problems, took = browser.run(resized, base + "part1/hand-trace/", 1440, 1440, mark_first=True)
    assert len(problems) == 1 and problems[0].startswith("not marked for 1440 px 3 s after a resize: code block "), problems
    assert problems[0].endswith("(a tab stop, not wide)") and took >= 3, (problems, took)


def test_wide_formulas_and_diagrams_are_reachable_on_a_slow_machine(built, browser):
    """A slow machine and network (CPU throttled 6x, slow 4G): the page that holds wide display
    formulas, at both widths, must still make every region that scrolls reachable by keyboard.
    The check waits for styles, fonts and math.js's measurement, never for a fixed time."""

    def load(b, url, width):
        context = b.new_context(viewport={"width": width, "height": 900})
        context.add_init_script(site_check.TRACK_RENDERS)
        context.add_init_script(site_a11y.INIT_SCRIPT)
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 6})
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", site_a11y.SLOW_4G)
        page.goto(url, wait_until="commit", timeout=120000)
        page.wait_for_function(site_check.SETTLED, timeout=120000, polling=100)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
        wide = page.evaluate("document.querySelectorAll('div.arithmatex[data-overflow=yes]').length")
        problems = site_a11y.axe_after_diagrams(page) + site_a11y.diagram_problems(page)
        context.close()
        return wide, problems

    with site_check.serve(built) as base:
        phone = browser.run(load, base + "part1/jacobians/", 390)
        desktop = browser.run(load, base + "part1/jacobians/", 1440)
    assert phone[0] >= 1, "no display formula of part1/jacobians overflows at 390 px: pick a wider page"
    assert phone[1] == [] and desktop[1] == [], (phone, desktop)


def test_every_diagram_is_named_and_readable_at_390_px(built, inspected):
    diagrams = sum((built / rel).read_text(encoding="utf-8").count('<pre class="mermaid"') for rel in html_pages(built))
    assert diagrams >= 30, diagrams
    assert measured(inspected, "diagrams") == {}


def search_all(served, browser, queries, scroll=False):
    """{query: the pages the site's search lists for it, in order (the first ten, or with
    ``scroll`` all)}, at 1440 px."""
    def search(b):
        context = b.new_context(viewport={"width": 1440, "height": 900})
        page = open_page(context, served)
        found = {q: site_a11y.search_results(page, q, scroll=scroll) for q in queries}
        context.close()
        return found

    return browser.run(search)


def test_search_keeps_its_index_across_instant_navigation(served, browser):
    """On a phone: the page loads without the search index (overrides/main.html holds Material's
    request back until the reader opens search); search then loads it once and finds pages
    there and, after instant navigation, on the next page without loading it again."""

    def run(b):
        context = b.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
        page = context.new_page()
        fetched = []  # the page's requests and its workers'
        page.on("request", lambda r: fetched.append(r.url.split("?", 1)[0]))
        page.goto(served + "part1/hand-trace/", wait_until="load")
        page.wait_for_load_state("networkidle")  # no request for 500 ms: the page has loaded
        before = list(fetched)
        first = site_a11y.search_results(page, "register_hook")
        searched = list(fetched)
        page.evaluate("(t) => location$.next(new URL(t, location.href))", served + "part6/hooks/")
        page.wait_for_function("() => document.title.startsWith('Hooks')")  # the content is swapped in place
        again = site_a11y.search_results(page, "retain_grad")
        context.close()
        return before, first, searched, again, fetched

    before, first, searched, again, fetched = browser.run(run)
    index = served + "search/search_index.json"
    assert index not in before, before
    assert index in searched, searched  # (search.js reads it again, from the browser's cache)
    assert "part6/hooks/" in first and "part1/tracking/" in again, (first, again)
    assert fetched.count(index) == searched.count(index), fetched


def test_search_finds_the_page_that_teaches_each_api_name(served, browser):
    found = search_all(served, browser, API_PAGES, scroll=True)
    missing = {name: results for name, results in found.items() if API_PAGES[name] not in results}
    assert len(API_PAGES) >= 8
    assert missing == {}


def test_math_does_not_wait_for_diagrams(served, browser):
    """On the model page (math and two diagrams), on a throttled phone connection, every formula
    is typeset and mermaid has not been fetched: nothing holds the math back."""

    def load(b):
        context = b.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
        page = context.new_page()
        fetched = []
        page.on("request", lambda r: fetched.append(r.url))
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", site_a11y.SLOW_4G)
        page.goto(served + "part1/hand-trace/", wait_until="commit")
        page.wait_for_function(
            "() => { const all = document.querySelectorAll('.arithmatex');"
            " return all.length && Array.from(all).every(e => e.querySelector('.katex')); }",
            timeout=120000,
        )
        context.close()
        return fetched

    fetched = browser.run(load)
    assert not any("/vendor/mermaid/" in u for u in fetched), "mermaid was fetched before the math was typeset"


def test_the_formulas_a_reader_lands_on_are_typeset_first(served, browser):
    """A page's formulas are typeset a few at a time (math.js), those on or near the screen
    first: opened at a section near its end, the chain-rule page (93 formulas) typesets the
    formulas in view before the first formula of the page."""

    def load(b):
        context = b.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
        page = context.new_page()
        page.add_init_script(site_check.TRACK_RENDERS)
        page.goto(served + "part1/chain-rule/#the-sources-chain-traced", wait_until="load")
        page.wait_for_function("() => document.querySelectorAll('.arithmatex').length"
                               " === document.querySelectorAll('.arithmatex .katex').length", timeout=120000)
        seen = page.evaluate("""() => { const all = Array.from(document.querySelectorAll('.arithmatex'));
            return {order: window.__typesetOrder.map((el) => all.indexOf(el)), visible: all
              .map((el, i) => [i, el.getBoundingClientRect()]).filter(([, r]) => r.bottom > 0 && r.top < innerHeight)
              .map(([i]) => i)}; }""")
        context.close()
        return seen

    seen = browser.run(load)
    order, visible = seen["order"], seen["visible"]
    assert sorted(order) == list(range(len(order))) and len(order) > 20, order  # each formula once
    assert visible and 0 not in visible, seen
    assert max(order.index(i) for i in visible) < order.index(0), seen


# Every layout shift of a page not caused by the reader, as Lighthouse's cumulative layout shift
# counts them (it sums the largest burst; this sums them all).
LAYOUT_SHIFTS = """window.__shifts = [];
new PerformanceObserver((list) => list.getEntries().forEach((e) => { if (!e.hadRecentInput) window.__shifts.push(e.value); }))
  .observe({type: "layout-shift", buffered: true});"""
# The pages whose text moved most while their formulas were typeset, before formulas held their
# room (a list item or paragraph losing or gaining a line on a phone: 0.11-0.17 each).
SHIFTING_MATH = ("part6/forward-mode/", "part1/jacobians/", "workshop/normalisation/")


def _math_on_a_phone(b, url, katex=True, javascript=True):
    """Open ``url`` at 390 px (KaTeX's script answered 404 unless ``katex``); where JavaScript
    runs, wait until every formula is typeset (or shows its source) and the fonts are in use.
    The layout shifts seen, and each formula's mark and computed colour and size."""
    context = b.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, java_script_enabled=javascript)
    if not katex:
        context.route("**/vendor/katex/katex.min.js", lambda route: route.fulfill(status=404, body=""))
    page = context.new_page()
    page.add_init_script(LAYOUT_SHIFTS)
    page.goto(url, wait_until="load")
    if javascript:
        page.wait_for_function("() => Array.from(document.querySelectorAll('.arithmatex')).every((el) =>"
                               " el.querySelector('.katex') || el.getAttribute('data-math') === 'source')"
                               " && document.fonts.status === 'loaded'", timeout=120000)
        # a shift is reported once the frame that shows it is drawn: two frames and a task later
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done))))")
    seen = page.evaluate("""() => ({shifts: window.__shifts || [], formulas: Array.from(document.querySelectorAll('.arithmatex'))
        .map((el) => [el.getAttribute('data-math'), getComputedStyle(el).color, getComputedStyle(el).fontSize])})""")
    context.close()
    return seen


def test_the_text_stays_in_place_while_the_math_is_typeset(served, browser):
    """A formula waiting for KaTeX holds about the room it will take, its source unseen
    (book.css, math.js): on the pages whose text moved most, the layout shifts a reader on a
    phone sees while the page loads and its math is typeset add up to under 0.1 ("good" in
    Lighthouse's terms) on each; every formula is then marked data-math="typeset"."""
    seen = {path: browser.run(_math_on_a_phone, served + path) for path in SHIFTING_MATH}
    shifted = {path: round(sum(s["shifts"]), 3) for path, s in seen.items()}
    assert all(total < 0.1 for total in shifted.values()), shifted
    for path, s in seen.items():
        assert {state for state, _, _ in s["formulas"]} == {"typeset"}, (path, s["formulas"][:5])


def test_a_formula_shows_its_source_when_katex_cannot_load(served, browser):
    """Held room must not hide the math for good: when KaTeX's script cannot be loaded, every
    formula is marked data-math="source" and its TeX source shows at the text's size, as it does
    without JavaScript."""
    url = served + SHIFTING_MATH[0]
    failed = browser.run(_math_on_a_phone, url, False)["formulas"]
    assert {state for state, _, _ in failed} == {"source"}, failed[:5]
    for formulas in (failed, browser.run(_math_on_a_phone, url, True, False)["formulas"]):
        assert formulas and all(color != "rgba(0, 0, 0, 0)" for _, color, _ in formulas), formulas[:5]
        assert all(float(size.rstrip("px")) >= 12 for _, _, size in formulas), formulas[:5]


# --------------------------------------------------------------------------------------------
# Maths, code and diagrams on a phone (390 px), in both schemes
# --------------------------------------------------------------------------------------------

# Pages of each template on which every rule of axe-core runs (site_a11y.NOT_RUN names what is
# left out, with the reasons) in every mode, beside TEMPLATES.
EVERY_RULE_PAGES = {
    "index.html": "the home page",
    "paths/index.html": "a section's index page",
    "paths/interview-week/index.html": "a reading path",
    "part1/hand-trace/index.html": "diagrams, math, tables, folded answers",
    "part1/deep-dive/index.html": "the widest display formula",
    "part2/tensors-and-views/index.html": "a long page of code and outputs",
    "notebooks/01-hand-trace/index.html": "a notebook page",
    "notebooks/first-notebook/index.html": "a notebook page",
    "reference/drills/index.html": "a drill page",
    "reference/drills-diagnose/index.html": "a drill page, its formulas folded",
    "reference/apis/index.html": "the API index",
    "reference/errors/index.html": "the error index",
    "404.html": "the 404 page",
}


def _phone_page(b, url, scheme="light", width=390):
    """A page of the site opened on a phone (device pixels 2:1), settled (site_check.SETTLED:
    its diagrams drawn and formulas typeset); its context closes with it."""
    return _settled_page(b, url, width, scheme, height=844, is_mobile=width < 800, device_scale_factor=2)


def test_a_wide_formula_scrolls_in_a_box_as_tall_as_it_with_a_hint_and_margins(served, browser):
    """part1/deep-dive's softplus identity (794 px of maths at 390 px): its box is as tall as the
    formula (not 125 px for 41), it scrolls inside the box from the text's edge to a margin after
    its end, is reachable by keyboard, and has the diagrams' hint. Every page's display formulas
    are held to the same in the site's pass (formula_problems; there a formula that fits shows
    no hint)."""

    def run(b, scheme):
        context, page = _phone_page(b, served + "part1/deep-dive/", scheme)
        seen = site_a11y.measure_formulas(page), site_a11y.formula_problems(page)
        context.close()
        return seen

    for scheme in ("light", "dark"):
        formulas, problems = browser.run(run, scheme)
        wide = [f for f in formulas if f.get("wide")]
        assert wide, (scheme, formulas)
        assert problems == [], (scheme, problems)
        widest = max(wide, key=lambda f: f["after"] + f["before"])
        assert widest["hintShown"] and widest["boxHeight"] < 2 * widest["mathHeight"], widest


def test_linked_code_keeps_its_underscores_in_both_schemes(served, browser):
    """`no_grad` in a link on the home page: screenshots of the link as shown, without its underline
    and without its text give the rows of pixels each covers; at least one row of neither lies
    between the code's lowest ink (its underscore) and the underline."""

    def run(b, scheme):
        context, page = _phone_page(b, served, scheme)
        seen = site_a11y.linked_code_gap(page)
        context.close()
        return seen

    for scheme in ("light", "dark"):
        seen = browser.run(run, scheme)
        assert seen["underline"] and seen["ink"], (scheme, seen)
        assert "_" in seen["text"] and seen["gap"] is not None and seen["gap"] >= 1, (scheme, seen)


def test_a_wide_diagram_opens_with_its_last_node_in_view(served, browser):
    """The hand-trace graph is wider than a phone at a readable size (labels at least 11 px): it
    scrolls, and opens with its loss node, the last it declares, in view. Every page's diagrams
    are held to the same in the site's pass (diagram_problems)."""

    def run(b, scheme):
        context, page = _phone_page(b, served + "part1/hand-trace/", scheme)
        seen = site_a11y.measure_diagrams(page)
        context.close()
        return seen

    for scheme in ("light", "dark"):
        first = browser.run(run, scheme)[0]
        assert first["overflows"] and first["smallest"] >= site_a11y.MIN_LABEL_PX, first
        assert first["lastNode"].endswith("-L-15") and first["lastShown"], first


def test_katex_loads_when_a_formula_nears_the_screen_not_for_folded_ones(served, browser):
    """reference/drills-diagnose holds its formulas in folded answers: scrolled from top to bottom
    with the answers closed, it fetches nothing of KaTeX; opened, the answer's formula is typeset.
    part1/hand-trace has a formula on its first screen: KaTeX loads without a scroll.
    reference/verification has a diagram and no formula: printed ("beforeprint", on which math.js
    typesets every formula, as the site's pass dispatches it), it fetches nothing of KaTeX."""

    def run(b):
        context = b.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
        page = context.new_page()
        fetched = []
        page.on("request", lambda r: fetched.append(r.url))
        page.goto(served + "reference/drills-diagnose/", wait_until="load")
        page.wait_for_load_state("networkidle")
        count = page.evaluate("document.querySelectorAll('.arithmatex').length")
        folded = page.evaluate("Array.from(document.querySelectorAll('.arithmatex')).every((el) => el.closest('details:not([open])'))")
        for _ in range(40):  # down the page, a screen at a time
            page.mouse.wheel(0, 700)
            page.wait_for_timeout(60)
        page.wait_for_load_state("networkidle")
        closed = [u for u in fetched if "/vendor/katex/" in u]
        page.evaluate("() => { const d = document.querySelector('.arithmatex').closest('details'); d.open = true;"
                      " d.querySelector('.arithmatex').scrollIntoView({block: 'center'}); }")
        page.wait_for_function("() => document.querySelector('.arithmatex .katex')", timeout=60000)
        opened = [u for u in fetched if "/vendor/katex/" in u]
        fetched.clear()
        page.goto(served + "part1/hand-trace/", wait_until="load")
        page.wait_for_function("() => document.querySelector('.arithmatex .katex')", timeout=60000)
        first_screen = page.evaluate("document.querySelector('.arithmatex').getBoundingClientRect().top < innerHeight")
        page.goto(served + "reference/verification/", wait_until="load")
        page.wait_for_load_state("networkidle")
        fetched.clear()
        none = page.evaluate("document.querySelectorAll('.arithmatex').length === 0 && !!document.querySelector('.mermaid')")
        page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        page.wait_for_load_state("networkidle")
        printed = [u for u in fetched if "/vendor/katex/" in u]
        context.close()
        return count, folded, closed, opened, first_screen, none, printed

    count, folded, closed, opened, first_screen, none, printed = browser.run(run)
    assert count >= 2 and folded, (count, folded)
    assert closed == [], closed
    assert any(u.endswith("katex.min.js") for u in opened), opened
    assert first_screen
    assert none and printed == [], (none, printed)


def test_the_api_index_uses_a_desktop_width_and_breaks_no_name(served, browser):
    """reference/apis at 1440 px: no table of contents beside it (a quarter of the screen left
    empty), the table as wide as the column, and no API name over two lines."""

    def run(b):
        context, page = _phone_page(b, served + "reference/apis/", width=1440)
        seen = page.evaluate("""() => { const t = document.querySelector('.api-index table');
            const names = Array.from(t.querySelectorAll('td:first-child code'));
            const toc = document.querySelector('.md-sidebar--secondary');
            return {table: t.getBoundingClientRect().width, column: document.querySelector('.md-content__inner').getBoundingClientRect().width,
                    names: names.length, broken: names.filter((c) => c.getClientRects().length > 1).map((c) => c.textContent).slice(0, 5),
                    toc: !!toc && toc.offsetParent !== null && toc.getBoundingClientRect().width > 0}; }""")
        context.close()
        return seen

    seen = browser.run(run)
    assert seen["names"] >= 300 and seen["broken"] == [], seen
    assert not seen["toc"] and seen["table"] >= 0.95 * seen["column"], seen


def test_no_axe_violation_of_any_rule_in_any_mode_on_pages_of_each_template(built, browser):
    """Every rule of axe-core, every impact (the moderate landmark-unique among them: each code
    block's region and copy bar is named apart), in every mode (MODES), on one page per template
    and a few more (TEMPLATES, EVERY_RULE_PAGES); every page of the site is checked in the light
    scheme at 390 px by the site's pass."""
    assert set(site_a11y.NOT_RUN) == {"focus-order-semantics", "target-size", "deprecated", "wcag2aaa"}, "a rule left out needs its reason"
    pages = sorted(set(TEMPLATES) | set(EVERY_RULE_PAGES))
    with site_check.serve(built) as base:
        urls = [site_check.page_url(base, rel) for rel in pages]
        loads = browser.open_many(urls, options={"viewport": {"width": MODES[0][1], "height": 900}, "color_scheme": MODES[0][0]},
                                  copies=False, measure=lambda page: (site_a11y.reveal_diagrams(page),
                                                                      site_a11y.axe_in_modes(page, MODES, every_rule=True))[1])
    assert all(list(load.checks) == [f"{s}-{w}" for s, w in MODES] for load in loads), [load.checks for load in loads]
    problems = [f"{rel} ({mode}): {p}" for rel, load in zip(pages, loads) for mode, ps in load.checks.items() for p in ps]
    assert problems == [], "\n".join(problems)


# --------------------------------------------------------------------------------------------
# The checks bite: fixture pages, built into a site published under a sub-path
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory):
    work = tmp_path_factory.mktemp("a11y-fixtures")
    config = site_check.fixture_project(FIXTURES, work / "project")
    (work / "project" / "docs" / "big.js").write_text(
        "/*" + os.urandom(150 * 1024).hex()[: 200 * 1024] + "*/\nwindow.bigScriptRan = true;\n", encoding="ascii"
    )
    old = os.environ.get("SITE_URL")
    os.environ["SITE_URL"] = "http://127.0.0.1/book/"
    try:
        built = site_check.build_site(work / "site", config)
    finally:
        if old is None:
            os.environ.pop("SITE_URL")
        else:
            os.environ["SITE_URL"] = old
    assert built.returncode == 0, built.log[-3000:]
    return built.site


def test_checks_reject_the_broken_fixture_pages(fixture_site, browser):
    def check(b):
        context = context_for(b, 390, "light")
        page = open_page(context, base + "blocking-script/")
        blocking = site_a11y.blocking_script_problems(page)
        page = open_page(context, base + "low-contrast/")
        contrast = site_a11y.axe_problems(page)
        page = open_page(context, base + "oversized-diagram/")
        oversized = site_a11y.diagram_problems(page)
        page = open_page(context, base + "wide-diagram/")
        wide = site_a11y.diagram_problems(page) + site_a11y.axe_problems(page)
        wide_shown = site_a11y.measure_diagrams(page)
        page = open_page(context, base + "desktop-wide-diagram/")
        too_wide = site_a11y.diagram_problems(page)
        heavy = {}
        for name in ("blocking-script", "worker-fetch"):  # pages that load big.js (200 KB, about 110 KB gzip)
            page = context.new_page()
            page.requests = []  # as site_check's browser records them: the page's and its workers'
            page.on("request", lambda r, page=page: page.requests.append((page.url, r.url)))
            with page.expect_request_finished(lambda r: r.url.endswith("/big.js")):
                page.goto(base + name + "/", wait_until="load")
            heavy[name] = site_a11y.first_load_problems(page, budget=100 * 1024, wait_ms=2000)
        context.close()
        return blocking, contrast, oversized, wide, wide_shown, too_wide, heavy

    with site_check.serve(fixture_site, prefix="/book/") as base:
        blocking, contrast, oversized, wide, wide_shown, too_wide, heavy = browser.run(check)
    assert any("big.js" in p and "over the budget" in p for p in blocking), blocking
    # The first-load budget (here 100 KB): a page over it, named by its largest files; a worker's
    # request, which the page's timeline does not show, is reported rather than left uncounted.
    assert any("over the budget of 100 KB" in p and "big.js" in p for p in heavy["blocking-script"]), heavy
    assert not any("over the budget" in p for p in heavy["worker-fetch"]), heavy
    assert any(p.startswith("requests whose bytes") and p.endswith("/book/big.js") for p in heavy["worker-fetch"]), heavy
    assert any(p.startswith("axe color-contrast (serious)") for p in contrast), contrast
    assert any("smallest label" in p and "under 11.0" in p for p in oversized), oversized
    assert any("no accessible title and description" in p for p in oversized), oversized
    # A wide diagram with the book's loader: scrolls sideways on a phone, labels readable.
    assert wide == [], wide
    assert wide_shown[0]["overflows"] and wide_shown[0]["smallest"] >= site_a11y.MIN_LABEL_PX, wide_shown
    # One that would scroll on a desktop too is rejected, on a phone, with the width it needs.
    assert len(too_wide) == 1 and re.fullmatch(
        r"diagram 1: its labels need it \d+ CSS px wide, more than the 688 px it has on a desktop "
        r"\(1440 px\), where it would open scrolled: .*", too_wide[0]), too_wide


def test_the_desktop_column_is_as_wide_as_the_diagram_check_assumes(fixture_site, browser):
    """diagram_problems judges on any screen whether a diagram fits a desktop's column, from the
    width the loader keeps it at and DESKTOP_COLUMN_PX. At 1440 px: the column is that wide, the
    diagram that passes fits it, and the one rejected scrolls."""

    def measure(b):
        context = context_for(b, 1440, "light")
        found = {}
        for name in ("wide-diagram", "desktop-wide-diagram"):
            page = open_page(context, base + name + "/")
            site_check.Browser.settle(page)
            found[name] = site_a11y.measure_diagrams(page)[0]
        context.close()
        return found

    with site_check.serve(fixture_site, prefix="/book/") as base:
        found = browser.run(measure)
    for name, d in found.items():
        assert abs(d["column"] - site_a11y.DESKTOP_COLUMN_PX) <= 1 and d["inset"] <= 1, (name, d)
    fits, scrolls = found["wide-diagram"], found["desktop-wide-diagram"]
    assert not fits["overflows"] and fits["minWidth"] <= site_a11y.DESKTOP_COLUMN_PX, fits
    assert scrolls["overflows"] and scrolls["minWidth"] > site_a11y.DESKTOP_COLUMN_PX, scrolls


def test_404_page_works_under_a_sub_path(fixture_site, browser):
    """Published under /book/ (as on GitHub Pages), a missing page deep in the tree gets the 404
    page with its stylesheets and scripts."""

    def load(b):
        context = b.new_context()
        page = context.new_page()
        failed = []
        page.on("response", lambda r: failed.append(r.url) if r.status >= 400 and not r.request.is_navigation_request() else None)
        response = page.goto(base + "no/such/page/", wait_until="load")
        sheets = page.evaluate("document.styleSheets.length")
        styled = page.evaluate("getComputedStyle(document.querySelector('.md-header')).position")
        context.close()
        return response.status, failed, sheets, styled

    with site_check.serve(fixture_site, prefix="/book/") as base:
        status, failed, sheets, styled = browser.run(load)
    assert status == 404
    assert failed == [], failed
    assert sheets >= 2 and styled in {"sticky", "fixed"}, (sheets, styled)
