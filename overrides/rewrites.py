"""Every change the build makes to HTML that Material, mkdocs-jupyter (nbconvert) or mermaid2
wrote, in one place, each with why no documented option does it. overrides/site_hooks.py applies
them: PAGE to every page (and the 404 page); NOTEBOOK_CONTENT to a notebook's content, once,
before anything reads it (Material's search indexes it, the print page copies it); NOTEBOOK to a
notebook's finished page (its table of contents is the template's, not the content's).

Options checked: Material 9.8 (theme features, the search plugin's lang, separator, pipeline and
fields; template blocks of its Customization page), mkdocs-jupyter 0.26 (include_source, theme,
no_input, no_prompt, remove_tag_config, highlight_extra_classes, include_requirejs,
custom_mathjax_url, toc_depth, data_files) and mermaid2 1.2 (javascript, arguments, version).
None of them does what a rewrite below does; when one does, its rewrite goes.

Each rewrite is (what, why, function); a function takes the page's HTML and returns it.
"""

from __future__ import annotations

import html
import re

from bookcheck.notebooks import SETUP_MARK

# ------------------------------------------------------------------------------------------
# Every page
# ------------------------------------------------------------------------------------------

SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
NAMED_DIALOG = '<div class="md-search" data-md-component="search" role="dialog" aria-label="Search the book">'


def name_search_dialog(output: str) -> str:
    return output.replace(SEARCH_DIALOG, NAMED_DIALOG, 1)


CANONICAL_SORTED = re.compile(r'<link href="([^"]*)" rel="canonical"/?>')


def canonical_link(output: str) -> str:
    return CANONICAL_SORTED.sub(r'<link rel="canonical" href="\1">', output, count=1)


PAGE = [
    ("the search dialog gets an accessible name",
     "Material's search partial gives its role=\"dialog\" no name (axe: aria-dialog-name); the "
     "partial has no option for one, and overriding partials/search.html would copy Material's "
     "markup into the book",
     name_search_dialog),
    ("mermaid2's canonical link written back in Material's form",
     "on a page with diagrams mermaid2 re-serialises the page with BeautifulSoup, which sorts "
     "every tag's attributes; <link rel=\"canonical\" href> becomes <link href=\"http://...\" "
     "rel=\"canonical\"/>, the form of a stylesheet from another address "
     "(the site step checks every page for it). mermaid2 has no option to keep them",
     canonical_link),
]

# ------------------------------------------------------------------------------------------
# Notebooks (nbconvert's lab template, as mkdocs-jupyter renders it)
# ------------------------------------------------------------------------------------------

# <style type="text/css"> blocks of the JupyterLab theme and of pygments, each hundreds of
# lines, placed inside the page's content.
INLINE_STYLE = re.compile(r"<style(?: type=\"text/css\")?>(?:(?!</style>).)*?</style>", re.S)
NB_CLIPBOARD = [
    re.compile(r"<script>\s*\(function \(global, factory\) \{(?:(?!</script>).)*?clipboard-copy(?:(?!</script>).)*?</script>", re.S),
    re.compile(r"<script>\s*document\.addEventListener\('clipboard-copy'(?:(?!</script>).)*?</script>", re.S),
    re.compile(r'<div class="clipboard-copy-txt" id="[^"]*">[^<]*</div>'),
    re.compile(r'<div class="zeroclipboard-container">\s*<clipboard-copy.*?</clipboard-copy>\s*</div>', re.S),
]
NB_CODE = re.compile(r'<div class="highlight-ipynb hl-(\w+)"><pre>(.*?)</pre>', re.S)
NB_MARKDOWN_CODE = re.compile(r'<div class="highlight"><pre>(?!<code>)(.*?)</pre>', re.S)  # a fence in a Markdown cell
NB_CELL_ID = re.compile(r'id="cell-id=([^"]*)"')


def drop_inline_styles(output: str) -> str:
    return INLINE_STYLE.sub("", output)


def drop_template_copy_button(output: str) -> str:
    for pattern in NB_CLIPBOARD:
        output = pattern.sub("", output)
    return output


def code_in_material_markup(output: str) -> str:
    output = NB_CODE.sub(r'<div class="language-\1 highlight highlight-ipynb"><pre><code>\2</code></pre>', output)
    return NB_MARKDOWN_CODE.sub(r'<div class="highlight"><pre><code>\1</code></pre>', output)


def cell_ids_as_selectors(output: str) -> str:
    return NB_CELL_ID.sub(r'id="cell-\1"', output)


HEADING = re.compile(r'<h[1-6] id="([^"]+)"[^>]*>(.*?)</h[1-6]>', re.S)


def _slug(text: str) -> str:
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def toc_links_to_headings(output: str) -> str:
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


# A notebook's finished page: its table of contents is the template's, made from the headings
# mkdocs-jupyter reads (on_post_page).
NOTEBOOK = [
    ("table-of-contents links pointed at their headings",
     "mkdocs-jupyter slugs a heading for the TOC without its code spans (\"Why `zero_grad()` "
     "every step\" -> #why-every-step) while nbconvert's id keeps them "
     "(#why-zero_grad-every-step); its toc_depth option sets the depth only",
     toc_links_to_headings),
]


# A notebook's content (nbconvert's HTML, which mkdocs-jupyter gives mkdocs as the page's content),
# rewritten once, before anything reads it: Material's search plugin indexes it and the print
# page copies it (on_page_content, at a priority that runs before both).

NB_NOT_SEARCHED = re.compile(r'<(a class="anchor-link"|div class="jp-(?:Input|Output)Prompt[^"]*")')
# The code of the set-up cell (bookbuild.notebook_gen.SETUP), in Material's markup (made above),
# by its first words (bookcheck.notebooks.SETUP_MARK; overrides/hooks.py put this checkout on
# sys.path): on its <pre> only, since Material's search parser ends an excluded element at the
# first closing tag of the same name (a cell is nested <div>s, so a whole cell cannot be excluded).
NB_SET_UP_CODE = re.compile(r'<pre>(?=<code><span></span><span class="c1">' + re.escape(html.escape(SETUP_MARK)) + ")")


def prompts_and_permalinks_not_searched(content: str) -> str:
    return NB_NOT_SEARCHED.sub(r"<\1 data-search-exclude", content)


def set_up_cell_not_searched(content: str) -> str:
    return NB_SET_UP_CODE.sub("<pre data-search-exclude>", content)


NOTEBOOK_CONTENT = [
    ("the template's inline stylesheets dropped",
     "nbconvert's lab template embeds the JupyterLab theme and pygments' styles in every "
     "notebook page (about 550 KB each; on the print page 2.9 MB of its 7.3 MB); "
     "mkdocs-jupyter's `theme` option picks light or dark but always embeds one. "
     "assets/css/book.css styles the few classes the pages use",
     drop_inline_styles),
    ("the template's copy button dropped",
     "the template inlines a clipboard library, a listener and a button over each cell; "
     "mkdocs-jupyter has no option to leave them out. The cells get Material's copy button "
     "instead (the code markup below), as on every other page. Dropped from the content, before "
     "Material's search indexes it (each code cell's search text began with the button's "
     "\"Copied!\") and before the print page copies it",
     drop_template_copy_button),
    ("each cell's code, and each fence of a Markdown cell, in Material's code markup",
     "Material's colours, copy button and keyboard-reachable scroll region apply to "
     "<div class=\"language-x highlight\"><pre><code>; nbconvert writes <pre> without <code>, "
     "so a long line of a reference solution folded in a Markdown cell made a phone's page "
     "wider than its screen. mkdocs-jupyter's highlight_extra_classes adds classes but not the "
     "<code> element",
     code_in_material_markup),
    ("cell ids usable as CSS selectors",
     "nbconvert names each cell id=\"cell-id=<id>\"; Material's copy button addresses the code "
     "through its nearest id as a CSS selector, where \"=\" is invalid and the copy fails",
     cell_ids_as_selectors),
    ("prompts and heading permalinks kept out of search",
     "nbconvert writes a cell's prompt (\"In [1]:\") and a heading's permalink (\"¶\", class "
     "anchor-link) as text; Material's search leaves out only its own permalinks (class "
     "headerlink), so notebook results read \"Starter¶\" and \"In [1]: ...\". Material's "
     "documented data-search-exclude attribute keeps them out",
     prompts_and_permalinks_not_searched),
    ("the set-up cell kept out of search",
     "every generated notebook opens with the same set-up cell (it installs the book's package "
     "and prints torch's version), so a search for its words (WHEEL, or the error it raises) "
     "listed every notebook before the page that explains the cell (notebooks/anywhere.md). "
     "mkdocs-jupyter's remove_tag_config would take the cell off the page, where a reader "
     "needs it (and its template shows a cell's tags); Material's data-search-exclude keeps "
     "its code on the page and out of search",
     set_up_cell_not_searched),
]


def notebook_content(content: str) -> str:
    """A notebook page's content (nbconvert's HTML) as the book shows it, searches it and prints
    it (NOTEBOOK_CONTENT)."""
    for _, _, rewrite in NOTEBOOK_CONTENT:
        content = rewrite(content)
    return content


def page(output: str) -> str:
    for _, _, rewrite in PAGE:
        output = rewrite(output)
    return output


def notebook(output: str) -> str:
    """A notebook's finished page as the book shows it (NOTEBOOK)."""
    for _, _, rewrite in NOTEBOOK:
        output = rewrite(output)
    return output
