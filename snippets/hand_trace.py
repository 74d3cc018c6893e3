"""Compare a hand trace with torch: the gradient of a scalar loss with respect to named tensors."""

import torch


def gradients(loss, **tensors):
    """Return ``{name: d loss / d tensor}`` for every tensor passed by name.

    ``loss`` must be a scalar (one element) with a graph behind it. The tensors may be
    leaves or intermediate results; every one must require grad and lie in loss's graph.
    Uses ``torch.autograd.grad``, so no leaf's ``.grad`` is written (a tensor that called
    ``retain_grad()`` gets each walk through it added to its ``.grad``), and keeps the graph
    (``retain_graph=True``), so the same graph can be asked again.
    """
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        shape = tuple(loss.shape) if isinstance(loss, torch.Tensor) else type(loss).__name__
        raise ValueError(f"loss must be a scalar tensor, got {shape}: reduce it first, e.g. loss.sum()")
    if not loss.requires_grad:
        raise ValueError("loss does not require grad: no input required grad, or grad mode was off")
    if not tensors:
        raise ValueError("name at least one tensor, e.g. gradients(L, w=w)")
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a tensor of loss's graph, got {type(t).__name__}")
        if not (t.is_floating_point() or t.is_complex()):
            raise TypeError(f"{name} is {t.dtype}: only floating-point or complex tensors can require "
                            f"grad; build the loss from {name}.float()")
        if not t.requires_grad:
            raise ValueError(f"{name} does not require grad: create it with requires_grad=True")
    grads = torch.autograd.grad(loss, list(tensors.values()), retain_graph=True, allow_unused=True)
    missing = [name for name, g in zip(tensors, grads) if g is None]
    if missing:
        raise ValueError(f"no gradient from loss reaches {', '.join(missing)}: not in loss's graph, "
                         "or a backward on the way returned None")
    return dict(zip(tensors, grads))
