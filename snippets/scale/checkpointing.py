"""Activation checkpointing, measured: the bytes kept for backward and the layers that run again.

``checkpoint_costs(model, x, mode)`` runs ``model(x).pow(2).mean()`` forward and backward, with
each child of the ``nn.Sequential`` ``model`` (a block, shape ``(N, D) -> (N, D')``) called through
``torch.utils.checkpoint.checkpoint`` as ``mode`` says:

    "none"                          plain calls, nothing checkpointed
    "non-reentrant"                 checkpoint(block, h, use_reentrant=False)
    "non-reentrant, no early stop"  the same, with early_stop=False
    "reentrant"                     checkpoint(block, h, use_reentrant=True)

and returns a dict:

    saved     bytes of the tensors saved for backward, alive right before ``backward()``
              (``snippets.saved_bytes.track_saved``: per storage, the parameters excluded)
    started   {layer: forward calls that started during backward}   (forward pre-hooks)
    finished  {layer: forward calls that returned during backward}  (forward hooks)

A layer is a module of ``model`` without children, named as ``model.named_modules()`` names it
(``"0.0"``, ``"0.1"``, ...); a layer that did not run during backward is absent. Calls during
backward are the recomputation: a layer that started and did not return is where a
non-reentrant recomputation stopped.

Invariants: the gradients are those of the plain model (checkpointing changes memory and compute,
not values), added into ``.grad`` as any backward adds them (zero them between two calls); the
hooks are removed when the function returns, also when it raises. The reentrant variant builds a
graph only through inputs that require grad, so with it ``x`` must require grad.
"""

from __future__ import annotations

from collections import Counter

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from snippets.saved_bytes import track_saved

MODES = ("none", "non-reentrant", "non-reentrant, no early stop", "reentrant")


def _call(block, h, mode):
    if mode == "none":
        return block(h)
    if mode == "reentrant":
        return checkpoint(block, h, use_reentrant=True)
    return checkpoint(block, h, use_reentrant=False, early_stop=(mode == "non-reentrant"))


# --8<-- [start:checkpoint_costs]
def checkpoint_costs(model, x, mode):
    """Forward and backward of ``model(x).pow(2).mean()`` with each block checkpointed as ``mode``
    says; returns ``{"saved": bytes, "started": {layer: n}, "finished": {layer: n}}``."""
    _check(model, x, mode)
    layers = {name: m for name, m in model.named_modules() if name and not list(m.children())}
    started, finished, in_backward = Counter(), Counter(), [False]
    handles = []
    for name, layer in layers.items():
        handles.append(layer.register_forward_pre_hook(
            lambda m, args, name=name: started.update([name]) if in_backward[0] else None))
        handles.append(layer.register_forward_hook(
            lambda m, args, out, name=name: finished.update([name]) if in_backward[0] else None))
    try:
        with track_saved(exclude=list(model.parameters())) as record:
            h = x
            for block in model:
                h = _call(block, h, mode)
            loss = h.pow(2).mean()
        saved = record.alive_bytes()             # measured while the graph is alive
        in_backward[0] = True
        loss.backward()                          # recomputation happens in here
    finally:
        for handle in handles:
            handle.remove()
    return {"saved": saved, "started": dict(started), "finished": dict(finished)}
# --8<-- [end:checkpoint_costs]


def _check(model, x, mode):
    if not isinstance(model, nn.Sequential):
        raise TypeError(f"model must be an nn.Sequential of blocks (each block is checkpointed as one segment); "
                        f"got {type(model).__name__}: wrap your blocks, nn.Sequential(block1, block2)")
    if len(model) == 0:
        raise ValueError("model is an empty nn.Sequential: give it at least one block")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a tensor, the input batch (N, D); got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"x must be a floating-point tensor; got {x.dtype}: pass x.float()")
    if x.dim() < 1:
        raise ValueError("x must hold a batch (N, D); got a 0-d tensor: pass x.reshape(1, -1)")
    if x.numel() == 0:
        raise ValueError(f"x must hold a batch (N, D) with no empty dimension; got shape {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError("x holds inf or NaN: the measurement would run on non-finite values; pass finite data")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(repr(m) for m in MODES)}; got {mode!r}")
    if mode == "reentrant" and not x.requires_grad:
        raise ValueError("the reentrant variant builds no graph through a segment whose inputs do not require "
                         "grad, and every block here is a segment, so no block would get a gradient: pass "
                         "x.requires_grad_(), or use mode='non-reentrant'")
    if not torch.is_grad_enabled():
        raise RuntimeError("grad mode is off (torch.no_grad() or inference_mode()), so no graph would be "
                           "recorded: call checkpoint_costs outside those blocks")
    if not any(p.requires_grad for p in model.parameters()) and not x.requires_grad:
        raise ValueError("nothing requires grad (no parameter, not x): there is no backward to measure")
