"""Central differences in float64, and a check of an autograd gradient against them.

``central_difference(f, x, h)`` estimates the gradient of a scalar function ``f`` at ``x``
one element at a time: (f(x + h e_i) - f(x - h e_i)) divided by the step actually taken,
(x_i + h) - (x_i - h) as float64 represents it, which is 2h only up to the rounding of x_i + h
(at x_i = 3e9 and h = 1e-6 it is 1.9e-6). Its error is a truncation term of order h**2 plus a
rounding term of order eps * |f| / h (eps = 2.2e-16 in float64), so it is only meaningful in
float64, with h around 1e-6.
"""

# --8<-- [start:central_difference]
import math

import torch


def central_difference(f, x, h=1e-6):
    """Estimate d f / d x by central differences. Returns a float64 tensor of x's shape.

    f: a callable taking a tensor of x's shape and returning a one-element float64 tensor.
    x: a float64 tensor (any shape); it is not modified. Every evaluation of f runs under
    torch.no_grad(), so no graph is built and no .grad is touched. Each quotient divides by
    the step between the two points f was evaluated at, (x_i + h) - (x_i - h) in float64, not
    by 2h: far from 0, x_i + h rounds to the grid of floats near x_i. A step lost to that
    rounding (x_i + h == x_i) is refused.
    """
    if not callable(f):
        raise TypeError(f"f must be a function of x, such as lambda w: loss(w), got {type(f).__name__}")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a float64 tensor, got {type(x).__name__}: pass "
                        "torch.tensor(values, dtype=torch.float64)")
    if x.is_complex():
        raise TypeError(f"x must be a real float64 tensor, got {x.dtype}: pass its real and imaginary "
                        "parts as two real inputs, or check with torch.autograd.gradcheck, which "
                        "handles complex128")
    if not x.is_floating_point():
        raise TypeError(f"x must be a float64 tensor, got {x.dtype}, which has no gradient: "
                        "pass x.double()")
    if x.dtype != torch.float64:
        raise TypeError(
            f"x must be a float64 tensor, got {x.dtype}: in float32 the rounding error of a "
            "difference quotient is about 1e-7 * |f| / h and swamps the estimate. "
            "Pass x.double() and make f compute in float64"
        )
    if not torch.isfinite(x).all():
        i = int((~torch.isfinite(x)).reshape(-1).nonzero()[0])
        raise ValueError(f"x holds {x.reshape(-1)[i].item()} at flat index {i}: differentiate at a finite point")
    if isinstance(h, bool) or not isinstance(h, (int, float)) or not 0 < h < math.inf:
        raise ValueError(f"h must be a positive finite float, got {h!r}; 1e-6 suits float64")
    grad = torch.empty(x.numel(), dtype=torch.float64)
    with torch.no_grad():
        flat = x.detach().clone().reshape(-1)  # (numel,), a copy: x is left alone
        for i in range(flat.numel()):
            old = flat[i].item()
            if old + h == old or old - h == old:  # the step is lost in rounding: f(x + h) = f(x)
                raise ValueError(f"h = {h} is too small for x's flat index {i} = {old}: x + h rounds "
                                 "to x in float64; use h near 1e-6 * max(1, |x|)")
            flat[i] = plus = old + h  # each rounded to float64, as flat[i] holds it
            f_plus = _scalar(f(flat.view(x.shape)))
            flat[i] = minus = old - h
            f_minus = _scalar(f(flat.view(x.shape)))
            flat[i] = old
            grad[i] = (f_plus - f_minus) / (plus - minus)  # the step taken: 2h up to rounding
    return grad.view(x.shape)


def _scalar(value):
    if not isinstance(value, torch.Tensor) or value.numel() != 1:
        shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise ValueError(f"f must return a one-element tensor, got {shape}: reduce it, e.g. .sum()")
    if value.dtype != torch.float64:
        raise TypeError(f"f returned {value.dtype}: compute it in float64 (convert every tensor f uses)")
    return value.item()
# --8<-- [end:central_difference]


# --8<-- [start:check_gradient]
def check_gradient(f, x, h=1e-6, atol=1e-5, rtol=1e-3, allow_nonfinite=False):
    """Compare the autograd gradient of f at x with central differences; return both.

    Same contract as central_difference, whose quotients divide by the step actually taken:
    the rounding of x + h far from 0 is not reported as a mismatch. The tolerances are
    gradcheck's defaults: |autograd - numeric| <= atol + rtol * |numeric| elementwise. Raises AssertionError
    naming the worst element when they disagree. A NaN or inf in either gradient fails,
    unless allow_nonfinite=True: then the same NaN or inf on both sides counts as agreement.
    """
    for name, tol in (("atol", atol), ("rtol", rtol)):
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < math.inf:
            raise ValueError(f"{name} must be a finite number >= 0, got {tol!r}")
    if torch.is_inference_mode_enabled():
        raise RuntimeError("check_gradient needs autograd: call it outside torch.inference_mode()")
    numeric = central_difference(f, x, h)
    w = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():  # a caller's torch.no_grad() must not hide the graph
        out = f(w)
    _scalar(out)
    if not out.requires_grad:
        raise ValueError("f(x) does not require grad: f must compute with its argument, not a copy of it")
    (analytic,) = torch.autograd.grad(out, w, allow_unused=True)
    if analytic is None:
        raise ValueError("no gradient reaches f's argument: f reads a parameter, not the tensor it is "
                         "given (lambda w: loss(w)), or a backward on the way returned None")
    if not allow_nonfinite:
        for source, g in (("autograd", analytic), ("the central difference", numeric)):
            nonfinite = ~torch.isfinite(g)
            if nonfinite.any():
                i = int(nonfinite.reshape(-1).nonzero()[0])
                raise AssertionError(
                    f"{source} gives {g.reshape(-1)[i].item()} at flat index {i} "
                    f"({int(nonfinite.sum())} of {g.numel()} elements are not finite): "
                    "f or its backward is undefined there; check another point, or pass "
                    "allow_nonfinite=True if it should be"
                )
    same = (analytic == numeric) | (analytic.isnan() & numeric.isnan())  # equal NaN or inf
    bad = ~((analytic - numeric).abs() <= atol + rtol * numeric.abs()) & ~same  # NaN fails
    if bad.any():
        i = int(bad.reshape(-1).nonzero()[0])
        raise AssertionError(
            f"gradient mismatch at flat index {i}: autograd {analytic.reshape(-1)[i].item()!r}, "
            f"central difference {numeric.reshape(-1)[i].item()!r} "
            f"({int(bad.sum())} of {bad.numel()} elements differ)"
        )
    return analytic, numeric
# --8<-- [end:check_gradient]
