"""The build's changes for paper (overrides/print_hooks.py), on small inputs: screen-only words
marked in folded blocks' titles only, breaks in table code between tokens only, and a cover
that states the pinned torch version and the date. tests/test_pdf.py checks the PDF itself."""

import datetime
import importlib.util
import re

import pytest

from bookcheck import ROOT, versions

spec = importlib.util.spec_from_file_location("print_hooks", ROOT / "overrides" / "print_hooks.py")
print_hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(print_hooks)


def test_click_to_open_is_marked_screen_only_in_a_folded_title_only():
    html = ('<details class="example">\n<summary><code>snippets/x.py</code> (click to open)</summary>\n'
            "<p>A paragraph may say (click to open) as prose.</p></details>")
    out = print_hooks.screen_only(html)
    assert ('<summary><code>snippets/x.py</code> <span class="book-screen-only">(click to open)</span></summary>'
            in out)
    assert "<p>A paragraph may say (click to open) as prose.</p>" in out
    assert print_hooks.screen_only(out) == out  # a page built again is not marked twice


def test_table_code_breaks_between_tokens_only():
    assert print_hooks.token_breaks("torch.autograd.grad(y, x)") == "torch<wbr>.autograd<wbr>.grad(<wbr>y, x)"
    assert print_hooks.token_breaks("clip_grad_norm_") == "clip_grad_norm_"  # one name: never split
    assert print_hooks.token_breaks("2.13 x.T") == "2.13 x<wbr>.T"  # a number keeps its dot
    page = ("<table><tr><td><code>a.b</code></td></tr></table>\n<p><code>a.b</code></p>\n"
            '<td><code class="highlight"><span>a.b</span></code></td>')
    out = print_hooks.table_code_breaks(page)
    assert "<td><code>a<wbr>.b</code></td>" in out
    assert "<p><code>a.b</code></p>" in out and "<span>a.b</span>" in out  # outside tables, or markup
    assert print_hooks.table_code_breaks(out) == out


def test_cover_states_the_pinned_torch_version_the_date_and_how_to_read():
    config = {"site_name": "Autograd, verified", "site_url": "https://example.org/book/"}
    cover = print_hooks.cover(config)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", cover))
    assert f"torch {versions.pinned()}" in text
    assert datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d") in text
    assert "How to read this book" in text and "Autograd, verified" in text
    assert 'href="https://example.org/book/"' in cover and "Online" in text
    assert cover.startswith('<section id="print-site-cover-page"')


@pytest.mark.parametrize("site_url", ["http://127.0.0.1:8000/", "http://localhost:8001/", "", None])
def test_cover_gives_no_online_address_for_a_local_build(site_url):
    text = re.sub(r"<[^>]+>", " ", print_hooks.cover({"site_name": "Autograd, verified", "site_url": site_url}))
    assert "Online" not in text and "127.0.0.1" not in text and "Autograd, verified" in text
