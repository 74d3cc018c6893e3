"""MkDocs hook: the first mention of a PyTorch API on a page links to its official documentation.

A mention is an inline code span outside code blocks, headings, links and
the titles of collapsed notes, that names an API of
``API``: by its full name (``torch.autograd.grad``, ``torch.no_grad()``), or as a method or
attribute on a receiver (``loss.backward()``, ``x.grad``, ``.detach()``, ``ctx.save_for_backward``),
or by a bare name that means one thing in this book (``gradcheck``, ``no_grad``). Arguments are
ignored (``requires_grad_(False)``). A span the author already linked to the PyTorch docs counts
as the first mention. The links are plain ``<a href>``: nothing is fetched. They point at the
documentation of the torch version the book is verified on (not ``stable``, which moves).
A page whose own objects have methods of the same names (Part III's engines: ``backward()``,
``.grad``, ``no_grad()``) says so in its front matter, ``torch_links: full names``: there only a
span that names torch itself (``torch.no_grad()``, ``nn.Parameter``) is linked.

``API`` is the book's one table of where PyTorch documents each API, bookbuild/torch_docs.py
(read from PyTorch's documentation source for that version); the API index,
docs/reference/apis.md, is built from the book's code with the same table (bookbuild/apis.py,
written by overrides/hooks.py where the page holds ``<!-- api-index -->``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent.parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bookcheck of this checkout
from bookbuild import torch_docs  # noqa: E402

BASE = torch_docs.BASE

# Full name -> page under BASE (every row of the table).
API = {name: target for name, (form, target) in torch_docs.DOCS.items()}

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


FULL_NAMES = "full names"  # the one value of a page's ``torch_links``


def resolve(text: str, full_names_only: bool = False) -> str | None:
    """The API of ``API`` a code span names, or None; ``full_names_only``: only by a name that
    starts from torch (no receiver, no bare name)."""
    m = SPAN.match(text.strip())
    if not m:
        return None
    dot, receiver, name = m.groups()
    full = receiver + name
    if full in API:
        return full
    if full in ALIASES:
        return ALIASES[full]
    if full_names_only:
        return None
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


def link_first_mentions(html: str, full_names_only: bool = False) -> str:
    seen = set()
    for m in LINKED_CODE.finditer(html):
        api = resolve(m.group(1))
        if api:
            seen.add(api)

    def replace(m):
        if m.group("skip"):
            return m.group(0)
        code = m.group("code")
        api = resolve(code, full_names_only)
        if api is None or api in seen:
            return m.group(0)
        seen.add(api)
        return f'<a class="api-doc" href="{url(api)}" title="PyTorch documentation: {api}"><code>{code}</code></a>'

    return TOKEN.sub(replace, html)


def on_page_content(html, page, config, files):
    links = page.meta.get("torch_links")
    if links not in (None, FULL_NAMES):
        raise ValueError(f"{page.file.src_uri}: torch_links in the front matter must be {FULL_NAMES!r} "
                         f"(link only spans that name torch); got {links!r}: remove it to link every mention")
    return link_first_mentions(html, full_names_only=links == FULL_NAMES)
