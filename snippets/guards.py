"""Cheap checks that turn silent training bugs into loud errors.

Each guard raises ``GuardError`` (an ``AssertionError``, so pytest reports it as a failed
check) with a message naming the tensor or parameter at fault and the usual fix. Bad
arguments (not a tensor, not a module) raise ``TypeError``.

Where to call them in a training step::

    assert_no_stale_grads(model)      # before loss.backward(): zero_grad() was called
    loss.backward()
    assert_grads_flow(model)          # first step of a new model: every parameter is reached
    assert_finite_grads(model)        # no NaN or inf came out of backward
    before = snapshot(model)
    optimizer.step()
    assert_params_changed(model, before)
    running += as_log_value(loss)     # a float: the graph is not kept alive
"""

import dataclasses
import datetime
import enum
import numbers
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import SimpleNamespace

import torch


class GuardError(AssertionError):
    """A guard found a bug; the message says which tensor and what to do."""


def require_module(model, name="model", loose_tensors=False):
    """Raise TypeError unless ``model`` is a torch.nn.Module; ``name`` is the argument's name in
    the message. ``loose_tensors``: the caller only reads the parameters (it never calls the
    model), so the message may offer an nn.ParameterList for tensors that have no module. Most
    of the reference code's functions that take a model check it with this."""
    if not isinstance(model, torch.nn.Module):
        loose = " (loose tensors: an nn.ParameterList of them)" if loose_tensors else ""
        raise TypeError(
            f"{name} must be a torch.nn.Module, got {type(model).__name__}: pass the model itself, "
            f"not model.parameters() or a list of tensors{loose}"
        )


def _trainable(module):
    require_module(module, "module")
    named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    if not named:
        raise GuardError("the module has no parameter with requires_grad=True: nothing would be trained")
    return named


# The batch norm layers (torch has no public base class for them).
BATCH_NORMS = (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d, torch.nn.SyncBatchNorm,
               torch.nn.LazyBatchNorm1d, torch.nn.LazyBatchNorm2d, torch.nn.LazyBatchNorm3d)


def batch_statistics_layer(model):
    """``(name, layer)`` of the first batch norm of ``model`` that normalises with the mean and
    variance of its batch (in training mode, or without running statistics), so that each row's
    output depends on the other rows; None if there is none. Other layers that mix the rows of a
    batch are not detected."""
    require_module(model)
    for name, layer in model.named_modules():
        if isinstance(layer, BATCH_NORMS) and (layer.training or layer.running_mean is None):
            return name, layer
    return None


# Values that cannot hold a tensor: passed without a look inside.
_HOLDS_NO_TENSOR = (type(None), type(Ellipsis), numbers.Number, type, enum.Enum, os.PathLike,
                    datetime.date, datetime.time, datetime.timedelta, torch.dtype, torch.device,
                    torch.layout, torch.memory_format, torch.finfo, torch.iinfo)


# --8<-- [start:no_graph]
def assert_no_graph(value, what="value"):
    """Fail if ``value`` keeps an autograd graph alive: a tensor with a ``grad_fn``, or a
    container that holds one at any depth. Every container is walked: a list, tuple, set,
    deque, dict (keys and values), a dict view, any other Mapping or Collection, and the
    attributes of a dataclass or a SimpleNamespace. An iterator (a generator, map, zip) is
    refused: checking would consume it, and so is any other object, whose insides the walk
    cannot see. A leaf (a parameter) has no graph behind it: it passes, unless its ``.grad``
    has one (a backward with ``create_graph=True``); numbers, strings, None and NumPy arrays
    of numbers pass.

    Use on anything stored beyond one step: logged losses, collected predictions.
    """
    _no_graph(value, what, set())


def _no_graph(value, what, seen):
    if isinstance(value, torch.Tensor):
        if value.grad_fn is not None:
            raise GuardError(
                f"{what} requires grad (grad_fn={type(value.grad_fn).__name__}), so keeping it keeps "
                "its whole graph alive: store value.item() or value.detach(), or compute it under "
                "torch.no_grad()"
            )
        if value._base is not None and value._base.grad_fn is not None:
            raise GuardError(
                f"{what} is a view of a tensor with a graph (grad_fn={type(value._base.grad_fn).__name__}), "
                "and the view keeps that graph alive: store value.item() or value.detach()"
            )
        if value.is_leaf and value.grad is not None and value.grad.grad_fn is not None:
            raise GuardError(
                f"{what}.grad has a graph (grad_fn={type(value.grad.grad_fn).__name__}), left by a backward "
                f"with create_graph=True, and keeps it alive: set {what}.grad = None when it is used"
            )
        return
    if isinstance(value, (str, bytes, bytearray, memoryview, range)) or id(value) in seen:
        return  # no tensor inside, or a container already being walked (it holds itself)
    if getattr(getattr(value, "dtype", None), "kind", "O") != "O":
        return  # a NumPy array or scalar of numbers
    if isinstance(value, Iterator):
        raise TypeError(f"{what} is an iterator: pass list({what}), since checking would consume it")
    if isinstance(value, Mapping):
        seen.add(id(value))
        for i, (key, item) in enumerate(value.items()):
            _no_graph(key, f"list({what})[{i}]", seen)  # the key
            _no_graph(item, f"{what}[{key!r}]", seen)
    elif isinstance(value, Iterable):  # a set or a dict view is named by its position in list(...)
        seen.add(id(value))
        for i, item in enumerate(value):
            _no_graph(item, f"{what}[{i}]" if isinstance(value, Sequence) else f"list({what})[{i}]", seen)
    elif isinstance(value, SimpleNamespace):
        seen.add(id(value))
        for name, item in vars(value).items():
            _no_graph(item, f"{what}.{name}", seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        seen.add(id(value))                      # its fields, with or without __slots__
        for field in dataclasses.fields(value):
            _no_graph(getattr(value, field.name, None), f"{what}.{field.name}", seen)
    elif not isinstance(value, _HOLDS_NO_TENSOR):
        hint = f"vars({what})" if hasattr(value, "__dict__") else "a list of them"
        raise TypeError(f"{what} is of type {type(value).__name__}, whose insides assert_no_graph cannot "
                        f"see: pass the values it holds, e.g. {hint}")


def as_log_value(loss):
    """The number to log for a scalar loss: a Python number (``item()``), with no graph behind it."""
    if hasattr(loss, "__float__") and getattr(loss, "shape", ()) == () and not isinstance(
            loss, (bool, torch.Tensor)):   # a Python or NumPy number, not an array
        raise TypeError(f"loss is already a number ({type(loss).__name__}): log it as it is, or float(loss)")
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        shape = tuple(loss.shape) if isinstance(loss, torch.Tensor) else type(loss).__name__
        raise TypeError(f"expected a one-element tensor, got {shape}: reduce it first, e.g. loss.mean()")
    return loss.item()
# --8<-- [end:no_graph]


# --8<-- [start:finite]
def assert_finite(tensor, what="tensor"):
    """Fail if ``tensor`` holds a NaN or an infinity; say how many and of which kind."""
    if tensor is None:
        raise TypeError(f"{what} is None: if it is a .grad, backward has not run or did not reach that "
                        "tensor (assert_grads_flow(model) says which parameters it missed)")
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{what}: expected a tensor, got {type(tensor).__name__}: pass a tensor "
                        "(for a model's gradients, assert_finite_grads(model))")
    t = tensor.detach()
    if t.layout != torch.strided:
        t = t.to_dense()  # a sparse .grad, as Embedding(sparse=True) writes
    bad = ~torch.isfinite(t)
    if bad.any():
        nan = torch.isnan(t)   # a complex nan+inf*j is counted once, as a NaN
        nans, infs = int(nan.sum()), int((torch.isinf(t) & ~nan).sum())
        first = tuple(bad.nonzero()[0].tolist())  # index of the first non-finite element
        how = ("a backward that returns NaN is named by torch.autograd.detect_anomaly()" if nans else
               "torch.autograd.detect_anomaly() flags NaN only: look for an operation that overflows")
        raise GuardError(
            f"{what} has {nans} NaN and {infs} inf of {t.numel()} values, the first at index {first}: {how}"
        )


def assert_finite_grads(module):
    """Fail if any parameter's ``.grad`` holds a NaN or an infinity (call after backward).

    A parameter whose ``.grad`` is None is skipped; when every one is None there is nothing
    to check, and that fails too (backward has not run, or reached no parameter).
    """
    named = [(name, p) for name, p in _trainable(module) if p.grad is not None]
    if not named:
        raise GuardError("no parameter has a .grad, so there is nothing to check: call it after "
                         "loss.backward(); if backward ran, no gradient reached the module (assert_grads_flow)")
    for name, p in named:
        assert_finite(p.grad, f"{name}.grad")
# --8<-- [end:finite]


# --8<-- [start:grads]
def assert_no_stale_grads(module):
    """Fail if a parameter still holds a nonzero ``.grad`` (call just before backward).

    A stale gradient means ``zero_grad()`` was not called, or was called on an optimizer that
    does not hold the parameter: backward would add to it.
    """
    stale = [n for n, p in _trainable(module) if p.grad is not None and bool(p.grad.any())]
    if stale:
        raise GuardError(
            f"stale gradients in {', '.join(stale)}: backward() adds to .grad, so call "
            "zero_grad() before each backward, on an optimizer that holds them"
        )


def assert_grads_flow(module):
    """Fail unless every trainable parameter got a gradient that is not all zeros (an empty
    parameter, with no element to move, is skipped)."""
    named = [(n, p) for n, p in _trainable(module) if p.numel() > 0]
    missing = [n for n, p in named if p.grad is None]
    zero = [n for n, p in named if p.grad is not None and not bool(p.grad.any())]
    causes = []
    if missing:  # the graph does not reach them
        causes.append(f"no gradient reached: {', '.join(missing)}. Look for .detach(), .item(), "
                      "torch.no_grad() or requires_grad_(False) between these parameters and the loss")
    if zero:  # every path multiplies by 0, or none reaches a .grad zeroed in place
        causes.append(f"all-zero gradient: {', '.join(zero)}. Look for a ReLU that is 0 on the whole "
                      "batch, a factor or mask of 0, or a loss that does not depend on their values; "
                      "after zero_grad(set_to_none=False), also for .detach(), .item() or torch.no_grad() "
                      "between them and the loss")
    if causes:
        raise GuardError("; ".join(causes))


def snapshot(module):
    """Copies of the trainable parameters, to compare after ``optimizer.step()``."""
    return {n: p.detach().clone() for n, p in _trainable(module)}


def assert_params_changed(module, before):
    """Fail if a trainable parameter with elements is bitwise equal to its copy in ``before``."""
    if not isinstance(before, dict):
        raise TypeError("before must be the dict that snapshot(module) returned")
    named = dict(_trainable(module))
    if set(named) != set(before):
        raise ValueError("before was taken from another module: call snapshot(module) on this one")
    for n, p in named.items():
        if not isinstance(before[n], torch.Tensor) or before[n].shape != p.shape:
            got = tuple(before[n].shape) if isinstance(before[n], torch.Tensor) else type(before[n]).__name__
            raise ValueError(f"before[{n!r}] has shape {got}, the parameter {tuple(p.shape)}: before was "
                             "taken from another module: call snapshot(module) on this one")
        if before[n].dtype != p.dtype:
            raise ValueError(f"before[{n!r}] is {before[n].dtype}, the parameter {p.dtype}: take the "
                             "snapshot after converting the module (.double(), .to(...))")
    nonfinite = [n for n, p in named.items() if not torch.isfinite(p).all()]
    if nonfinite:
        raise GuardError(f"the step left NaN or inf in {', '.join(nonfinite)}: check the loss and the learning rate")
    same = [n for n, p in named.items() if p.numel() > 0 and torch.equal(p.detach(), before[n])]
    if same:
        raise GuardError(
            f"the step did not change {', '.join(same)}: check that they are in the optimizer, "
            "that their .grad is not None, that the learning rate is not 0, and that lr * grad is not "
            "below the parameter's spacing (likeliest in float16 or bfloat16: keep float32 master weights)"
        )
# --8<-- [end:grads]
