"""The whole book as one PDF: the site's print page (``print_page/``, every page in nav order,
written by mkdocs-print-site-plugin) printed by the system chromium.

    python -m bookbuild.pdf [SITE] [OUT]   (make pdf: site/ and site/autograd-book.pdf)

The built site is served on 127.0.0.1 (a free port, for the time of the print). Chromium
(bookcheck.results.chromium(), driven by Playwright; no browser is downloaded) opens the print
page and fires ``beforeprint``, as a browser's print dialog does: Material opens every
collapsible block, and the book's diagram loader (docs/assets/js/diagrams.js) draws every
diagram, which it otherwise draws when a reader scrolls near it. The page is printed once every
block is open, every diagram drawn, every formula typeset and every font loaded. Links that leave the page
(downloads, the site's pages outside the book's nav) are made absolute from the site's
address (its canonical link), so that they work from the PDF too.

The contents give each part and page the number of the page it starts on. Chromium cannot
compute such numbers (CSS ``target-counter()``), so the book is printed twice: first with a
placeholder of the same width after each entry, which lays the contents out as the numbers
will; the page each entry's target starts on is read from that PDF (its named destinations),
written into the contents, and the book printed again (once more if a number moved a page,
which the same width should prevent). The number at each page's foot, and the cover's page
of its own without one, are the print stylesheet's (docs/assets/css/print.css); the cover's
text is the build's (overrides/print_hooks.py). The PDF is tagged, with an outline
(bookmarks) of the headings: every part and page, and the sections of each page. It is
written again with object streams (``compact``): the tagged structure, written object by
object, would make it three times larger. tests/test_pdf.py checks the result (``make pdf``
runs it).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bookcheck import ROOT
from bookcheck.results import chromium
from bookcheck.serving import serve

PDF_NAME = "autograd-book.pdf"
PRINT_PAGE = "print_page/"


def print_page_file(config):
    """The print page mkdocs-print-site-plugin wrote into the built site of ``config`` (mkdocs'
    config, in a build hook), or None when the plugin is off or wrote none: the file the build
    hooks finish (overrides/site_hooks.py, overrides/print_hooks.py)."""
    plugin = config["plugins"].get("print-site")
    if plugin is None or not plugin.config["enabled"]:
        return None
    name = plugin.config["print_page_basename"]
    path = Path(config["site_dir"]) / (f"{name}/index.html" if config["use_directory_urls"] else f"{name}.html")
    return path if path.is_file() else None

# True once the page is ready to print: every diagram drawn (no pre.mermaid, the source that
# Material replaces with its drawing), every collapsible block open, every formula typeset,
# every font loaded. Until then it fires `beforeprint` again: Material opens the collapsible
# blocks, and the diagram loader releases the diagrams, of the components mounted so far
# (Material mounts them after the load event, at a time no single event can be sure to follow).
READY = r"""() => {
  if (document.querySelector("pre.mermaid, details:not([open])")) {
    window.dispatchEvent(new Event("beforeprint"));
    return false;
  }
  if (document.readyState !== "complete") return false;
  const formulas = document.querySelectorAll(".arithmatex");
  if (Array.from(formulas).some((el) => !el.querySelector(".katex"))) return false;
  return !document.fonts || document.fonts.status === "loaded";
}"""

# What the page holds as it is printed (the figures `make pdf` reports).
STATS = r"""() => ({
  diagrams: document.querySelectorAll("div.mermaid").length,
  unrendered: document.querySelectorAll("pre.mermaid").length,
  folded: document.querySelectorAll("details").length,
  closed: document.querySelectorAll("details:not([open])").length,
  formulas: document.querySelectorAll(".arithmatex").length,
  typeset: document.querySelectorAll(".arithmatex .katex").length,
  contents: document.querySelectorAll("#print-page-toc a").length,
})"""

# Links that leave the page, which Material has made absolute to the server the page is
# printed from: made absolute to the site's address instead (the page's canonical link,
# ``depth`` folders up), so that they work from the PDF. Links within the page stay links
# within the PDF.
ABSOLUTE_LINKS = r"""(depth) => {
  const canonical = document.querySelector('link[rel="canonical"]');
  if (!canonical) return 0;
  const here = new URL("../".repeat(depth), location.href).href;
  const site = new URL("../".repeat(depth), canonical.href).href;
  let n = 0;
  document.querySelectorAll("a[href]").forEach((a) => {
    const url = new URL(a.getAttribute("href"), location.href);
    if (!url.href.startsWith(here)) return;  // another site
    if (url.pathname === location.pathname && url.search === location.search) return;  // in the page
    a.setAttribute("href", site + url.href.slice(here.length));
    n++;
  });
  return n;
}"""


# The contents (the print plugin's copy of the page's table of contents, #print-page-toc): after
# each entry, the number of the page it starts on, from ``numbers`` (target id -> page number);
# without ``numbers``, a placeholder as wide as a three-digit number. Returns the entries' ids.
NUMBER_CONTENTS = r"""(numbers) => {
  const ids = [];
  document.querySelectorAll("#print-page-toc a[href]").forEach((a) => {
    // Material has made each link absolute: an entry is a link to a place in this page
    if (a.pathname !== location.pathname || !a.hash) return;
    let span = a.querySelector(":scope > .book-toc-page");
    if (!span) {
      span = document.createElement("span");
      span.className = "book-toc-page";
      a.appendChild(span);
    }
    const id = decodeURIComponent(a.hash.slice(1));
    span.textContent = numbers ? String(numbers[id] ?? "") : "000";
    ids.push(id);
  });
  return ids;
}"""


def destination_pages(path: Path) -> dict[str, int]:
    """The page (1-based) of each named destination of the PDF at ``path``: Chromium names one
    after each element id that a link of the page points at."""
    from pypdf import PdfReader

    reader = PdfReader(path)
    return {name.lstrip("/"): reader.get_destination_page_number(dest) + 1
            for name, dest in reader.named_destinations.items()}


def compact(path: Path) -> None:
    """Rewrite the PDF at ``path`` with its objects in compressed object streams (qpdf, through
    pikepdf): the tagged structure is many small objects, which Chromium writes one by one
    (the book: 42 MB as printed, 15 MB so). Nothing else changes."""
    import pikepdf

    tmp = path.with_name(path.name + ".tmp")
    with pikepdf.open(path) as doc:
        doc.save(tmp, object_stream_mode=pikepdf.ObjectStreamMode.generate, compress_streams=True)
    tmp.replace(path)


@dataclass
class Made:
    path: Path
    seconds: float
    stats: dict


def make_pdf(site: Path, out: Path, page: str = PRINT_PAGE, ready: bool = True, style: str | None = None,
             timeout_s: float = 600) -> Made:
    """Print ``page`` of the built ``site`` to ``out`` (A4).

    For tests/test_pdf.py, which shows that its checks reject a careless print: ``ready=False``
    prints as soon as the HTML is parsed, before any diagram is drawn or formula typeset;
    ``style`` is CSS added to the page before it is printed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout, sync_playwright

    browser_path = chromium()
    if browser_path is None:
        raise RuntimeError("Debian chromium is not installed: `sudo apt-get install chromium` (bash .ci/run does)")
    site = Path(site)
    if not (site / page / "index.html").is_file():
        raise RuntimeError(f"{site / page / 'index.html'} is missing: build the site first (make build)")
    start = time.perf_counter()
    seconds = {}

    def lap(name):
        seconds[name] = round(time.perf_counter() - start - sum(seconds.values()), 1)

    with serve(site) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": 1000, "height": 1400})
            tab.goto(base + page, wait_until="load" if ready else "domcontentloaded", timeout=timeout_s * 1000)
            lap("loaded")
            if ready:
                try:
                    tab.wait_for_function(READY, timeout=timeout_s * 1000, polling=250)
                except PlaywrightTimeout:
                    raise RuntimeError(f"{page} was not ready to print after {timeout_s:.0f} s: "
                                       f"{tab.evaluate(STATS)}") from None
                lap("drawn")
            if style:
                tab.add_style_tag(content=style)
            stats = tab.evaluate(STATS)
            stats["links out made absolute"] = tab.evaluate(ABSOLUTE_LINKS, page.count("/"))
            out.parent.mkdir(parents=True, exist_ok=True)

            def print_to(path):
                # A4 and its margins from the print stylesheet (@page); tagged, with an outline
                tab.pdf(path=str(path), prefer_css_page_size=True, print_background=True,
                        tagged=True, outline=True)

            entries = tab.evaluate(NUMBER_CONTENTS, None)
            print_to(out)
            lap("printed")
            prints = 1
            while entries:
                found = destination_pages(out)
                missing = [e for e in entries if e not in found]
                if missing:
                    raise RuntimeError(f"contents entries whose target is not in the PDF: {missing[:5]}")
                numbers = {e: found[e] for e in entries}
                if prints > 1 and numbers == last:
                    break
                if prints == 3:
                    raise RuntimeError("the contents' page numbers did not settle in three prints")
                last = numbers
                tab.evaluate(NUMBER_CONTENTS, numbers)
                print_to(out)
                prints += 1
                lap(f"printed {prints}")
            stats["contents numbered"] = len(entries)
            stats["prints"] = prints
            compact(out)
            lap("written")
        finally:
            browser.close()
    return Made(out, time.perf_counter() - start, dict(stats, seconds=seconds))


def page_texts(path: Path) -> list[str]:
    """The text of each page of the PDF at ``path``, as PDFium (pypdfium2) extracts it: about
    5 ms a page (pypdf, which parses content streams in Python, took 0.1 s)."""
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(path))
    try:
        return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    finally:
        doc.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "site")
    parser.add_argument("out", nargs="?", type=Path)
    args = parser.parse_args(argv)
    out = args.out or args.site / PDF_NAME
    try:
        made = make_pdf(args.site, out)
    except RuntimeError as exc:  # no browser, no built site: say what to do
        print(f"the book's PDF cannot be made: {exc}", file=sys.stderr)
        return 1
    import pypdfium2

    pages = len(pypdfium2.PdfDocument(str(out)))
    print(f"{out}: {pages} pages, {out.stat().st_size / 1e6:.1f} MB in {made.seconds:.0f} s; "
          + ", ".join(f"{k} {v}" for k, v in made.stats.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
