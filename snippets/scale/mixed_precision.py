"""Mixed precision: one optimizer step under a ``GradScaler`` in the right order, and the spacing
of a floating-point dtype, which decides whether a weight update survives.

``scaled_step(loss, optimizer, scaler, max_norm=None)`` runs what follows a forward pass:
``scaler.scale(loss).backward()``; with ``max_norm``, ``scaler.unscale_(optimizer)`` and then
``clip_grad_norm_`` over the optimizer's parameters (so the clip sees the true gradients);
``scaler.step(optimizer)``; ``scaler.update()``. It returns what a training log needs: the
gradient norm before clipping (``None`` without ``max_norm``), whether the optimizer stepped, and
the scale for the next step. It does not zero the gradients: call ``optimizer.zero_grad()``
before the forward pass, as in any loop.

Invariants: a step is skipped exactly when the scaled gradients held an ``inf`` or NaN, and then
the scale is multiplied by the scaler's backoff factor (below 1); otherwise the step runs and the
scale stays or grows. So "stepped" is read from the scale alone, through public methods.

``ulp(x, dtype)``: the distance from ``|x|``, rounded to ``dtype``, to the next larger number of
``dtype``. ``applied_update(w, delta, dtype)``: what ``w + delta`` really adds to ``w`` when both
are stored in ``dtype``: 0 when ``|delta|``, rounded to ``dtype``, is below half the spacing between ``w`` and its
neighbour in ``delta``'s direction (``ulp(w)``, or half of it from a power of two downward; round
to nearest, a tie goes to the even neighbour), else ``delta`` rounded to a whole number of
spacings.
"""

from __future__ import annotations

import math

import torch
from torch import nn

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _check_dtype(dtype):
    if dtype not in FLOATS:
        raise TypeError(f"dtype must be one of torch.float16, torch.bfloat16, torch.float32, torch.float64; "
                        f"got {dtype!r}")


def _check_number(value, name):
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise ValueError(f"{name} must be one number; got a tensor of shape {tuple(value.shape)}: "
                             f"pass one entry, e.g. {name}[0].item()")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number (an int, a float or a one-element tensor); "
                        f"got {type(value).__name__}")
    try:
        value = float(value)
    except OverflowError:                        # an int beyond float64's range
        raise ValueError(f"{name} must be a finite number float64 can hold; got an int beyond its range") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}")
    return value


def ulp(x, dtype) -> float:
    """The spacing of ``dtype`` at ``|x|``: next representable number above ``|x|`` (rounded to
    ``dtype``) minus ``|x|``, as a Python float (exact)."""
    _check_dtype(dtype)
    t = torch.tensor(abs(_check_number(x, "x")), dtype=torch.float64).to(dtype)
    if torch.isinf(t):
        raise ValueError(f"|x| = {abs(float(x))} rounds to inf in {dtype} (largest finite: "
                         f"{torch.finfo(dtype).max}): it has no spacing there; pass a value in range")
    return (torch.nextafter(t, torch.full_like(t, math.inf)).double() - t.double()).item()


def applied_update(w, delta, dtype) -> float:
    """``(w + delta) - w`` with ``w``, ``delta`` and the sum each rounded to ``dtype``, as a
    Python float (exact): 0.0 when the update is lost."""
    _check_dtype(dtype)
    w = torch.tensor(_check_number(w, "w"), dtype=torch.float64).to(dtype)
    d = torch.tensor(_check_number(delta, "delta"), dtype=torch.float64).to(dtype)
    for name, value in (("w", w), ("delta", d)):  # a sum that overflows is torch's inf
        if torch.isinf(value):
            raise ValueError(f"{name} rounds to inf in {dtype} (largest finite: {torch.finfo(dtype).max}): "
                             "no update is measured there; pass values in range")
    return ((w + d).double() - w.double()).item()


# --8<-- [start:scaled_step]
def scaled_step(loss, optimizer, scaler, max_norm=None):
    """Backward, (unscale, clip,) step and update, in that order. Returns
    ``{"norm": gradient norm before clipping or None, "stepped": bool, "scale": next scale}``."""
    _check_step(loss, optimizer, scaler, max_norm)
    scaler.scale(loss).backward()                # every gradient is scale times too large
    params = [p for group in optimizer.param_groups for p in group["params"]]
    if all(p.grad is None for p in params):      # an enabled scaler's step asserts there is one
        raise ValueError("no parameter of optimizer got a gradient from loss: pass the optimizer of "
                         "the parameters loss is computed from (theirs now hold scaled gradients: "
                         "zero them)")
    norm = None
    if max_norm is not None:
        scaler.unscale_(optimizer)               # true gradients; records inf/NaN
        norm = nn.utils.clip_grad_norm_(params, max_norm).item()
    before = scaler.get_scale()
    scaler.step(optimizer)                       # skipped if a gradient was inf/NaN
    scaler.update()                              # backoff after a skip, growth after a run of steps
    return {"norm": norm, "stepped": scaler.get_scale() >= before, "scale": scaler.get_scale()}
# --8<-- [end:scaled_step]


def _check_step(loss, optimizer, scaler, max_norm):
    if not isinstance(loss, torch.Tensor):
        raise TypeError(f"loss must be a tensor (the loss of this batch); got {type(loss).__name__}")
    if loss.dim() != 0:
        raise ValueError(f"loss must be a scalar tensor; got shape {tuple(loss.shape)}: reduce it, "
                         "e.g. loss.mean()")
    if not loss.requires_grad:
        raise ValueError("loss does not require grad, so backward has nothing to compute: build it from the "
                         "model's output, outside torch.no_grad()")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer must be a torch.optim.Optimizer, e.g. torch.optim.SGD(model.parameters()); "
                        f"got {type(optimizer).__name__}")
    if not isinstance(scaler, torch.amp.GradScaler):
        raise TypeError(f"scaler must be a torch.amp.GradScaler, e.g. torch.amp.GradScaler(\"cpu\"); "
                        f"got {type(scaler).__name__}")
    if scaler.is_enabled() and torch.tensor(scaler.get_scale(), dtype=torch.float64).reciprocal().float().isinf():
        raise FloatingPointError(f"the scale is {scaler.get_scale()}, whose reciprocal overflows float32: it halved "
                                 "at nearly every step, so those steps had an inf or NaN gradient, and unscaling now "
                                 "would write inf or NaN into the weights; find the non-finite gradient (anomaly "
                                 "mode), then call scaler.update(new_scale=2.0**16)")
    if max_norm is not None:
        if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)):
            raise TypeError(f"max_norm must be a positive number or None; got {type(max_norm).__name__}")
        try:
            float(max_norm)
        except OverflowError:                    # an int beyond float64's range
            raise ValueError("max_norm must be a positive finite number or None; got an int beyond "
                             "float64's range") from None
        if not (math.isfinite(max_norm) and max_norm > 0):
            raise ValueError(f"max_norm must be a positive finite number or None; got {max_norm}")
