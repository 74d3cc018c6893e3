"""Measure what autograd keeps for backward, with ``torch.autograd.graph.saved_tensors_hooks``.

While a ``track_saved()`` block is open, every tensor that an operation saves for its
backward passes through a pack hook. The hook returns a detached alias of it (the graph keeps
the same storage it would keep anyway) and records a weak reference to it. Afterwards,
``alive_bytes()`` adds up the bytes of the saved tensors that the graph still holds: measured
before ``backward()``, that is the activation memory of the graph; measured later, it is what
something else (a logged loss, a list of outputs) keeps of the graph alive. A saved tensor
that the caller also holds by name (the input ``x``) stops counting when no node holds it,
though its memory stays.

Invariants: bytes are counted per storage, so a tensor saved by two operations (a ReLU output
saved by the ReLU and by the next Linear) counts once, and a saved view counts its whole
storage. Tensors listed in ``exclude`` (usually the parameters, which live anyway) and any
other tensor sharing their storage are not counted. Measuring changes neither values nor
gradients, and an in-place change of a saved tensor still raises at backward.
"""

import weakref
from contextlib import contextmanager

import torch


class SavedTensors:
    """The record a ``track_saved()`` block fills: one entry per pack-hook call."""

    def __init__(self, exclude_ptrs):
        self._refs = []  # weak references to the saved tensors, in the order saved
        self._exclude = exclude_ptrs

    @property
    def calls(self):
        """How many times an operation saved a tensor (repeats included)."""
        return len(self._refs)

    def alive_bytes(self):
        """Bytes of the distinct storages of saved tensors that are still alive (not excluded)."""
        storages = {}
        for ref in self._refs:
            t = ref()
            if t is None:
                continue
            if t.is_meta:
                raise ValueError("a saved tensor is on the meta device, which allocates no memory to count: "
                                 "measure on the cpu with a small batch")
            if t.layout != torch.strided:
                raise ValueError(
                    f"a saved tensor has layout {t.layout}, which has no single storage to count: "
                    "measure a model that saves dense tensors (call .to_dense() on a sparse input)"
                )
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            if ptr not in self._exclude:
                storages[ptr] = storage.nbytes()
        return sum(storages.values())

    def _pack(self, tensor):
        # Keep a detached alias (same storage, same version counter, no grad_fn): returning
        # ``tensor`` itself would make a saved output refer to its own grad_fn, a cycle that
        # is never freed. The weak reference dies exactly when the graph lets go of it.
        saved = tensor.detach()
        self._refs.append(weakref.ref(saved))
        return saved, saved._version


def _unpack(packed):
    # With hooks installed, autograd skips its own version-counter check; redo it here, so
    # measuring does not hide an in-place change of a saved tensor.
    saved, version = packed
    if saved._version != version:
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: a tensor of shape {tuple(saved.shape)} saved at version "
            f"{version} is now at version {saved._version}; make the change out of place"
        )
    return saved


# --8<-- [start:track_saved]
@contextmanager
def track_saved(exclude=()):
    """Record every tensor saved for backward inside the block; yield a ``SavedTensors``.

    ``exclude``: tensors (e.g. ``model.parameters()``) whose storage is not counted; None for none.
    An iterator that yields nothing is refused: one already read would exclude nothing.
    Use ``record.alive_bytes()`` after the block, while the graph is still alive.
    """
    if isinstance(exclude, (torch.nn.Module, torch.Tensor)) or not (
            exclude is None or hasattr(exclude, "__iter__")):
        raise TypeError(f"exclude takes an iterable of tensors, got {type(exclude).__name__}: "
                        "pass model.parameters()")
    once = exclude is not None and iter(exclude) is exclude  # an iterator: read once
    exclude = [] if exclude is None else list(exclude)
    if once and not exclude:
        raise ValueError("exclude yielded no tensor: a generator such as "
                         "model.parameters() is empty once read (by an optimizer, say), "
                         "and the weights would be counted; pass a list, "
                         "list(model.parameters()), which may be empty")
    for t in exclude:
        if not isinstance(t, torch.Tensor):
            raise TypeError(
                f"exclude must hold tensors, e.g. model.parameters(); got {type(t).__name__}"
            )
    record = SavedTensors({t.untyped_storage().data_ptr() for t in exclude})
    with torch.autograd.graph.saved_tensors_hooks(record._pack, _unpack):
        yield record
# --8<-- [end:track_saved]


def saved_bytes(fn, *args, exclude=()):
    """Run ``fn(*args)``; return ``(output, bytes saved for backward that are alive now)``.

    ``fn`` must return a tensor that requires grad (its graph is what is measured); the
    output is returned so the caller decides when the graph dies.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, e.g. a module or a function; got {type(fn).__name__}")
    with track_saved(exclude) as record:
        out = fn(*args)
    if not isinstance(out, torch.Tensor):
        raise TypeError(
            f"fn returned a {type(out).__name__}, not a tensor: measure one output, "
            "e.g. lambda x: model(x)[0]"
        )
    if not out.requires_grad:
        raise ValueError(
            "fn returned no tensor that requires grad, so no graph was built: give it an input "
            "or parameters with requires_grad=True, outside torch.no_grad()"
        )
    return out, record.alive_bytes()
