"""Build hooks (mkdocs.yml `hooks:`).

1. The test markers of a page (HTML comments such as <!--pytest-codeblocks:cont-->) are
   removed from its HTML. Inside an admonition or a list, Markdown wraps such a comment in an
   unclosed <p>, which would leave an empty paragraph between a code block and its output.
2. Notebook pages are kept free of requests to a CDN. The notebook HTML template of
   mkdocs-jupyter (nbconvert's) embeds a MathJax loader, and a module script that imports
   mermaid from a CDN when a notebook has a mermaid output. The book typesets math with its
   vendored KaTeX and makes no request off its own origin, so both are removed.
"""

import re

CDN_SCRIPTS = [
    re.compile(r'<script src="[^"]*"> ?</script>\s*<!-- MathJax configuration -->', re.S),
    re.compile(r'<script type="text/x-mathjax-config">.*?</script>', re.S),
    re.compile(r'<script type="module">(?:(?!</script>).)*?https://cdnjs\.cloudflare\.com.*?</script>', re.S),
]


MARKERS = re.compile(r"(?:<p>)?(?:\s*<!--\s*(?:pytest[-.]|hand-trace:).*?-->)+(?:\s*</p>)?")


def on_page_content(html, page, config, files):
    return MARKERS.sub("", html)


def on_post_page(output, page, config):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    for pattern in CDN_SCRIPTS:
        output = pattern.sub("", output)
    return output
