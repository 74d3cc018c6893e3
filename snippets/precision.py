"""Test an op in reduced precision against a float64 reference, with a tolerance from the dtype.

``relative_error(fn, *inputs, dtype)`` rounds the float64 ``inputs`` to ``dtype``, runs ``fn``
on them in ``dtype``, runs ``fn`` (or ``reference``) on the *same rounded values* in float64,
and returns ``max |out - ref| / max |ref|``: the error the op adds, not the error of rounding
its inputs; ``inf`` if ``fn`` overflows in ``dtype``, ``nan`` if the reference itself is not
finite (a NaN or inf input, an input beyond ``dtype``'s range, or ``fn`` not finite there even
in float64, as log at 0 or exp at 800: there is no error to measure).

``tolerance(dtype, n)`` is the bound that error is held to:

    k * eps(dtype) + sqrt(n) * eps(float32)

``k * eps(dtype)``: a few roundings of results to ``dtype`` (each at most eps/2 relative).
``sqrt(n) * eps(float32)``: the rounding of a length-``n`` reduction accumulated in float32,
as the bfloat16 and float16 CPU kernels of torch 2.13 do (random-walk growth). An op that
accumulates in ``dtype`` itself, or overflows, exceeds it.
"""

import math

import torch

LOW = (torch.bfloat16, torch.float16, torch.float32)


def tolerance(dtype, n, k=2.0):
    """Relative tolerance for an op in ``dtype`` whose longest reduction has ``n`` terms."""
    if dtype not in LOW:
        raise ValueError(f"dtype must be one of {LOW}; got {dtype}")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n is the length of the op's longest reduction, a positive int; got {n!r}")
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not 0 <= k < math.inf:
        raise ValueError(f"k counts roundings to dtype, a finite number >= 0 (default 2); got {k!r}")
    return k * torch.finfo(dtype).eps + math.sqrt(n) * torch.finfo(torch.float32).eps


def relative_error(fn, *inputs, dtype, reference=None):
    """``max |fn(rounded) - ref| / max |ref|``, with ``ref`` computed in float64 from the same
    rounded inputs by ``reference`` (default: ``fn`` itself). The error is relative to the
    largest reference value, not to each element: an error in values far below it goes unseen.
    An overflow inside ``fn`` gives inf, or 1 when it turns every output into 0 (``e / inf``)."""
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    if not inputs or not all(isinstance(x, torch.Tensor) and x.dtype == torch.float64 for x in inputs):
        raise TypeError("pass the inputs as float64 tensors; they are rounded to dtype here")
    if dtype not in LOW:
        raise ValueError(f"dtype must be one of {LOW}; got {dtype}")
    if any(x.numel() == 0 for x in inputs):
        raise ValueError("an input is empty: pass at least one element")
    reference = fn if reference is None else reference
    low = [x.to(dtype) for x in inputs]
    with torch.no_grad():
        ref = reference(*[x.double() for x in low])  # first: fn may write its inputs in place
        out = fn(*low)
    if not (isinstance(out, torch.Tensor) and isinstance(ref, torch.Tensor)):
        raise TypeError(f"fn and reference must return one tensor; got {type(out).__name__} and {type(ref).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"fn returned {out.dtype} for {dtype} inputs; it must compute in the inputs' dtype")
    if out.shape != ref.shape:
        raise ValueError(f"fn gives shape {tuple(out.shape)}, the reference {tuple(ref.shape)}")
    if not torch.isfinite(ref).all():  # a NaN or inf input, one beyond dtype's range, or fn not finite there
        return math.nan
    scale = ref.abs().max().item()
    if scale == 0:
        raise ValueError("the reference output is all zeros; a relative error is undefined, pick other inputs")
    err = (out.double() - ref).abs().max().item()
    return err / scale if math.isfinite(err) else math.inf  # inf: fn overflowed in dtype


# --8<-- [start:assert_close]
def assert_close_to_reference(fn, *inputs, dtype, n, reference=None, k=2.0):
    """Fail unless ``fn`` in ``dtype`` is within ``tolerance(dtype, n, k)`` of float64.

    ``inputs``: float64 tensors. ``n``: length of the longest reduction in ``fn`` (the inner
    dimension of a matmul, the normalized dimension of a softmax or layer norm). Returns the
    measured relative error, so a test can also record it.
    """
    err, tol = relative_error(fn, *inputs, dtype=dtype, reference=reference), tolerance(dtype, n, k)
    name = getattr(fn, '__name__', 'fn')
    if math.isnan(err):
        raise AssertionError(
            f"{name} in {dtype}: the float64 reference is not finite, so no error can be measured: "
            f"pass inputs within {dtype}'s range (|x| <= {torch.finfo(dtype).max:.3g}) where {name} is finite in float64"
        )
    if not err <= tol:
        eps = torch.finfo(dtype).eps
        raise AssertionError(
            f"{name} in {dtype}: relative error {err:.3g} ({err / eps:.3g} eps) exceeds tolerance "
            f"{tol:.3g} ({tol / eps:.3g} eps) for n={n}; look for "
            + ("overflow in the low-precision dtype" if math.isinf(err) else
               "overflow or accumulation in the low-precision dtype" if err >= 0.5 else
               "accumulation in the low-precision dtype")
        )
    return err
# --8<-- [end:assert_close]
