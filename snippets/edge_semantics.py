"""Helpers for the edge cases of autograd: kinks, complex inputs, captioned graph diagrams.

``grad_at(fn, point)``: the gradient torch assigns to ``fn(x).sum()`` at ``x = point`` (a float
or a list of floats), as a float64 tensor of the point's shape.

``complex_grad_by_parts(loss, z)``: for a real-valued ``loss`` of a complex tensor ``z``, the
gradient written with the real and imaginary parts as two real variables x and y,
``dL/dx + 1j * dL/dy``, computed without autograd: ``central_difference``
(snippets/finite_diff.py) in x, then in y (steps of 1e-6 in float64, so for |z| and |L| of
order 1 it agrees with the exact value to about 1e-9; the rounding grows as 1e-16 * |L| / 1e-6,
so a large |L| needs a rescaled loss). PyTorch's
``z.grad`` equals it: the page checks that convention against this independent reference.

``titled(source, title, description)``: mermaid ``source`` with ``accTitle`` and ``accDescr``
lines after its first line, so a generated diagram carries its accessible title.
"""

import torch

from snippets.finite_diff import central_difference


def grad_at(fn, point):
    """d/dx of fn(x).sum() at x = point, float64; fn must map a tensor to a tensor."""
    if not callable(fn):
        raise TypeError(f"fn must be a function of one tensor, got {type(fn).__name__}")
    if not isinstance(point, (int, float, list, tuple)):
        raise TypeError(f"point must be a float or a list of floats, got {type(point).__name__}")
    x = torch.tensor(point, dtype=torch.float64, requires_grad=True)
    if not torch.isfinite(x).all():
        raise ValueError(f"point must be finite, got {point}: pass finite floats, such as the x of a kink")
    with torch.enable_grad():  # a caller's torch.no_grad() must not hide the graph
        y = fn(x)
        if not isinstance(y, torch.Tensor):
            raise TypeError(f"fn must return a tensor, got {type(y).__name__}: use torch ops on x")
        g = torch.autograd.grad(y.sum(), x, allow_unused=True)[0] if y.requires_grad else None
        if g is None:
            raise ValueError("no gradient reaches x: fn returned a constant, an integer or a detached "
                             "result, or read another tensor, or inference mode is on; build the result from x")
    return g


def complex_grad_by_parts(loss, z):
    """dL/dx + 1j * dL/dy for L = loss(z) real, z = x + iy complex128 of any shape."""
    if not isinstance(z, torch.Tensor) or z.dtype != torch.complex128:
        raise TypeError("z must be a complex128 tensor; build it with torch.tensor(..., dtype=torch.complex128)")
    if not callable(loss):
        raise TypeError(f"loss must be a function of z returning a real scalar, got {type(loss).__name__}")
    if not torch.isfinite(z).all():
        raise ValueError("z holds NaN or inf: pass a finite z")
    z = z.detach()
    L = loss(z)
    if not isinstance(L, torch.Tensor):
        raise TypeError(f"loss must return a real 0-d tensor, got {type(L).__name__}")
    if L.is_complex() or L.dim() != 0:
        raise ValueError(f"loss must return a real 0-d tensor, got {L.dtype} of shape {tuple(L.shape)}")
    x, y = z.real.clone(), z.imag.clone()  # float64, z's shape
    gx = central_difference(lambda t: loss(torch.complex(t, y)), x)
    gy = central_difference(lambda t: loss(torch.complex(x, t)), y)
    return torch.complex(gx, gy)


def titled(source, title, description):
    """The mermaid source with accTitle/accDescr inserted after its first line."""
    if not isinstance(source, str) or not source.strip():
        raise ValueError("source must be mermaid text such as to_mermaid(...) returns")
    for name, text in (("title", title), ("description", description)):
        if not isinstance(text, str) or not text.strip() or "\n" in text:
            raise ValueError(f"{name} must be one line of text, got {text!r}")
    first, _, rest = source.strip().partition("\n")
    return f"{first}\n    accTitle: {title}\n    accDescr: {description}\n{rest}"
