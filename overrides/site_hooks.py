"""Build hooks for the reader's site (mkdocs.yml `hooks:`, after overrides/hooks.py).

1. No render-blocking mermaid: mkdocs.yml gives mermaid2 (its `javascript` option) the book's
   loader, docs/assets/js/diagrams.js, as the library to put on pages with diagrams; it loads
   the vendored mermaid only when a diagram approaches the viewport.
2. The search dialog gets an accessible name (Material's `role="dialog"` has none).
3. Notebook pages drop the inline Jupyter stylesheets that nbconvert's template embeds (about
   550 KB per page, mostly the JupyterLab theme); book.css styles the few classes the pages use.
4. Notebook table-of-contents links point at their headings. mkdocs-jupyter slugs a heading for
   the TOC without its code spans ("Why `zero_grad()` every step" -> #why-every-step), while
   nbconvert's id keeps them (#why-zero_grad-every-step); such links are pointed at the id.
5. Every page gets a description of its own (the `<meta name="description">`, also used by the
   Open Graph tags of overrides/main.html): the items of its "After this page you can:" list.
6. On a page with diagrams, mermaid2 re-serialises the whole page with BeautifulSoup, which
   sorts every tag's attributes (it has no option to keep them). Material's canonical link,
   `<link rel="canonical" href="...">`, then reads `<link href="http://..." rel="canonical"/>`,
   the form of a stylesheet loaded from another address. It is written back in Material's form,
   as on every other page (tests/test_site_a11y.py checks every page).
7. The print page (mkdocs-print-site-plugin, mkdocs.yml: the whole book on one page, in nav
   order, the source of `make pdf`) turns every link to a page of the book into a link within
   itself, `#<page key>-<anchor>`. A page outside the nav (the workshop's notebooks, reached
   from their task pages) is not on it: such a link is pointed back at that page of the site
   (tests/test_site_a11y.py checks that every link to an anchor resolves, on every page). The
   notebooks on it are shown as on their own pages (3.: their code in Material's markup, without
   the inline JupyterLab theme, 2.9 MB of the page's 7.3 MB).
8. Search loads its index when the reader first opens it, not with every page: the search
   plugin's search/search_index.json (which Material fetches on every page) keeps only its
   config, and the whole index moves to search/search_docs.json, which the book's search worker
   fetches when search is opened (overrides/main.html, docs/assets/js/search-worker.js).
9. Every section of the nav has an index page (Material's navigation.indexes: the section's
   first page, its folder's index.md), so /paths/ or /part1/ is a page. Where such a page holds
   the line <!-- section-pages -->, it is replaced by a list of the section's other pages, in
   nav order, each linked by its nav title with its description (5.), so it cannot drift.
"""

import html
import json
import re
from pathlib import Path

from mkdocs.plugins import event_priority

SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
NAMED_DIALOG = '<div class="md-search" data-md-component="search" role="dialog" aria-label="Search the book">'
# nbconvert's lab template: <style type="text/css"> blocks of the JupyterLab theme and of
# pygments, each hundreds of lines, placed inside the page's content.
INLINE_STYLE = re.compile(r"<style(?: type=\"text/css\")?>(?:(?!</style>).)*?</style>", re.S)
# The template's own copy button (an inline clipboard library, a listener and a button over each
# cell's code): the cells get Material's copy button instead, as on every other page.
NB_CLIPBOARD = [
    re.compile(r"<script>\s*\(function \(global, factory\) \{(?:(?!</script>).)*?clipboard-copy(?:(?!</script>).)*?</script>", re.S),
    re.compile(r"<script>\s*document\.addEventListener\('clipboard-copy'(?:(?!</script>).)*?</script>", re.S),
    re.compile(r'<div class="clipboard-copy-txt" id="[^"]*">[^<]*</div>'),
    re.compile(r'<div class="zeroclipboard-container">\s*<clipboard-copy.*?</clipboard-copy>\s*</div>', re.S),
]
NB_CODE = re.compile(r'<div class="highlight-ipynb hl-(\w+)"><pre>(.*?)</pre>', re.S)
AFTER = re.compile(r"^After this (page|path|part) you can:?\s*\n((?:[ \t]*\n)*(?:[ \t]*[-*+] .*\n(?:[ \t]+\S.*\n)*)+)", re.M)
MAX_DESCRIPTION = 300


def describe(markdown: str) -> str | None:
    """The page's "After this page (path, part) you can:" list as one plain sentence (None: no such list)."""
    found = AFTER.search(markdown + "\n")
    if not found:
        return None
    items = re.split(r"^[ \t]*[-*+] ", found.group(2), flags=re.M)
    items = [" ".join(item.split()) for item in items if item.strip()]
    text = f"After this {found.group(1)} you can " + plain(items[0]).rstrip(".;")
    for item in items[1:]:  # whole items, as many as fit
        more = text + "; " + plain(item).rstrip(".;")
        if len(more) + 1 > MAX_DESCRIPTION:
            break
        text = more
    return text + "."


def plain(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images: their text
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)
    text = re.sub(r"\*{1,2}([^*]+)\*{1,2}", r"\1", text)
    text = re.sub(r"\\\((.*?)\\\)", r"\1", text)
    return text.replace("`", "")


# Before overrides/hooks.py, which removes every marker line (<!-- section-pages --> with them).
@event_priority(50)
def on_page_markdown(markdown, page, config, files):
    if "description" not in page.meta:
        found = describe(markdown)
        if found:
            page.meta["description"] = found
    if SECTION_LINE.search(markdown):
        markdown = SECTION_LINE.sub(lambda m: section_pages(page.file.src_uri, config), markdown)
    return markdown


# 9. A section's index page lists the section's pages.
SECTION_LINE = re.compile(r"^<!--\s*section-pages\s*-->[ \t]*$", re.M)


def section_of(nav, index: str) -> list[tuple[str, str]] | None:
    """(title, path) of the pages of the nav section whose first page is ``index``."""
    for item in nav or []:
        if not isinstance(item, dict):
            continue
        for value in item.values():
            if not isinstance(value, list):
                continue
            entries = [(t, v) for entry in value if isinstance(entry, dict) for t, v in entry.items() if isinstance(v, str)]
            entries += [(None, entry) for entry in value if isinstance(entry, str)]
            first = value[0] if value else None
            first = first if isinstance(first, str) else next(iter(first.values())) if isinstance(first, dict) else None
            if first == index:
                return [(t, v) for t, v in entries if v != index]
            found = section_of(value, index)
            if found is not None:
                return found
    return None


def section_pages(src: str, config) -> str:
    """Markdown: the pages of the section whose index page is ``src``, each linked by its nav
    title, with its description where it has one."""
    import posixpath

    pages = section_of(config["nav"], src)
    if not pages:
        raise ValueError(f"{src} holds <!-- section-pages --> but is not the first page of a nav section")
    docs = Path(config["docs_dir"])
    lines = []
    for title, path in pages:
        link = posixpath.relpath(path, posixpath.dirname(src) or ".")
        about = describe((docs / path).read_text(encoding="utf-8")) if path.endswith(".md") else None
        about = about and re.sub(r"^After this \w+ you can ", "", about)
        lines.append(f"- [{title or path}]({link})" + (f": {about}" if about else ""))
    return "\n".join(lines) + "\n"


HEADING = re.compile(r'<h[1-6] id="([^"]+)"[^>]*>(.*?)</h[1-6]>', re.S)


def _slug(text: str) -> str:
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def repair_toc_links(output: str) -> str:
    ids = set(re.findall(r'\bid="([^"]+)"', output))
    moved = {}
    for found in HEADING.finditer(output):
        without_code = re.sub(r"<code>.*?</code>", " ", found.group(2), flags=re.S)
        without_code = re.sub(r"<[^>]+>|\u00b6", "", without_code)
        slug = _slug(html.unescape(without_code))
        if slug and slug not in ids:
            moved.setdefault(slug, found.group(1))
    if not moved:
        return output
    return re.sub(r'href="#([^"]+)"', lambda m: f'href="#{moved.get(m.group(1), m.group(1))}"', output)


def on_page_context(context, page, config, nav):
    """A notebook page has no Markdown list to describe it: its first paragraph (the exercise's
    goal) does."""
    if "description" in page.meta or not page.file.src_uri.endswith(".ipynb") or not page.content:
        return context
    for para in re.findall(r"<p>(.*?)</p>", page.content, re.S):
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", para)).split())
        if len(text) > 40:
            if len(text) > MAX_DESCRIPTION:
                text = text[: MAX_DESCRIPTION - 1].rsplit(" ", 1)[0].rstrip(",;:") + "\u2026"
            page.meta["description"] = text
            break
    return context


def on_post_template(output, template_name, config):
    """The 404 page is a static template: its search dialog is named here."""
    return output.replace(SEARCH_DIALOG, NAMED_DIALOG, 1)


def on_post_page(output, page, config):
    output = output.replace(SEARCH_DIALOG, NAMED_DIALOG, 1)
    output = CANONICAL_SORTED.sub(r'<link rel="canonical" href="\1">', output, count=1)
    if page.file.src_uri.endswith(".ipynb"):
        output = repair_toc_links(notebook_html(output))
    return output


def notebook_html(output: str, keep_style=lambda css: False) -> str:
    """nbconvert's HTML of a notebook as the book shows it (3.): without the template's inline
    stylesheets (but those ``keep_style`` keeps) and its copy button, each cell's code in
    Material's code markup (its colours, its copy button, a scroll region Material makes
    reachable by keyboard). A notebook page, and the notebooks on the print page (7.)."""
    output = INLINE_STYLE.sub(lambda m: m.group(0) if keep_style(m.group(0)) else "", output)
    for pattern in NB_CLIPBOARD:
        output = pattern.sub("", output)
    output = NB_CODE.sub(r'<div class="language-\1 highlight highlight-ipynb"><pre><code>\2</code></pre>', output)
    # nbconvert names each cell id="cell-id=<id>"; Material's copy button addresses the code
    # through its nearest id as a CSS selector, where "=" is invalid and the copy fails.
    return NB_CELL_ID.sub(r'id="cell-\1"', output)


NB_CELL_ID = re.compile(r'id="cell-id=([^"]*)"')
CANONICAL_SORTED = re.compile(r'<link href="([^"]*)" rel="canonical"/?>')


def escape(text: str) -> str:
    return html.escape(text, quote=True)


# 7. The print page's links to pages that are not on it.
ID = re.compile(r"""\bid=["']([^"']+)["']""")
IN_PAGE_LINK = re.compile(r"""href=(["'])#([^"']+)\1""")
PAGES = {}  # page key, as the print page names a page's section -> the page's URL


def page_key(url: str) -> str:
    """The id the print page gives a page's section: its URL with "/" as "-" (index: "index")."""
    return url.lower().strip().strip("/").replace(".html", "").replace("/", "-") or "index"


def on_files(files, config):
    PAGES.clear()
    PAGES.update((page_key(f.url), f.url) for f in files.documentation_pages())
    return files


def print_page_links(output: str, prefix: str) -> str:
    """``output``, the print page, with each link to a page that is not on it (no id of that
    page's key) pointed at that page of the site (``prefix``: the site's root from the print page)."""
    ids = set(ID.findall(output))

    def point(m):
        target = m.group(2)
        if target in ids:
            return m.group(0)
        keys = [k for k in PAGES if (target == k or target.startswith(k + "-")) and k not in ids]
        if not keys:
            return m.group(0)  # an anchor that is nowhere: left for the test to find
        key = max(keys, key=len)
        anchor = target[len(key) + 1:]
        return f'href={m.group(1)}{prefix}{PAGES[key]}{"#" + anchor if anchor else ""}{m.group(1)}'

    return IN_PAGE_LINK.sub(point, output)


def on_post_build(config):
    """After the plugins have written the print page and the search index (hooks run after
    the plugins): 7 and 8."""
    _print_page(config)
    _split_search_index(config)


def _print_page(config):
    import sys

    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)  # bookcheck of this checkout (the serve venv does not install it)
    from bookcheck.pdf import print_page_file

    path = print_page_file(config)
    if path is not None:
        text = path.read_text(encoding="utf-8")
        # the notebooks on it as on their own pages; the print plugin's own style stays
        fixed = notebook_html(text, keep_style=lambda css: "print-site" in css)
        fixed = print_page_links(fixed, "../" if config["use_directory_urls"] else "")
        if fixed != text:
            path.write_text(fixed, encoding="utf-8")


# 8. The search index on first use.
SEARCH_INDEX = "search/search_index.json"
SEARCH_DOCS = "search/search_docs.json"


def _split_search_index(config):
    site = Path(config["site_dir"])
    index = site / SEARCH_INDEX
    if not index.is_file():  # no search plugin
        return
    full = json.loads(index.read_text(encoding="utf-8"))
    if not full.get("docs"):  # split already (the plugin did not write it again), or nothing indexed
        return
    (site / SEARCH_DOCS).write_text(json.dumps(full, separators=(",", ":")), encoding="utf-8")
    index.write_text(json.dumps({"config": full["config"], "docs": []}, separators=(",", ":")), encoding="utf-8")
