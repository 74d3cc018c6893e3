"""Where PyTorch's documentation for torch 2.13 documents each API the book names: the one
table behind the links to it (the API index, bookbuild/apis.py, and the first mention of an API
on a page, overrides/api_docs.py).

Read from PyTorch's documentation source, docs/source/*.md of pytorch/pytorch (torch.md,
tensors.md, autograd.md, nn.init.md, optim.md, amp.md, checkpoint.md, testing.md, random.md,
data.md, backends.md, deterministic.md, distributed.md, distributed.tensor.md,
distributed.fsdp.fully_shard.md, ddp_comm_hooks.md, multiprocessing.md, special.md, type_info.md,
size.md, torch.overrides.md, library.md: the versions of 2025-2026 that the stored index of public
repositories holds, the whole repository being too large to fetch at the 2.13 tag), and checked
against the documentation PyTorch built for 2.13 (from v2.13.0), the 2.13/ directory of
pytorch/docs (commits 97dd649d440d, 273e5d7893ec, c2b04468f228): the generated page of each
row below whose form has one, from every autosummary list used (the lists of nn, nn.functional,
func, linalg, nn.attention and torch.compiler known by these pages alone), is there; none of 23 names
documented inline or not at all has one (among them torch.autograd.Function, detect_anomaly and
set_detect_anomaly); and the anchors of type_info.html (``torch.torch.finfo``), checkpoint.html,
generated/torch.optim.SGD.html (``torch.optim.SGD.step``) and generated/torch.nn.Module.html (its
methods) were read in their HTML.

How Sphinx turns the source into a URL, and the form of each entry (``FORMS``):

    page     ``generated/NAME.html``: the name is in an ``autosummary`` list with
             ``:toctree: generated``; NAME is the ``currentmodule`` plus the name as listed, so
             it can differ from the public name (``torch.set_grad_enabled`` is listed as
             ``autograd.grad_mode.set_grad_enabled`` under ``torch``)
    member   ``generated/CLASS.html#CLASS.NAME``: a method of a class that has its own
             generated page, documented on that page
    inline   ``PAGE.html#NAME``: ``autoclass``, ``autofunction`` or ``attribute`` directly on a
             module's page (``autograd.html#torch.autograd.detect_anomaly``)
    owner    ``PAGE.html#ANCHOR``: no entry of its own; the entry (or section) of what
             documents it: its class (``tensors.html#torch.Tensor`` for ``x.grad_fn``), the
             class of its value (``tensor_attributes.html#torch.dtype`` for ``torch.float64``)
    module   ``PAGE.html``: nothing documents it; the page of its module

A name the book starts to use gets its row here, read from the same source; until then the
index links it to its module's page and says so (``link``).
"""

from __future__ import annotations

import re

from bookcheck import versions

VERSION = ".".join(versions.pinned().split(".")[:2])
BASE = f"https://docs.pytorch.org/docs/{VERSION}/"

FORMS = {
    "page": "its own page",
    "member": "an entry on its class's page",
    "inline": "an entry on its module's page",
    "owner": "no entry of its own: the entry of what documents it",
    "module": "no entry: its module's page",
}


def _generated(prefix: str, names: str, listed_under: str | None = None) -> dict:
    """``generated/{listed_under or prefix}.NAME.html`` for each name (its own page)."""
    return {f"{prefix}.{n}": ("page", f"generated/{listed_under or prefix}.{n}.html") for n in names.split()}


def _members(cls: str, names: str) -> dict:
    return {f"{cls}.{n}": ("member", f"generated/{cls}.html#{cls}.{n}") for n in names.split()}


def _inline(page: str, prefix: str, names: str, documented_as: str | None = None) -> dict:
    return {f"{prefix}.{n}": ("inline", f"{page}#{documented_as or prefix}.{n}") for n in names.split()}


def _owner(anchor: str, names: str) -> dict:
    return {n: ("owner", anchor) for n in names.split()}


DOCS: dict[str, tuple[str, str]] = {
    # torch.md: autosummary lists under currentmodule torch
    **_generated("torch", """
        abs add allclose arange are_deterministic_algorithms_enabled as_tensor broadcast_shapes cat chunk clamp
        cdist compile diagonal div fill view_as_real
        complex cos cosh count_nonzero diag dot empty empty_like enable_grad equal exp eye floor from_numpy full full_like
        Generator get_autocast_dtype get_num_threads get_rng_state histc hypot initial_seed
        is_deterministic_algorithms_warn_only_enabled is_grad_enabled is_inference_mode_enabled isfinite isinf
        isnan lgamma linspace
        log log1p logsumexp manual_seed maximum mv nextafter no_grad ones ones_like outer rand rand_like randint
        randn randperm set_default_dtype set_flush_denormal set_num_threads set_rng_state sigmoid sign sin sinh softmax sqrt stack tanh tensor
        triu_indices use_deterministic_algorithms vmap where zeros zeros_like"""),
    **_generated("torch", "set_grad_enabled inference_mode", listed_under="torch.autograd.grad_mode"),
    **_members("torch.Generator", "manual_seed"),
    "torch.relu": ("module", "torch.html"),  # in no list of torch.md
    "torch.inf": ("module", "torch.html"),  # a constant of torch.md's table, with no anchor of its own
    # tensors.md: `.. class:: Tensor()`, autoattribute T, mT, and one autosummary list
    "torch.Tensor": ("inline", "tensors.html#torch.Tensor"),
    **_inline("tensors.html", "torch.Tensor", "T mT"),
    **_generated("torch.Tensor", """
        abs add add_ addmv_ all amax any argmax backward count_nonzero bernoulli_ bfloat16 chunk clamp clamp_ clone coalesce conj contiguous copy_ cos cpu
        data_ptr detach dim div_ double element_size exp expand fill_ flatten flip float floor gather grad half
        device histc imag is_meta is_sparse to_dense isinf reciprocal equal isfinite square
        new_zeros index_add_ index_fill_ is_complex is_contiguous is_floating_point is_inference is_leaf isnan item log long
        masked_fill masked_fill_ max mean min mul_ nonzero norm numel numpy permute pow put_ ravel real register_hook
        register_post_accumulate_grad_hook repeat requires_grad requires_grad_ reshape resize_ retain_grad
        retains_grad scatter shape sin softmax sort split sqrt squeeze std storage_offset stride sub_ sum
        sum_to_size t tanh to tolist transpose tril_ triu unbind unfold uniform_ unique unsqueeze untyped_storage values var view
        zero_"""),
    **_owner("tensors.html#torch.Tensor", "torch.Tensor.grad_fn torch.Tensor.data torch.Tensor.dtype "
                                          "torch.Tensor.layout torch.Tensor.relu torch.Tensor.relu_"),
    # tensor_attributes.md (`.. class:: dtype`, `device`, `layout`, `memory_format`), type_info.md (`.. class:: torch.finfo`,
    # whose anchor is torch.torch.finfo), size.md (autoclass torch.Size)
    "torch.dtype": ("inline", "tensor_attributes.html#torch.dtype"),
    "torch.device": ("inline", "tensor_attributes.html#torch.device"),
    **_owner("tensor_attributes.html#torch.dtype", "torch.bfloat16 torch.bool torch.complex64 torch.complex128 torch.float16 "
                                                   "torch.float32 torch.float64 torch.int16 torch.int32 torch.int64 torch.long "
                                                   "torch.uint8 torch.dtype.is_floating_point"),
    **_owner("tensor_attributes.html#torch.layout", "torch.strided torch.sparse_coo"),
    "torch.jagged": ("module", "nested.html"),  # the layout of nested.md's examples, with no entry of its own
    # sparse.md names the compressed layouts in its prose, without an entry of their own
    **{f"torch.sparse_{n}": ("module", "sparse.html") for n in ("csr", "csc", "bsr", "bsc")},
    "torch.finfo": ("inline", "type_info.html#torch.torch.finfo"),
    "torch.iinfo": ("inline", "type_info.html#torch.torch.iinfo"),
    **_owner("type_info.html#torch.torch.finfo", "torch.finfo.eps torch.finfo.max torch.finfo.tiny"),
    **_owner("type_info.html#torch.torch.iinfo", "torch.iinfo.max"),
    "torch.Size": ("inline", "size.html#torch.Size"),
    # autograd.md
    **_generated("torch.autograd", "grad"),
    **_generated("torch.autograd.Function", "forward"),  # listed as Function.forward under torch.autograd
    **_generated("torch.autograd", "gradcheck gradgradcheck", listed_under="torch.autograd.gradcheck"),
    **_generated("torch.autograd.gradcheck", "GradcheckError"),  # in the same list as gradcheck
    **_generated("torch.autograd.forward_ad", "dual_level make_dual unpack_dual UnpackedDualTensor"),
    **_generated("torch.autograd.functional", "hessian hvp jacobian"),
    **_generated("torch.autograd.function.FunctionCtx", """
        mark_dirty mark_non_differentiable save_for_backward set_materialize_grads"""),
    **_generated("torch.autograd.function", "once_differentiable BackwardCFunction"),
    **_generated("torch.autograd.graph.Node", "name next_functions register_hook register_prehook"),
    **_inline("autograd.html", "torch.autograd", "Function detect_anomaly set_detect_anomaly"),
    "torch.autograd.function.FunctionCtx": ("inline", "autograd.html#torch.autograd.function.FunctionCtx"),
    **_inline("autograd.html", "torch.autograd.graph", "save_on_cpu saved_tensors_hooks"),
    **_owner("autograd.html#torch.autograd.Function", "torch.autograd.Function.apply"),
    **_owner("autograd.html#torch.autograd.function.FunctionCtx",
             "torch.autograd.function.FunctionCtx.save_for_forward"),
    **_owner("generated/torch.autograd.function.BackwardCFunction.html",
             "torch.autograd.function.BackwardCFunction.needs_input_grad "
             "torch.autograd.function.BackwardCFunction.saved_tensors"),
    **_owner("generated/torch.autograd.forward_ad.UnpackedDualTensor.html",
             "torch.autograd.forward_ad.UnpackedDualTensor.tangent"),
    # func.api.md
    **_generated("torch.func", "functional_call grad hessian jacfwd jacrev jvp vjp vmap"),
    # nn.md, nn.functional.md, nn.init.md (autofunction), nn.attention.md
    **_generated("torch.nn", """
        AlphaDropout BatchNorm1d Conv2d Dropout Dropout1d Dropout2d Dropout3d Embedding EmbeddingBag
        FeatureAlphaDropout LayerNorm LSTM
        Linear MSELoss Module ModuleDict ModuleList ParameterDict ReLU Sequential Sigmoid Softmax
        Tanh TransformerEncoderLayer"""),
    "torch.nn.Parameter": ("page", "generated/torch.nn.parameter.Parameter.html"),
    **{f"torch.nn.parameter.Uninitialized{n}": ("page", f"generated/torch.nn.parameter.Uninitialized{n}.html")
       for n in ("Parameter", "Buffer")},
    **_members("torch.nn.Module", """
        bfloat16 compile double eval get_submodule half load_state_dict modules named_children named_modules
        named_parameters parameters register_buffer register_forward_hook register_forward_pre_hook
        register_full_backward_hook register_full_backward_pre_hook requires_grad_ state_dict to to_empty train
        zero_grad"""),
    **_generated("torch.nn.utils", "clip_grad_norm_ clip_grad_value_ get_total_norm vector_to_parameters weight_norm"),
    **_generated("torch.nn.utils.parametrizations", "weight_norm"),
    **_generated("torch.nn.parallel", "DistributedDataParallel"),
    **_members("torch.nn.parallel.DistributedDataParallel", "no_sync register_comm_hook"),
    **_generated("torch.nn.functional", """
        batch_norm binary_cross_entropy binary_cross_entropy_with_logits conv1d cross_entropy dropout embedding
        hardshrink
        gaussian_nll_loss group_norm hinge_embedding_loss huber_loss l1_loss layer_norm linear margin_ranking_loss
        max_pool1d mse_loss one_hot poisson_nll_loss prelu
        relu relu_ scaled_dot_product_attention smooth_l1_loss soft_margin_loss softplus"""),
    **_inline("nn.init.html", "torch.nn.init", "kaiming_normal_ normal_ orthogonal_ zeros_"),
    **_generated("torch.nn.attention", "sdpa_kernel SDPBackend"),
    **_owner("generated/torch.nn.attention.SDPBackend.html", """
        torch.nn.attention.SDPBackend.CUDNN_ATTENTION torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION
        torch.nn.attention.SDPBackend.FLASH_ATTENTION torch.nn.attention.SDPBackend.MATH"""),
    # optim.md: autoclass Optimizer, its methods and the algorithms in autosummary lists
    "torch.optim.Optimizer": ("inline", "optim.html#torch.optim.Optimizer"),
    **_generated("torch.optim.Optimizer", "step zero_grad"),
    **_generated("torch.optim", "Adagrad Adam AdamW SGD"),
    **_members("torch.optim.SGD", "step"),
    **_members("torch.optim.Adam", "step"),
    # amp.md: autoclass torch.autocast; torch.amp.GradScaler has no entry (only the deprecated
    # torch.cuda.amp.GradScaler and torch.cpu.amp.GradScaler are autoclass'd): its section
    "torch.autocast": ("inline", "amp.html#torch.autocast"),
    **_owner("amp.html#gradient-scaling", """
        torch.amp.GradScaler torch.amp.GradScaler.get_backoff_factor torch.amp.GradScaler.get_growth_factor
        torch.amp.GradScaler.get_growth_interval torch.amp.GradScaler.get_scale torch.amp.GradScaler.is_enabled
        torch.amp.GradScaler.scale torch.amp.GradScaler.step torch.amp.GradScaler.unscale_
        torch.amp.GradScaler.update"""),
    # one module page each: autofunction / autoclass / attribute
    # checkpoint.md (its 2.13 page read: set_checkpoint_early_stop is there too)
    **_inline("checkpoint.html", "torch.utils.checkpoint", """
        checkpoint checkpoint_sequential create_selective_checkpoint_contexts set_checkpoint_early_stop"""),
    **_owner("checkpoint.html#torch.utils.checkpoint.CheckpointPolicy", """
        torch.utils.checkpoint.CheckpointPolicy.MUST_SAVE torch.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE"""),
    **_generated("torch.compiler", "disable reset set_stance"),
    "torch.ops.aten.rand_like.default": ("module", "torch.html"),  # an operator's overload: no entry
    "torch.ops.aten.mm.default": ("module", "torch.html"),
    **_inline("testing.html", "torch.testing", "assert_close"),
    **_inline("random.html", "torch.random", "fork_rng"),
    **_inline("data.html", "torch.utils.data", "DataLoader Dataset RandomSampler"),
    **_inline("deterministic.html", "torch.utils.deterministic", "fill_uninitialized_memory"),
    **_inline("backends.html", "torch.backends.cudnn", "benchmark deterministic is_available"),
    **_inline("special.html", "torch.special", "gammainc"),
    **_generated("torch.linalg", "eigvalsh matrix_norm norm vector_norm"),
    **_inline("distributed.html", "torch.distributed", "all_reduce get_world_size ReduceOp"),
    **_owner("distributed.html#torch.distributed.ReduceOp", "torch.distributed.ReduceOp.SUM"),
    # autofunction torch.distributed.device_mesh.init_device_mesh
    **_inline("distributed.html", "torch.distributed.device_mesh", "init_device_mesh"),
    # distributed.tensor.md, distributed.fsdp.fully_shard.md
    **_inline("distributed.tensor.html", "torch.distributed.tensor", "DTensor DTensor.to_local distribute_tensor"),
    **_inline("distributed.fsdp.fully_shard.html", "torch.distributed.fsdp", "fully_shard MixedPrecisionPolicy"),
    **_inline("ddp_comm_hooks.html", "torch.distributed.algorithms.ddp_comm_hooks.default_hooks", "allreduce_hook"),
    **_inline("library.html", "torch.library", "custom_op opcheck"),  # library.md: autofunction
    "torch.overrides.TorchFunctionMode": ("module", "torch.overrides.html"),  # torch.overrides.md lists functions only
}

# What a link may look like in each form (``link`` builds them; the tests check every row).
FORM_PATTERN = {
    "page": re.compile(r"generated/(?P<doc>[\w.]+)\.html"),
    "member": re.compile(r"generated/(?P<doc>[\w.]+)\.html#(?P=doc)\.(?P<name>\w+)"),
    "inline": re.compile(r"(?P<page>[\w./]+)\.html#(?P<anchor>[\w.]+)"),
    "owner": re.compile(r"(?P<page>[\w./]+)\.html(?:#(?P<anchor>[\w.-]+))?"),
    "module": re.compile(r"(?P<page>[\w./]+)\.html"),
}


def module_page(api: str) -> str:
    """The page of the module that holds ``api`` (``torch.nn.functional.x`` -> nn.functional.html;
    a name directly under ``torch`` -> torch.html)."""
    parts = api.split(".")
    mod = [p for p in parts[1:-1] if p[:1].islower()]  # package names, not classes
    return (".".join(mod) if mod else "torch") + ".html"


def link(api: str) -> tuple[str, str]:
    """(form, URL) of ``api``'s documentation; a name without a row links its module's page."""
    if not isinstance(api, str) or not api.startswith("torch"):
        raise ValueError(f"not a torch API name: {api!r}; pass a full name such as 'torch.autograd.grad'")
    form, target = DOCS.get(api, ("module", module_page(api)))
    return form, BASE + target
