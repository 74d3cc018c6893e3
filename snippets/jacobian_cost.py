"""The full Jacobian of f: R^n -> R^m, built from vector-Jacobian or Jacobian-vector products.

Reverse mode gives one *row* of J per vector-Jacobian product (VJP, v^T J, v of shape (m,)):
one backward pass each. Forward mode gives one *column* per Jacobian-vector product
(JVP, J u, u of shape (n,)): one forward pass each. Both functions return the Jacobian,
shape (m, n), and how many passes they made: m VJPs or n JVPs. For a scalar loss (m = 1)
one VJP is the whole gradient.

``f`` takes a 1-D tensor of shape (n,) and returns a 1-D tensor of shape (m,) or a 0-d
tensor (treated as m = 1). Invariant checked by the tests: both results equal
``torch.autograd.functional.jacobian(f, x)`` reshaped to (m, n). ``x`` is not modified.
"""

import torch

# torch.autograd.forward_ad, with torch's own warning on its first use filtered (see there)
from snippets.jvp_rules import fwAD


def _check(f, x):
    if not callable(f):
        raise TypeError(f"f must be a function of one tensor, got {type(f).__name__}")
    if not isinstance(x, torch.Tensor) or x.dim() != 1 or not x.is_floating_point():
        got = f"{x.dtype} tensor of shape {tuple(x.shape)}" if isinstance(x, torch.Tensor) else type(x).__name__
        fix = ("pass torch.as_tensor(x, dtype=torch.float64).flatten()" if not isinstance(x, torch.Tensor)
               else "flatten it first" if x.is_floating_point()
               else "pass x.real or x.abs() as a float tensor" if x.is_complex() else "pass x.double()")
        raise ValueError(f"x must be a 1-D floating-point tensor (n,), got {got}: {fix}")
    if x.numel() == 0:
        raise ValueError("x is empty, shape (0,): a Jacobian needs n >= 1 inputs")
    if not torch.isfinite(x).all():
        raise ValueError("x holds NaN or inf: pass a finite point (NaN spreads differently through "
                         "a row and through a column of J)")
    if torch.is_inference_mode_enabled() or x.is_inference():
        raise ValueError("inference mode records nothing: call outside torch.inference_mode(), "
                         "with an x made outside it (x.clone() there)")
    return x.detach()


_LEFT_AUTOGRAD = ("f's output does not depend on x through differentiable operations: f leaves "
                  "autograd (.detach(), .item(), .tolist(), .numpy(), an integer dtype) or does "
                  "not use x; compute it from x with floating-point torch operations")


def _flat(y):
    if isinstance(y, (tuple, list)):
        raise ValueError(f"f returned a {type(y).__name__}: return one tensor (m,), e.g. "
                         "torch.cat([t.flatten() for t in outputs])")
    if not isinstance(y, torch.Tensor):
        raise ValueError(f"f returned a {type(y).__name__}, not a tensor: " + _LEFT_AUTOGRAD)
    if y.dim() > 1:
        raise ValueError(f"f must return a tensor of shape (m,) or (), got {tuple(y.shape)}: flatten its output")
    if y.numel() == 0:
        raise ValueError("f returned an empty tensor, shape (0,): a Jacobian needs m >= 1 outputs")
    if y.is_complex():
        raise ValueError("f returned a complex tensor, whose real and imaginary parts are two "
                         "outputs each: return torch.view_as_real(y).reshape(-1) instead")
    return y.reshape(-1)


def jacobian_by_vjps(f, x):
    """J (m, n) one row at a time: row i is e_i^T J, a VJP with the i-th unit vector (m,)."""
    x = _check(f, x).requires_grad_(True)         # a new leaf sharing x's values
    with torch.enable_grad():
        y = _flat(f(x))                           # one forward pass, (m,)
    if not y.requires_grad:
        raise ValueError(_LEFT_AUTOGRAD)
    eye = torch.eye(y.numel(), dtype=y.dtype)
    rows = [torch.autograd.grad(y, x, eye[i], retain_graph=True, allow_unused=True)[0]
            for i in range(y.numel())]
    if any(row is None for row in rows):          # y has a graph, but not through x
        raise ValueError(_LEFT_AUTOGRAD)
    return torch.stack(rows), len(rows)           # (m, n), m backward passes


def jacobian_by_jvps(f, x):
    """J (m, n) one column at a time: column j is J e_j, a JVP with the j-th unit vector (n,)."""
    x = _check(f, x)
    eye = torch.eye(x.numel(), dtype=x.dtype)
    cols = []
    with fwAD.dual_level():
        for j in range(x.numel()):
            y = _flat(f(fwAD.make_dual(x, eye[j])))  # one forward pass carrying tangent e_j
            tangent = fwAD.unpack_dual(y).tangent     # (m,) = J e_j
            if tangent is None:                       # y carries no tangent at all
                raise ValueError(_LEFT_AUTOGRAD)
            cols.append(tangent)
    return torch.stack(cols, dim=1).to(x.dtype), len(cols)   # (m, n), n forward passes, x's dtype as torch's
