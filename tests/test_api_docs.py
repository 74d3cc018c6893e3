"""The first mention of a PyTorch API on a page links to its official documentation
(overrides/api_docs.py): which spans count as a mention, and that the built pages carry the links."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter

import pytest

import site_check

spec = importlib.util.spec_from_file_location("api_docs", site_check.ROOT / "overrides" / "api_docs.py")
api_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(api_docs)


@pytest.mark.parametrize(
    "span, api",
    [
        ("loss.backward()", "torch.Tensor.backward"),
        ("backward()", "torch.Tensor.backward"),
        (".grad", "torch.Tensor.grad"),
        ("x.grad", "torch.Tensor.grad"),
        ("torch.no_grad()", "torch.no_grad"),
        ("no_grad", "torch.no_grad"),
        ("torch.autograd.grad(loss, h)", "torch.autograd.grad"),
        ("torch.func.grad", "torch.func.grad"),
        ("requires_grad_(False)", "torch.Tensor.requires_grad_"),
        ("optimizer.zero_grad()", "torch.optim.Optimizer.zero_grad"),
        ("module.zero_grad()", "torch.nn.Module.zero_grad"),
        ("ctx.save_for_backward", "torch.autograd.function.FunctionCtx.save_for_backward"),
        ("torch.autograd.gradcheck.gradcheck", "torch.autograd.gradcheck"),
        ("nn.Parameter", "torch.nn.Parameter"),
        # not a mention of a listed API:
        ("grad", None),  # three APIs are called grad
        ("torch.relu", None),
        ("w.grad.zero_()", None),
        ("head(feats.clone())", None),
        ("requires_grad=True", None),
        ("MyFunction.apply(x)", None),
        ("snippets/engine_vs_torch.py", None),
    ],
)
def test_which_spans_name_an_api(span, api):
    assert api_docs.resolve(span) == api


def test_only_the_first_mention_outside_code_headings_and_links_is_linked():
    html = (
        '<h2 id="a"><code>backward()</code></h2>'
        "<pre><code>loss.backward()</code></pre>"
        "<details><summary>Why <code>x.grad</code></summary></details>"
        '<p><a href="../forks/"><code>x.grad</code></a> then <code>loss.backward()</code> and '
        "<code>L.backward()</code>, <code>x.grad</code>.</p>"
    )
    out = api_docs.link_first_mentions(html)
    links = re.findall(r'<a class="api-doc" href="([^"]+)"[^>]*><code>([^<]*)</code></a>', out)
    assert links == [
        (api_docs.BASE + "generated/torch.Tensor.backward.html", "loss.backward()"),
        (api_docs.BASE + "generated/torch.Tensor.grad.html", "x.grad"),
    ]
    assert out.startswith('<h2 id="a"><code>backward()</code></h2><pre><code>loss.backward()</code></pre>')


def test_a_link_the_author_wrote_counts_as_the_first_mention():
    html = (f'<p><a href="{api_docs.BASE}generated/torch.func.vmap.html"><code>torch.func.vmap</code></a> '
            "and later <code>torch.func.vmap</code></p>")
    assert api_docs.link_first_mentions(html) == html


def test_every_listed_api_has_a_page_under_the_docs_of_the_verified_version():
    from bookcheck import versions

    assert api_docs.BASE == "https://docs.pytorch.org/docs/{}/".format(".".join(versions.pinned().split(".")[:2]))
    for api, page in api_docs.API.items():
        assert re.fullmatch(r"(generated/[\w.]+\.html(#[\w.-]+)?|[\w/]+\.html(#[\w.-]+)?)", page), (api, page)
        if page.startswith("generated/") and "#" not in page:
            # A generated page is named after the API (or the module path that defines it).
            assert page[len("generated/"):-len(".html")].split(".")[-1] == api.split(".")[-1], (api, page)
    for alias, api in api_docs.ALIASES.items():
        assert api in api_docs.API, alias
    for name, api in api_docs.BARE.items():
        assert api is None or api in api_docs.API, name


@pytest.fixture(scope="module")
def book():
    built = site_check.BACKGROUND.build("book")
    assert built.returncode == 0, built.log[-3000:]
    return built.site


def test_built_pages_link_the_first_mention_of_each_api(book):
    # The print page repeats every page (each page's first mention is linked there again).
    pages = [p for p in site_check.site_pages(book) if p not in ("404.html", site_check.PRINT_PAGE)]
    linked = Counter()
    first_unlinked = []
    for rel in pages:
        html = (book / rel).read_text(encoding="utf-8")
        article = html[html.find("<article"): html.find("</article>")]
        hrefs = re.findall(r'<a class="api-doc" href="([^"]+)"', article)
        assert len(hrefs) == len(set(hrefs)), (rel, [h for h, n in Counter(hrefs).items() if n > 1])
        linked.update(re.findall(r'href="(https://docs\.pytorch\.org/[^"]+)"', article))
        # The page that teaches each Part I API links it at its first mention.
        if rel == "part1/hand-trace/index.html":
            first_unlinked += [] if api_docs.url("torch.Tensor.backward") in hrefs else [rel]
        if rel == "part2/tracking-off/index.html":
            for api in ("torch.no_grad", "torch.inference_mode", "torch.Tensor.detach"):
                if api_docs.url(api) not in hrefs:
                    first_unlinked.append((rel, api))
    assert first_unlinked == []
    # Nearly every listed API is mentioned somewhere in the book (an unused entry is a typo).
    unused = [api for api in api_docs.API if api_docs.url(api) not in linked]
    assert len(unused) <= 3, unused
    assert sum(linked.values()) >= 250, sum(linked.values())


def test_the_api_index_lists_every_api_a_page_links(book):
    """reference/apis: one row per API that any page links to its documentation, each with a
    page that teaches it."""
    index = (book / "reference" / "apis" / "index.html").read_text(encoding="utf-8")
    table = index[index.find('<div class="api-index">'):]
    table = table[:table.find("</table>")]
    rows = re.findall(r'<tr><td><a href="([^"]+)"><code>([^<]*)</code></a></td><td><a href="([^"]+)">', table)
    assert len(rows) >= 40
    indexed = {href for href, _, _ in rows}
    for rel in site_check.site_pages(book):
        html = (book / rel).read_text(encoding="utf-8")
        for href in re.findall(r'<a class="api-doc" href="([^"]+)"', html):
            assert href in indexed, f"{rel} links {href}, which the API index does not list"
    assert [api for _, api, _ in rows] == sorted((api for _, api, _ in rows), key=str.lower)
