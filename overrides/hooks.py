"""Build hooks (mkdocs.yml `hooks:`): keep notebook pages free of requests to a CDN.

The notebook HTML template of mkdocs-jupyter (nbconvert's) embeds a MathJax loader and a
module script that imports mermaid from a CDN when a notebook contains a mermaid output.
The book renders math with its vendored KaTeX and makes no request off its own origin, so
both are removed from notebook pages.
"""

import re

CDN_SCRIPTS = [
    re.compile(r'<script src="[^"]*"> ?</script>\s*<!-- MathJax configuration -->', re.S),
    re.compile(r'<script type="text/x-mathjax-config">.*?</script>', re.S),
    re.compile(r'<script type="module">(?:(?!</script>).)*?https://cdnjs\.cloudflare\.com.*?</script>', re.S),
]


def on_post_page(output, page, config):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    for pattern in CDN_SCRIPTS:
        output = pattern.sub("", output)
    return output
