"""Build hooks for the reader's site (mkdocs.yml `hooks:`, after overrides/hooks.py).

1. No render-blocking mermaid: mkdocs.yml gives mermaid2 (its `javascript` option) the book's
   loader, docs/assets/js/diagrams.js, as the library to put on pages with diagrams; it loads
   the vendored mermaid only when a diagram approaches the viewport.
2. The HTML that Material, nbconvert (mkdocs-jupyter) and mermaid2 write is changed where no
   documented option of theirs does it, by the rewrites of overrides/rewrites.py, each listed
   there with its reason: the search dialog's name and mermaid2's canonical link on every page;
   a notebook's content (nbconvert's HTML: inline stylesheets, copy buttons, code markup, cell
   ids; prompts, permalinks and the set-up cell's code kept out of search) once, before
   Material's search indexes it and the print page copies it; and on a notebook's page the TOC
   links to its headings.
3. Every page gets a description of its own (the `<meta name="description">`, also used by the
   Open Graph tags of overrides/main.html): the items of its "After this page you can:" list.
4. The print page (mkdocs-print-site-plugin, mkdocs.yml: the whole book on one page, in nav
   order, the source of `make pdf`) turns every link to a page of the book into a link within
   itself, `#<page key>-<anchor>`. A page outside the nav (the workshop's notebooks, reached
   from their task pages) is not on it: such a link is pointed back at that page of the site
   (tests/test_site_a11y.py checks that every link to an anchor resolves, on every page). The
   notebooks on it are shown as on their own pages: it copies their rewritten content (2.).
5. Every section of the nav has an index page (Material's navigation.indexes: the section's
   first page, its folder's index.md), so /paths/ or /part1/ is a page. Where such a page holds
   the line <!-- section-pages -->, it is replaced by a list of the section's other pages, in
   nav order, each linked by its nav title with its description (3.), so it cannot drift.
"""

import html
import importlib.util
import re
from pathlib import Path

from mkdocs.plugins import event_priority

# overrides/rewrites.py, by its path (mkdocs loads hooks by path, not from a package)
_spec = importlib.util.spec_from_file_location("book_rewrites", Path(__file__).with_name("rewrites.py"))
rewrites = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rewrites)

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


# 5. A section's index page lists the section's pages.
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


@event_priority(50)  # before Material's search plugin indexes the page (with its title)
def on_page_context(context, page, config, nav):
    """A notebook page has no Markdown list to describe it: its first paragraph (the exercise's
    goal) does. A notebook outside the nav (the workshop's) is titled by its first heading, as
    its page shows it: mkdocs-jupyter's ignore_h1_titles (mkdocs.yml), which keeps the nav's
    short titles, leaves it its file's name ("W attention") in the header, the browser's tab
    and search."""
    if not page.file.src_uri.endswith(".ipynb") or not page.content:
        return context
    if page not in nav.pages and (h1 := re.search(r"<h1\b[^>]*>(.*?)</h1>", page.content, re.S)):
        heading = re.sub(r'<a class="anchor-link".*?</a>', "", h1.group(1), flags=re.S)
        page.title = " ".join(html.unescape(re.sub(r"<[^>]+>", "", heading)).split())
    if "description" in page.meta:
        return context
    for para in re.findall(r"<p>(.*?)</p>", page.content, re.S):
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", para)).split())
        if len(text) > 40:
            if len(text) > MAX_DESCRIPTION:
                text = text[: MAX_DESCRIPTION - 1].rsplit(" ", 1)[0].rstrip(",;:") + "\u2026"
            page.meta["description"] = text
            break
    return context


@event_priority(50)  # before Material's search plugin and the print plugin read the content
def on_page_content(html, page, config, files):
    """A notebook's content as its page shows it, Material's search indexes it and the print
    page copies it (overrides/rewrites.py, NOTEBOOK_CONTENT)."""
    if page.file.src_uri.endswith(".ipynb"):
        return rewrites.notebook_content(html)
    return html


def on_post_template(output, template_name, config):
    """The 404 page is a static template: its rewrites are made here."""
    return rewrites.page(output)


def on_post_page(output, page, config):
    output = rewrites.page(output)
    if page.file.src_uri.endswith(".ipynb"):
        output = rewrites.notebook(output)
    return output


def escape(text: str) -> str:
    return html.escape(text, quote=True)


# 4. The print page's links to pages that are not on it.
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
    """After the plugins have written the print page (hooks run after the plugins): 4."""
    _print_page(config)


def _print_page(config):
    import sys

    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)  # bookcheck of this checkout (the serve venv does not install it)
    from bookbuild.pdf import print_page_file

    path = print_page_file(config)
    if path is not None:
        text = path.read_text(encoding="utf-8")
        fixed = print_page_links(text, "../" if config["use_directory_urls"] else "")
        if fixed != text:
            path.write_text(fixed, encoding="utf-8")
