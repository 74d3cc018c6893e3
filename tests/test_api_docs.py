"""Links to PyTorch's documentation: the API index built from the book's code (bookbuild/apis.py,
docs/reference/apis.md), the one table of where PyTorch documents each API
(bookbuild/torch_docs.py), and the first mention of an API on a page (overrides/api_docs.py)."""

from __future__ import annotations

import html
import importlib.util
import posixpath
import re
from collections import Counter

import pytest

from bookcheck import site_check
from bookcheck import DOCS
from bookbuild import apis, torch_docs

spec = importlib.util.spec_from_file_location("api_docs", site_check.ROOT / "overrides" / "api_docs.py")
api_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(api_docs)

# The three targets the table once had, which PyTorch's documentation does not generate: the
# three are documented on autograd.html.
NOT_GENERATED = ["generated/torch.autograd.Function.html", "generated/torch.autograd.detect_anomaly.html",
                 "generated/torch.autograd.set_detect_anomaly.html"]


@pytest.fixture(scope="module")
def index():
    found, unknown = apis.entries()
    return found, unknown


def page_code(rel: str) -> str:
    return "\n".join(code for unit in apis.code_units(DOCS / rel) for code in unit)


# -- the index lists what the code uses, and only that


@pytest.mark.parametrize("page, expected", [
    ("part1/hand-trace.md", {"torch.Tensor.backward", "torch.Tensor.grad", "torch.Tensor.grad_fn",
                             "torch.autograd.graph.Node.next_functions", "torch.Tensor.item", "torch.tensor"}),
    ("part6/forward-mode.md", {"torch.autograd.forward_ad.dual_level", "torch.autograd.forward_ad.make_dual",
                               "torch.autograd.forward_ad.unpack_dual"}),
    ("part6/torch-func-jacobians.md", {"torch.func.jvp", "torch.func.vjp", "torch.func.jacrev", "torch.func.jacfwd",
                                       "torch.func.hessian"}),
    ("part2/training-memory.md", {"torch.autograd.graph.saved_tensors_hooks", "torch.Tensor.untyped_storage"}),
    ("part7/checkpointing.md", {"torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential"}),
    ("part1/production.md", {"torch.autograd.detect_anomaly"}),
    ("part1/custom-function.md", {"torch.is_grad_enabled", "torch.autograd.Function.apply",
                                  "torch.autograd.function.FunctionCtx.save_for_backward"}),
    ("part6/hooks.md", {"torch.autograd.graph.save_on_cpu"}),
])
def test_the_apis_a_page_calls_are_listed_with_it(index, page, expected):
    found, _ = index
    listed = {e.api for e in found if DOCS / page in e.pages}
    assert expected <= listed, sorted(expected - listed)


def test_an_api_is_taught_first_on_the_first_page_in_nav_order_whose_code_calls_it(index):
    found, _ = index
    entry = next(e for e in found if e.api == "torch.Tensor.backward")
    nav = [rel for _, rel in apis.nav_pages() if rel != "index.md" and not rel.startswith(apis.NOT_TEACHING)]
    first = next(rel for rel in nav if ".backward(" in page_code(rel))  # read as text, not by the collector
    assert entry.pages[0] == DOCS / first
    order = {rel: i for i, (_, rel) in enumerate(apis.nav_pages())}
    rest = [p.relative_to(DOCS).as_posix() for p in entry.pages[1:]]
    in_nav = [r for r in rest if r in order]
    assert in_nav == sorted(in_nav, key=order.get) and len(set(rest)) == len(rest)


def test_no_listed_api_is_absent_from_the_code_of_its_pages(index):
    found, unknown = index
    assert unknown == [], f"run python -m bookbuild.apis: {unknown[:5]}"
    assert len(found) >= 300
    codes = {}
    for e in found:
        name = e.api.rsplit(".", 1)[-1]
        for page in e.pages:
            rel = page.relative_to(DOCS).as_posix()
            codes.setdefault(rel, page_code(rel))
            assert re.search(rf"\b{re.escape(name)}\b", codes[rel]), (
                f"{e.api} is listed with {rel}, whose code never names {name}")


def test_the_index_reads_every_runnable_python_block_and_notebook():
    notebooks = sorted(DOCS.rglob("*.ipynb"))
    assert len(notebooks) >= 10 and set(notebooks) <= set(apis.book_pages())
    unit = apis.code_units(DOCS / "notebooks" / "w-softmax-ce.ipynb")
    assert len(unit) == 1 and any("def backward(grad_loss, logits, target)" in c for c in unit[0])
    # a block's --8<-- lines are expanded: the page shows an include, the index reads the code
    assert "--8<--" in (DOCS / "part3" / "tensor-engine.md").read_text(encoding="utf-8")
    assert not any("--8<--" in c for u in apis.code_units(DOCS / "part3" / "tensor-engine.md") for c in u)


RULE_CASES = '''
import numpy as np
import torch
import torch.nn.functional as F
from torch.func import grad
from snippets.scalar_engine import Value

a = np.ones(3)
print(a.sum().item(), {"w": 1}.values())   # NumPy and a dict
v = Value(2.0)
v.backward()                                 # the book's scalar engine, not torch
print(v.grad)

def helper(t):                               # nothing says t is a tensor
    return t.mean()

x = torch.ones(3, requires_grad=True)
y = F.relu(x).sum()
y.backward()
print(x.grad, y.grad_fn.next_functions)
g = grad(lambda z: z.sin().sum())(x)         # torch calls the lambda with a tensor

def check(t):
    if not isinstance(t, torch.Tensor):
        raise TypeError("pass a tensor")
    return t.numel()

opt = torch.optim.SGD([x], lr=0.1)
opt.zero_grad()
print(list(opt.state.values()))              # an optimizer's state is a dict
'''


def test_the_rule_counts_tensors_and_not_lookalikes():
    found = {apis.resolve(raw) for raw in apis.references_of([RULE_CASES])} - {None}
    assert found == {
        "torch.ones", "torch.nn.functional.relu", "torch.func.grad", "torch.Tensor", "torch.optim.SGD",
        "torch.optim.Optimizer.zero_grad", "torch.Tensor.sum", "torch.Tensor.backward", "torch.Tensor.grad",
        "torch.Tensor.grad_fn", "torch.autograd.graph.Node.next_functions", "torch.Tensor.sin",
        "torch.Tensor.numel",
    }, "item, values and mean are not torch's here; Value.backward and .grad are the engine's"
    # the same code with the lookalikes' receivers taken for tensors names what the rule leaves out
    loose = RULE_CASES.replace("np.ones(3)", "torch.ones(3)").replace("Value(2.0)", "torch.ones(())")
    found = {apis.resolve(raw) for raw in apis.references_of([loose])} - {None}
    assert {"torch.Tensor.item", "torch.Tensor.grad"} <= found


def test_the_page_states_the_rule():
    text = " ".join((DOCS / "reference" / "apis.md").read_text(encoding="utf-8").split())
    assert " ".join(apis.RULE.split()) in text


def test_names_resolve_to_their_public_documented_name():
    assert apis.resolve("torch.autograd.gradcheck:gradcheck") == "torch.autograd.gradcheck"
    assert apis.resolve("torch:nn.Linear().parameters") == "torch.nn.Module.parameters"
    assert apis.resolve("torch:nn.Parameter().grad") == "torch.Tensor.grad"
    assert apis.resolve("torch:GradScaler") == "torch.amp.GradScaler"  # the name PyTorch documents
    assert apis.resolve("torch:float32.is_floating_point") == "torch.dtype.is_floating_point"  # an instance's: its class's
    assert apis.resolve("torch:_dynamo.reset") is None  # torch's internals
    assert apis.resolve("torch:nn") is None  # a module is not an API
    assert apis.resolve("torch:Tensor.no_such_name") is None
    with pytest.raises(ValueError, match="not a raw reference"):
        apis.resolve("torch.nn.Linear")


def test_the_stored_resolutions_are_current():
    assert apis.NAMES_FILE.read_text(encoding="utf-8") == apis.names_text(apis.all_references()), (
        "bookbuild/api_names.json is not current: run python -m bookbuild.apis")


# -- the links: one table, each row in its form


def test_every_listed_api_has_a_row_of_the_table(index):
    found, _ = index
    missing = [e.api for e in found if e.api not in torch_docs.DOCS]
    assert missing == [], (f"{missing}: add their rows to bookbuild/torch_docs.py, read from PyTorch's "
                           f"documentation source (until then they link their module's page)")


def test_every_link_has_the_form_of_its_row():
    assert torch_docs.BASE == "https://docs.pytorch.org/docs/{}/".format(torch_docs.VERSION)
    forms = Counter()
    for api, (form, target) in torch_docs.DOCS.items():
        m = torch_docs.FORM_PATTERN[form].fullmatch(target)
        assert m, (api, form, target)
        name = api.rsplit(".", 1)[-1]
        if form == "page":  # generated/NAME.html, NAME as listed: the same last name
            assert m["doc"].rsplit(".", 1)[-1] == name, (api, target)
        elif form == "member":  # generated/CLASS.html#CLASS.NAME, CLASS the API's own
            assert (m["doc"], m["name"]) == (api.rsplit(".", 1)[0], name), (api, target)
        elif form == "inline":  # PAGE.html#FULL.NAME
            assert m["anchor"].rsplit(".", 1)[-1] == name, (api, target)
        elif form == "owner":  # what documents it: not an entry of its own
            assert not (m["anchor"] or "").endswith("." + name), (api, target)
        assert torch_docs.link(api) == (form, torch_docs.BASE + target)
        forms[form] += 1
    assert set(forms) == set(torch_docs.FORMS), forms
    assert torch_docs.link("torch.nn.functional.gelu") == ("module", torch_docs.BASE + "nn.functional.html")
    with pytest.raises(ValueError, match="full name"):
        torch_docs.link("backward")


def test_the_three_targets_pytorch_does_not_generate_are_gone():
    targets = [t for _, t in torch_docs.DOCS.values()] + list(api_docs.API.values())
    assert not set(NOT_GENERATED) & set(targets)
    assert torch_docs.DOCS["torch.autograd.Function"] == ("inline", "autograd.html#torch.autograd.Function")
    assert torch_docs.DOCS["torch.autograd.detect_anomaly"] == ("inline", "autograd.html#torch.autograd.detect_anomaly")
    assert torch_docs.DOCS["torch.autograd.set_detect_anomaly"] == (
        "inline", "autograd.html#torch.autograd.set_detect_anomaly")


def test_nearly_every_row_is_used(index):
    """A row no code uses, no page links, the hook's vocabulary does not name and that documents
    no used API is a typo, or dead (a few may wait for the page that will use them again)."""
    found, _ = index
    used = {e.api for e in found} | set(api_docs.ALIASES.values()) | {a for a in api_docs.BARE.values() if a}
    used |= {f"{cls}.{n}" for cls, names in api_docs.METHOD.items() for n in names}
    prose = set()
    for page in apis.book_pages():
        prose |= {m for m in re.findall(r"`([^`]+)`", page.read_text(encoding="utf-8")) if api_docs.resolve(m)}
    linked = {api_docs.resolve(m) for m in prose}
    owners = {api.rsplit(".", 1)[0] for api in used}
    unused = [api for api in torch_docs.DOCS if api not in used | linked | owners]
    assert len(unused) <= 5, unused


# -- the first mention of an API on a page links to its documentation


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
        ("torch.func.jacrev", "torch.func.jacrev"),
        ("requires_grad_(False)", "torch.Tensor.requires_grad_"),
        ("optimizer.zero_grad()", "torch.optim.Optimizer.zero_grad"),
        ("module.zero_grad()", "torch.nn.Module.zero_grad"),
        ("ctx.save_for_backward", "torch.autograd.function.FunctionCtx.save_for_backward"),
        ("torch.autograd.gradcheck.gradcheck", "torch.autograd.gradcheck"),
        ("nn.Parameter", "torch.nn.Parameter"),
        ("detect_anomaly", "torch.autograd.detect_anomaly"),
        # not a mention of a listed API:
        ("grad", None),  # three APIs are called grad
        ("torch.nn.functional.gelu", None),
        ("w.grad.zero_()", None),
        ("head(feats.clone())", None),
        ("requires_grad=True", None),
        ("MyFunction.apply(x)", None),
        ("snippets/engine_vs_torch.py", None),
    ],
)
def test_which_spans_name_an_api(span, api):
    assert api_docs.resolve(span) == api


@pytest.mark.parametrize("span, api", [
    ("torch.no_grad()", "torch.no_grad"), ("nn.Parameter", "torch.nn.Parameter"),
    ("x.grad", None), ("backward()", None), ("no_grad()", None), ("zero_grad()", None), ("gradcheck", None),
])
def test_a_page_of_its_own_engine_links_only_names_that_start_from_torch(span, api):
    assert api_docs.resolve(span, full_names_only=True) == api
    html = f"<p><code>{span}</code></p>"
    assert ("api-doc" in api_docs.link_first_mentions(html, full_names_only=True)) == (api is not None)


def test_the_engine_pages_say_so_and_their_built_pages_link_no_engine_method(book):
    from mkdocs.utils.meta import get_data

    own = [p for p in sorted(DOCS.rglob("*.md"))
           if get_data(p.read_text(encoding="utf-8"))[1].get("torch_links") == api_docs.FULL_NAMES]
    assert {p.relative_to(DOCS).as_posix() for p in own} >= {
        "part3/scalar-engine.md", "part3/scalar-engine-tested.md", "part3/tensor-engine.md", "part3/tensor-engine-tested.md"}
    for md in own:
        html = (book / md.relative_to(DOCS).with_suffix("") / "index.html").read_text(encoding="utf-8")
        for code in re.findall(r'<a class="api-doc" href="[^"]+" title="[^"]+"><code>([^<]*)</code>', html):
            assert api_docs.resolve(code, full_names_only=True), (md, code)


def test_only_the_first_mention_outside_code_headings_and_links_is_linked():
    html_in = (
        '<h2 id="a"><code>backward()</code></h2>'
        "<pre><code>loss.backward()</code></pre>"
        "<details><summary>Why <code>x.grad</code></summary></details>"
        '<p><a href="../forks/"><code>x.grad</code></a> then <code>loss.backward()</code> and '
        "<code>L.backward()</code>, <code>x.grad</code>, <code>torch.autograd.detect_anomaly()</code>.</p>"
    )
    out = api_docs.link_first_mentions(html_in)
    links = re.findall(r'<a class="api-doc" href="([^"]+)"[^>]*><code>([^<]*)</code></a>', out)
    assert links == [
        (api_docs.BASE + "generated/torch.Tensor.backward.html", "loss.backward()"),
        (api_docs.BASE + "generated/torch.Tensor.grad.html", "x.grad"),
        (api_docs.BASE + "autograd.html#torch.autograd.detect_anomaly", "torch.autograd.detect_anomaly()"),
    ]
    assert out.startswith('<h2 id="a"><code>backward()</code></h2><pre><code>loss.backward()</code></pre>')


def test_a_link_the_author_wrote_counts_as_the_first_mention():
    html_in = (f'<p><a href="{api_docs.BASE}generated/torch.func.vmap.html"><code>torch.func.vmap</code></a> '
               "and later <code>torch.func.vmap</code></p>")
    assert api_docs.link_first_mentions(html_in) == html_in


def test_the_hook_links_from_the_one_table():
    assert api_docs.BASE == torch_docs.BASE
    assert api_docs.API == {api: target for api, (_, target) in torch_docs.DOCS.items()}
    for alias, api in api_docs.ALIASES.items():
        assert api in api_docs.API, alias
    for name, api in api_docs.BARE.items():
        assert api is None or api in api_docs.API, name
    for cls, names in api_docs.METHOD.items():
        assert all(f"{cls}.{n}" in api_docs.API for n in names), cls


# -- the built site


@pytest.fixture(scope="module")
def book(book):
    """The built site's folder (conftest's book, the session's one build)."""
    assert book.returncode == 0, book.log[-3000:]
    return book.site


def test_built_pages_link_the_first_mention_of_each_api(book):
    # The print page repeats every page (each page's first mention is linked there again).
    pages = [p for p in site_check.site_pages(book) if p not in ("404.html", site_check.PRINT_PAGE)]
    targets = {torch_docs.BASE + target for _, target in torch_docs.DOCS.values()}
    linked = Counter()
    first_unlinked = []
    for rel in pages:
        text = (book / rel).read_text(encoding="utf-8")
        assert not any(torch_docs.BASE + t in text for t in NOT_GENERATED), rel
        article = text[text.find("<article"): text.find("</article>")]
        hrefs = re.findall(r'<a class="api-doc" href="([^"]+)"', article)
        assert len(hrefs) == len(set(hrefs)), (rel, [h for h, n in Counter(hrefs).items() if n > 1])
        assert set(hrefs) <= targets, (rel, set(hrefs) - targets)
        linked.update(hrefs)
        # The page that teaches each Part I API links it at its first mention.
        if rel == "part1/hand-trace/index.html":
            first_unlinked += [] if api_docs.url("torch.Tensor.backward") in hrefs else [rel]
        if rel == "part2/tracking-off/index.html":
            for api in ("torch.no_grad", "torch.inference_mode", "torch.Tensor.detach"):
                if api_docs.url(api) not in hrefs:
                    first_unlinked.append((rel, api))
    assert first_unlinked == []
    assert sum(linked.values()) >= 250, sum(linked.values())


def test_the_built_index_shows_every_entry_with_its_link(book, index):
    found, _ = index
    page = (book / "reference" / "apis" / "index.html").read_text(encoding="utf-8")
    table = page[page.find('<div class="api-index">'):]
    table = table[:table.find("</table>")]
    rows = re.findall(r'<tr>\s*<td><a href="([^"]+)"><code>(.*?)</code></a>( †)?</td>\s*<td><a href="([^"]+)">',
                      table, re.S)
    names = [html.unescape(name.replace("<wbr>", "")) for _, name, _, _ in rows]
    assert names == [e.api for e in found]
    for (href, _, mark, first), e in zip(rows, found):
        assert html.unescape(href) == e.url and bool(mark) == (e.form in ("owner", "module")), e.api
        target = posixpath.normpath(posixpath.join("reference/apis/", first))
        assert target == e.pages[0].relative_to(DOCS).with_suffix("").as_posix().removesuffix("/index"), e
    count = re.search(r"<p>(\d+) APIs, from the code of (\d+) pages", page)
    assert count and int(count[1]) == len(found)
    # the first load stays small (measured at the change: about 250 KB, 19 KB gzip, 5,000 elements)
    assert len(page.encode()) < 400_000 and len(re.findall(r"<[a-zA-Z]", page)) < 8000
