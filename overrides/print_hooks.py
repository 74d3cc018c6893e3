"""Build hooks for the book on paper (mkdocs.yml `hooks:`, after overrides/site_hooks.py);
the print stylesheet is docs/assets/css/print.css, the PDF is made by bookbuild/pdf.py.

1. Words meant for a screen are marked so that paper leaves them out: "(click to open)" in the
   title of a folded block (on paper every block is open) is wrapped in
   ``<span class="book-screen-only">``, which print.css hides. This runs before the print
   plugin copies each page's HTML into the print page.
2. The print page (print_page/, the whole book on one page) opens with a cover: the title,
   the torch version every block ran on (the project's pin, bookcheck.versions.pinned()), the
   date and commit of the build, and how to read the book (overrides/print_cover.html).
3. On the print page, code in a table cell may wrap only between tokens: a ``<wbr>`` is put
   before a dot that starts an attribute and after an opening bracket, a comma or a slash, and
   print.css forbids breaks anywhere else (without it, a narrow column split names anywhere,
   "requires_gr" / "ad").
"""

import re
import sys
import urllib.parse
from pathlib import Path

import jinja2
from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # bookcheck of this checkout (the serve venv does not install it)

from bookcheck import versions  # noqa: E402
from bookbuild import site_build  # noqa: E402
from bookbuild.pdf import print_page_file  # noqa: E402

COVER = Path(__file__).with_name("print_cover.html")
SUMMARY = re.compile(r"<summary\b[^>]*>.*?</summary>", re.S)
CLICK_TO_OPEN = re.compile(r"\s*\(click to open\)")
SCREEN_ONLY_SPAN = ' <span class="book-screen-only">(click to open)</span>'
PRINT_SITE_PAGE = re.compile(r'<div id="print-site-page"[^>]*>')
CELL = re.compile(r"<(td|th)\b[^>]*>.*?</\1>", re.S)
PLAIN_CODE = re.compile(r"<code>([^<]*)</code>")
# A break before ".name" (not inside a number such as 2.13) and after "(", "[", "," or "/".
TOKEN_BREAK = re.compile(r"(?<=[(\[,/])(?=\S)|(?<![\d\s])(?=\.[A-Za-z_])")


def screen_only(content: str) -> str:
    """``content`` with "(click to open)" in folded blocks' titles marked as screen-only words."""
    def mark(m):
        title = m.group(0)
        return title if "book-screen-only" in title else CLICK_TO_OPEN.sub(SCREEN_ONLY_SPAN, title)

    return SUMMARY.sub(mark, content)


def token_breaks(code: str) -> str:
    """The text of a ``<code>`` element (HTML-escaped) with ``<wbr>`` between its tokens."""
    return TOKEN_BREAK.sub("<wbr>", code)


def table_code_breaks(page: str) -> str:
    def cell(m):
        return PLAIN_CODE.sub(lambda c: f"<code>{token_breaks(c.group(1))}</code>", m.group(0))

    return CELL.sub(cell, page)


def public_url(site_url: str | None) -> str:
    """``site_url`` when it is an address a reader can open, else "" (a build without SITE_URL
    has mkdocs.yml's local default, http://127.0.0.1:8000/, which the cover does not print)."""
    host = urllib.parse.urlsplit(site_url or "").hostname or ""
    return "" if host in ("", "localhost") or host.startswith("127.") else site_url


def cover(config) -> str:
    template = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(
        COVER.read_text(encoding="utf-8"))
    facts = site_build.build_facts()
    return template.render(
        title=config["site_name"],
        torch=versions.pinned(),
        also=list(versions.also()),
        date=facts["date"],
        commit=facts["commit"],
        site_url=public_url(config["site_url"]),
    )


@event_priority(50)  # before the print plugin keeps the page's HTML for the print page
def on_page_content(content, page, config, files):
    return screen_only(content)


def on_post_build(config):
    path = print_page_file(config)
    if path is None:
        return
    text = path.read_text(encoding="utf-8")
    opening = PRINT_SITE_PAGE.search(text)
    if opening is None:
        raise RuntimeError(f"{path}: no <div id=\"print-site-page\">: the print plugin's markup changed")
    if 'id="print-site-cover-page"' not in text:
        text = text[: opening.end()] + cover(config) + text[opening.end():]
    path.write_text(table_code_breaks(text), encoding="utf-8")

