"""MkDocs hook: the first mention of a PyTorch API on a page links to its official documentation.

A mention is an inline code span outside code blocks, headings, links and
the titles of collapsed notes, that names an API of
``API``: by its full name (``torch.autograd.grad``, ``torch.no_grad()``), or as a method or
attribute on a receiver (``loss.backward()``, ``x.grad``, ``.detach()``, ``ctx.save_for_backward``),
or by a bare name that means one thing in this book (``gradcheck``, ``no_grad``). Arguments are
ignored (``requires_grad_(False)``). A span the author already linked to the PyTorch docs counts
as the first mention. The links are plain ``<a href>``: nothing is fetched. They point at the
documentation of the torch version the book is verified on (not ``stable``, which moves).

The page that holds ``<div class="api-index"></div>`` gets the index of every API of ``API``
that the book mentions: its documentation, the page that teaches it first (in nav order) and
every other page that mentions it, collected from every page's HTML in the same build.
"""

from __future__ import annotations

import html as html_module
import posixpath
import re
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent.parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bookcheck of this checkout
from bookcheck import versions  # noqa: E402

BASE = "https://docs.pytorch.org/docs/{}/".format(".".join(versions.pinned().split(".")[:2]))

# Full name -> page under BASE.
API = {
    "torch.Tensor.backward": "generated/torch.Tensor.backward.html",
    "torch.Tensor.grad": "generated/torch.Tensor.grad.html",
    "torch.Tensor.requires_grad": "generated/torch.Tensor.requires_grad.html",
    "torch.Tensor.requires_grad_": "generated/torch.Tensor.requires_grad_.html",
    "torch.Tensor.retain_grad": "generated/torch.Tensor.retain_grad.html",
    "torch.Tensor.is_leaf": "generated/torch.Tensor.is_leaf.html",
    "torch.Tensor.register_hook": "generated/torch.Tensor.register_hook.html",
    "torch.Tensor.register_post_accumulate_grad_hook": "generated/torch.Tensor.register_post_accumulate_grad_hook.html",
    "torch.Tensor.detach": "generated/torch.Tensor.detach.html",
    "torch.Tensor.clone": "generated/torch.Tensor.clone.html",
    "torch.Tensor.item": "generated/torch.Tensor.item.html",
    "torch.no_grad": "generated/torch.no_grad.html",
    "torch.enable_grad": "generated/torch.enable_grad.html",
    "torch.set_grad_enabled": "generated/torch.autograd.grad_mode.set_grad_enabled.html",
    "torch.inference_mode": "generated/torch.autograd.grad_mode.inference_mode.html",
    "torch.autograd.grad": "generated/torch.autograd.grad.html",
    "torch.autograd.Function": "generated/torch.autograd.Function.html",
    "torch.autograd.function.FunctionCtx.save_for_backward":
        "generated/torch.autograd.function.FunctionCtx.save_for_backward.html",
    "torch.autograd.function.FunctionCtx.mark_dirty": "generated/torch.autograd.function.FunctionCtx.mark_dirty.html",
    "torch.autograd.function.FunctionCtx.mark_non_differentiable":
        "generated/torch.autograd.function.FunctionCtx.mark_non_differentiable.html",
    "torch.autograd.function.FunctionCtx.set_materialize_grads":
        "generated/torch.autograd.function.FunctionCtx.set_materialize_grads.html",
    "torch.autograd.function.once_differentiable": "notes/extending.html",
    "torch.autograd.gradcheck": "generated/torch.autograd.gradcheck.gradcheck.html",
    "torch.autograd.gradgradcheck": "generated/torch.autograd.gradcheck.gradgradcheck.html",
    "torch.autograd.functional.jacobian": "generated/torch.autograd.functional.jacobian.html",
    "torch.autograd.functional.hessian": "generated/torch.autograd.functional.hessian.html",
    "torch.autograd.functional.hvp": "generated/torch.autograd.functional.hvp.html",
    "torch.autograd.detect_anomaly": "generated/torch.autograd.detect_anomaly.html",
    "torch.autograd.set_detect_anomaly": "generated/torch.autograd.set_detect_anomaly.html",
    "torch.autograd.graph.saved_tensors_hooks": "autograd.html#torch.autograd.graph.saved_tensors_hooks",
    "torch.autograd.graph.save_on_cpu": "autograd.html#torch.autograd.graph.save_on_cpu",
    "torch.optim.Optimizer.zero_grad": "generated/torch.optim.Optimizer.zero_grad.html",
    "torch.optim.Optimizer.step": "generated/torch.optim.Optimizer.step.html",
    "torch.nn.Module.zero_grad": "generated/torch.nn.Module.html#torch.nn.Module.zero_grad",
    "torch.nn.Module.eval": "generated/torch.nn.Module.html#torch.nn.Module.eval",
    "torch.nn.Module.train": "generated/torch.nn.Module.html#torch.nn.Module.train",
    "torch.nn.Parameter": "generated/torch.nn.parameter.Parameter.html",
    "torch.nn.utils.clip_grad_norm_": "generated/torch.nn.utils.clip_grad_norm_.html",
    "torch.nn.utils.clip_grad_value_": "generated/torch.nn.utils.clip_grad_value_.html",
    "torch.use_deterministic_algorithms": "generated/torch.use_deterministic_algorithms.html",
    "torch.manual_seed": "generated/torch.manual_seed.html",
    "torch.testing.assert_close": "testing.html#torch.testing.assert_close",
    "torch.allclose": "generated/torch.allclose.html",
    "torch.logsumexp": "generated/torch.logsumexp.html",
    "torch.broadcast_shapes": "generated/torch.broadcast_shapes.html",
    "torch.compile": "generated/torch.compile.html",
    "torch.autocast": "amp.html#torch.autocast",
    "torch.amp.GradScaler": "amp.html#gradient-scaling",
    "torch.func.grad": "generated/torch.func.grad.html",
    "torch.func.vmap": "generated/torch.func.vmap.html",
    "torch.func.jacrev": "generated/torch.func.jacrev.html",
    "torch.func.jacfwd": "generated/torch.func.jacfwd.html",
    "torch.func.hessian": "generated/torch.func.hessian.html",
    "torch.func.vjp": "generated/torch.func.vjp.html",
    "torch.func.jvp": "generated/torch.func.jvp.html",
    "torch.func.functional_call": "generated/torch.func.functional_call.html",
}

# Short forms a reader writes for the same APIs.
ALIASES = {
    "torch.autograd.gradcheck.gradcheck": "torch.autograd.gradcheck",
    "torch.autograd.gradcheck.gradgradcheck": "torch.autograd.gradgradcheck",
    "torch.autograd.grad_mode.inference_mode": "torch.inference_mode",
    "torch.autograd.grad_mode.no_grad": "torch.no_grad",
    "torch.autograd.set_grad_enabled": "torch.set_grad_enabled",
    "torch.cuda.amp.GradScaler": "torch.amp.GradScaler",
    "nn.Parameter": "torch.nn.Parameter",
    "nn.utils.clip_grad_norm_": "torch.nn.utils.clip_grad_norm_",
    "nn.utils.clip_grad_value_": "torch.nn.utils.clip_grad_value_",
    "autograd.Function": "torch.autograd.Function",
    "autograd.grad": "torch.autograd.grad",
    "func.vmap": "torch.func.vmap",
}

# A bare name (no receiver, or ``.name``) that means one API in this book.
BARE = {
    "backward": "torch.Tensor.backward",
    "grad": None,  # torch.func.grad, torch.autograd.grad or Tensor.grad: only with a receiver
    "no_grad": "torch.no_grad",
    "enable_grad": "torch.enable_grad",
    "set_grad_enabled": "torch.set_grad_enabled",
    "inference_mode": "torch.inference_mode",
    "gradcheck": "torch.autograd.gradcheck",
    "gradgradcheck": "torch.autograd.gradgradcheck",
    "detect_anomaly": "torch.autograd.detect_anomaly",
    "set_detect_anomaly": "torch.autograd.set_detect_anomaly",
    "use_deterministic_algorithms": "torch.use_deterministic_algorithms",
    "saved_tensors_hooks": "torch.autograd.graph.saved_tensors_hooks",
    "once_differentiable": "torch.autograd.function.once_differentiable",
    "clip_grad_norm_": "torch.nn.utils.clip_grad_norm_",
    "clip_grad_value_": "torch.nn.utils.clip_grad_value_",
    "Function": "torch.autograd.Function",
    "zero_grad": "torch.optim.Optimizer.zero_grad",
    "save_for_backward": "torch.autograd.function.FunctionCtx.save_for_backward",
    "requires_grad": "torch.Tensor.requires_grad",
    "requires_grad_": "torch.Tensor.requires_grad_",
    "retain_grad": "torch.Tensor.retain_grad",
    "is_leaf": "torch.Tensor.is_leaf",
    "register_hook": "torch.Tensor.register_hook",
    "register_post_accumulate_grad_hook": "torch.Tensor.register_post_accumulate_grad_hook",
    "detach": "torch.Tensor.detach",
    "clone": "torch.Tensor.clone",
    "item": "torch.Tensor.item",
}

# A method on a receiver: what the receiver's name says it is.
MODULES = {"model", "module", "net", "layer", "head"}
OPTIMIZERS = {"opt", "optimizer", "optim", "sgd", "adam"}
CTX = {"ctx"}
METHOD = {
    "torch.Tensor": {"backward", "grad", "requires_grad", "requires_grad_", "retain_grad", "is_leaf",
                     "register_hook", "register_post_accumulate_grad_hook", "detach", "clone", "item"},
    "torch.optim.Optimizer": {"zero_grad", "step"},
    "torch.nn.Module": {"zero_grad", "eval", "train"},
    "torch.autograd.function.FunctionCtx": {"save_for_backward", "mark_dirty", "mark_non_differentiable",
                                            "set_materialize_grads"},
}

SPAN = re.compile(r"^(\.?)((?:[A-Za-z_]\w*\.)*)([A-Za-z_]\w*)(?:\([^()]*\))?$")
TOKEN = re.compile(
    r"(?P<skip><pre\b.*?</pre>|<a\b.*?</a>|<h([1-6])\b.*?</h\2>|<summary\b.*?</summary>|<script\b.*?</script>)|<code>(?P<code>[^<]*)</code>",
    re.S,
)
LINKED_CODE = re.compile(r'<a\b[^>]*href="https://(?:docs\.)?pytorch\.org/[^"]*"[^>]*>\s*<code>([^<]*)</code>', re.S)


def resolve(text: str) -> str | None:
    """The API of ``API`` a code span names, or None."""
    m = SPAN.match(text.strip())
    if not m:
        return None
    dot, receiver, name = m.groups()
    full = receiver + name
    if full in API:
        return full
    if full in ALIASES:
        return ALIASES[full]
    if receiver.startswith(("torch.", "nn.", "F.", "func.", "autograd.")):
        return None  # a torch function this table does not list
    owner = receiver.rstrip(".").split(".")[-1] if receiver else ""
    if not owner and not dot:
        return BARE.get(name)
    if owner in CTX:
        cls = "torch.autograd.function.FunctionCtx"
    elif owner.lower() in OPTIMIZERS:
        cls = "torch.optim.Optimizer"
    elif owner.lower() in MODULES:
        cls = "torch.nn.Module"
    else:
        cls = "torch.Tensor"
    return f"{cls}.{name}" if name in METHOD[cls] else None


def url(api: str) -> str:
    return BASE + API[api]


def mentions(html: str) -> set[str]:
    """Every API of ``API`` that a page's HTML mentions in a code span (linked or not)."""
    found = {resolve(m.group(1)) for m in LINKED_CODE.finditer(html)}
    found |= {resolve(m.group("code")) for m in TOKEN.finditer(html) if m.group("code") is not None}
    return found - {None}


def link_first_mentions(html: str) -> str:
    seen = set()
    for m in LINKED_CODE.finditer(html):
        api = resolve(m.group(1))
        if api:
            seen.add(api)

    def replace(m):
        if m.group("skip"):
            return m.group(0)
        code = m.group("code")
        api = resolve(code)
        if api is None or api in seen:
            return m.group(0)
        seen.add(api)
        return f'<a class="api-doc" href="{url(api)}" title="PyTorch documentation: {api}"><code>{code}</code></a>'

    return TOKEN.sub(replace, html)


MENTIONED: dict[str, dict] = {}  # page url -> {"title", "apis"}, filled as pages render
NAV_ORDER: list[str] = []
INDEX_SLOT = '<div class="api-index"></div>'
NOT_TEACHING = ("paths/", "reference/")  # with the home page: they point to where an API is taught


def on_nav(nav, config, files):
    NAV_ORDER[:] = [p.url for p in nav.pages]
    return nav


def on_page_content(html, page, config, files):
    MENTIONED[page.url] = {"title": page.title, "apis": mentions(html)}
    return link_first_mentions(html)


def api_index(here: str) -> str:
    """The HTML table of the API index, with links relative to the page at URL ``here``."""
    order = {url: i for i, url in enumerate(NAV_ORDER)}
    rows = []
    for api in sorted(API, key=str.lower):
        pages = sorted((u for u, m in MENTIONED.items() if api in m["apis"] and u != here),
                       key=lambda u: order.get(u, len(order)))
        if not pages:
            continue
        # an API named only by reference pages (drills, glossary) is listed under the first of them
        teaching = [u for u in pages if u and not u.startswith(NOT_TEACHING)] or pages
        pages = teaching[:1] + [u for u in pages if u != teaching[0]]

        def link(target):
            rel = posixpath.relpath(target or ".", here or ".") + ("/" if target.endswith("/") else "")
            return f'<a href="{html_module.escape(rel)}">{html_module.escape(MENTIONED[target]["title"])}</a>'

        rows.append(f'<tr><td><a href="{url(api)}"><code>{api}</code></a></td><td>{link(pages[0])}</td>'
                    f'<td>{", ".join(link(u) for u in pages[1:]) or "-"}</td></tr>')
    head = "<thead><tr><th>API (its documentation)</th><th>Taught first in</th><th>Also in</th></tr></thead>"
    # a plain <table>: Material styles it and wraps it in its sideways-scrolling box, as a Markdown table
    return f'<table>{head}<tbody>{"".join(rows)}</tbody></table>'


def on_post_page(output, page, config):
    if INDEX_SLOT in output:
        output = output.replace(INDEX_SLOT, f'<div class="api-index">{api_index(page.url)}</div>')
    return output
