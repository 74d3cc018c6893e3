"""What ``torch.compile`` hands its backend, recorded; and compiled gradients against eager ones.

``CompileLog`` is a backend: ``torch.compile(fn, backend=CompileLog())``. It records every graph
it is given and runs it as it is, without generating code, so a block shows what was compiled
and when:

* ``CompileLog()`` sees the graphs Dynamo captures, one per compilation: a recompilation (a
  guard that failed) or a graph break adds one. Their ops are torch-level (``linear``, ``tanh``,
  ``mul``).
* ``CompileLog(aot=True)`` sees what AOTAutograd makes of each Dynamo graph, as the
  ``aot_eager`` backend does (the same partitioner): a ``"forward"`` graph at the call, then a
  ``"backward"`` graph at the first ``backward()`` through it, or one ``"inference"`` graph
  for a call that needs no gradient. Their ops are ATen ops (``addmm``, ``tanh_backward``);
  a backward graph also lists the tensors its forward saved for it (``Graph.saved``).

A new ``CompileLog`` is a new backend: ``torch.compile`` compiles again for it instead of
reusing a graph compiled for another backend, so each log sees its own compilations (up to
the recompile limit, 8 per function: call ``torch.compiler.reset()`` between more logs).

``eager_vs_compiled(model, x)`` runs one backward of ``model(x).pow(2).mean()`` eagerly and
through ``torch.compile(model)`` and compares every parameter's gradient.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Graph:
    """One graph a backend was given: ``kind`` ("dynamo", "forward", "backward" or
    "inference"), its ``ops`` in order, and for a backward graph what its forward ``saved`` for
    it, as ``(name, shape)`` pairs (``primals_i`` is the forward graph's i-th input)."""

    kind: str
    ops: tuple[str, ...]
    saved: tuple[tuple[str, tuple[int, ...]], ...] = ()


def op_name(target) -> str:
    """The short name of a graph node's target: ``addmm`` for ``aten.addmm.default``,
    ``autograd_book.scaled_softplus`` for a custom op, ``mul`` for ``operator.mul``,
    ``sum`` for the method ``Tensor.sum``, ``TanhBackward0`` for compiled autograd's node."""
    if isinstance(target, str):  # a method call: x.sum()
        return target
    packet = getattr(target, "overloadpacket", None)  # an operator overload: aten.addmm.default
    if packet is not None:
        name = packet.__name__
        return name if target.namespace == "aten" else f"{target.namespace}.{name}"
    for attr in ("__name__", "name"):
        value = getattr(target, attr, None)
        if isinstance(value, str):
            return value
        if callable(value):  # a higher-order operator's name()
            return str(value())
    return str(target)


def _graph(kind: str, gm: torch.fx.GraphModule) -> Graph:
    ops = tuple(op_name(n.target) for n in gm.graph.nodes
                if n.op in ("call_function", "call_method") and op_name(n.target) != "getitem")
    saved = ()
    if kind == "backward":
        saved = tuple((n.name, tuple(n.meta["val"].shape)) for n in gm.graph.nodes
                      if n.op == "placeholder" and not n.name.startswith("tangents")
                      and isinstance(n.meta.get("val"), torch.Tensor))
    return Graph(kind, ops, saved)


# --8<-- [start:log]
class CompileLog:
    """A ``torch.compile`` backend that records each graph it is given and runs it unchanged.

    ``len(log)`` is the number of graphs compiled so far, ``log.kinds`` their kinds in order,
    ``log.graphs[i].ops`` the operations of the i-th. ``aot=True``: the graphs AOTAutograd makes
    (as ``backend="aot_eager"``), else the graphs Dynamo captures (see the module's doc).
    """

    def __init__(self, aot: bool = False):
        if not isinstance(aot, bool):
            raise TypeError(f"aot must be True (AOTAutograd's forward and backward graphs) or False "
                            f"(Dynamo's graphs); got {aot!r}")
        self.graphs: list[Graph] = []
        self.aot = aot

    def _record(self, kind):
        from functorch.compile import make_boxed_func

        def compiler(gm, example_inputs):
            self.graphs.append(_graph(kind, gm))          # called when AOTAutograd compiles it
            return make_boxed_func(gm.forward)             # run the graph as it is
        return compiler

    def __call__(self, gm, example_inputs):
        if not self.aot:
            self.graphs.append(_graph("dynamo", gm))
            return gm.forward
        from functorch.compile import aot_module_simplified, min_cut_rematerialization_partition

        compiled = aot_module_simplified(
            gm, example_inputs, fw_compiler=self._record("forward"),
            bw_compiler=torch.compiler.disable(self._record("backward")),  # Dynamo leaves it alone
            inference_compiler=self._record("inference"),
            partition_fn=min_cut_rematerialization_partition,            # as aot_eager
            keep_inference_input_mutations=True)
        return torch.compiler.disable(compiled)            # Dynamo does not trace the result

    def __len__(self) -> int:
        return len(self.graphs)

    @property
    def kinds(self) -> list[str]:
        return [g.kind for g in self.graphs]
# --8<-- [end:log]


# --8<-- [start:compare]
from snippets.guards import require_module


def eager_vs_compiled(model: torch.nn.Module, x: torch.Tensor, backend="aot_eager", options=None) -> dict:
    """One backward of ``model(x).pow(2).mean()`` eagerly, then through ``torch.compile(model,
    backend=backend, options=options)``, on the same parameters. Returns a dict:

    * ``node``: the class name of the compiled output's ``grad_fn``;
    * ``max_abs_diff``: the largest |compiled - eager| over every parameter's gradient;
    * ``max_abs_grad``: the largest |eager gradient|, the scale that difference is measured against.

    ``x`` is one batch as ``model`` takes it, e.g. (N, in_features). ``model``'s ``.grad`` are
    set to None before and after. Each call compiles afresh (``isolate_recompiles=True``).
    Under aot_eager both runs draw the same random numbers
    (dropout); under inductor only with ``options={"fallback_random": True}``. A batch norm in
    training mode updates its running statistics in each run.
    """
    require_module(model)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("model has no parameter that requires grad: there is no gradient to compare")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a tensor (one batch for model); got {type(x).__name__}")
    if not x.is_floating_point() or x.dim() == 0 or x.numel() == 0:
        raise ValueError(f"x must be a non-empty floating-point batch, e.g. (N, in_features); got "
                         f"dtype {x.dtype}, shape {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError("x holds NaN or inf: every gradient would be NaN and the comparison would "
                         "mean nothing; pass a finite batch")
    if not (isinstance(backend, str) or callable(backend)):
        raise TypeError(f"backend must be a backend's name (\"aot_eager\", \"inductor\") or a backend "
                        f"function; got {type(backend).__name__}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options must be None or a dict of backend options; got {type(options).__name__}")

    model.zero_grad(set_to_none=True)
    rng = torch.get_rng_state()
    model(x).pow(2).mean().backward()
    unused = [name for name, p in model.named_parameters() if p.requires_grad and p.grad is None]
    if unused:
        model.zero_grad(set_to_none=True)
        raise ValueError(f"parameters {unused} get no gradient from model(x): freeze them with "
                         "requires_grad_(False), or pass a model whose forward uses them")
    eager = [p.grad.clone() for p in params]
    model.zero_grad(set_to_none=True)
    torch.set_rng_state(rng)                      # the same dropout masks
    # isolated from the count of recompilations every built-in module shares (8); a process
    # still runs eagerly after 256 compilations in all, which the check below names
    out = torch.compile(model, backend=backend, options=options, isolate_recompiles=True)(x)
    node = type(out.grad_fn).__name__
    if backend in ("aot_eager", "inductor") and node != "CompiledFunctionBackward":
        model.zero_grad(set_to_none=True)
        raise RuntimeError(f"torch ran the model eagerly (its output's node is {node}), so there "
                           "is no compiled gradient to compare: a recompile limit was hit (see "
                           "torch's warning); call torch.compiler.reset() first")
    out.pow(2).mean().backward()
    diff = max((p.grad - e).abs().max().item() for p, e in zip(params, eager))
    scale = max(e.abs().max().item() for e in eager)
    model.zero_grad(set_to_none=True)
    if not (math.isfinite(diff) and math.isfinite(scale)):
        raise FloatingPointError(f"a gradient is not finite (difference {diff}, scale {scale}): "
                                 "the model overflows on this batch; pass a smaller one")
    return {"node": node, "max_abs_diff": diff, "max_abs_grad": scale}
# --8<-- [end:compare]
