"""The whole custom-Function API, one small Function per feature, and a compatibility check.

``Cube.apply(x)``: y = x ** 3, elementwise, any shape. Written in the ``setup_context`` style
with ``generate_vmap_rule = True`` and a ``jvp``, so it works under ``torch.func`` (vmap, grad,
jacrev, jvp), under ``torch.autograd.forward_ad`` and under double backward.

``ScaleInPlace.apply(x, k)``: multiplies x by the Python number k *in place* and returns x,
marked dirty. x must not be a leaf that requires grad (as for any in-place op).

``SortWithIndices.apply(x)``: (values, indices) of ``x.sort(dim=-1)``; the indices are marked
non-differentiable; backward scatters the gradient of the values back to their positions.

``SquareAndCube.apply(x)``: (x ** 2, x ** 3) with ``ctx.set_materialize_grads(False)``: the
backward receives None for an output the loss does not use, and skips its term.

``compatibility(fn, inputs)``: which of backward, double backward, vmap and jvp a Function
supports, each decided by running it (gradcheck, gradgradcheck, vmap against a loop, forward
AD against the Jacobian). Returns {column: "yes" | "no: <reason>"}.
"""

import warnings

import torch

from snippets.jvp_rules import fwAD  # noqa: E402 - forward_ad, loaded without torch 2.13's warning

from torch.func import vmap  # noqa: E402


# --8<-- [start:cube]
import torch  # noqa: E402 - repeated so that this section runs on its own when a page shows it


class Cube(torch.autograd.Function):
    """y = x ** 3, elementwise; x any shape, y and every gradient have x's shape."""

    generate_vmap_rule = True  # vmap runs forward/backward/jvp on batched tensors as they are

    @staticmethod
    def forward(x):  # no ctx: forward is a pure function of its inputs
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):  # called after forward, with its inputs and output
        (x,) = inputs
        ctx.save_for_backward(x)   # for backward (reverse mode)
        ctx.save_for_forward(x)    # for jvp (forward mode)

    @staticmethod
    def backward(ctx, grad_y):     # grad_y = dL/dy, x's shape
        (x,) = ctx.saved_tensors
        return grad_y * 3 * x ** 2  # differentiable ops: double backward works

    @staticmethod
    def jvp(ctx, x_tangent):       # x_tangent = dx, x's shape
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * x_tangent  # dy = J dx
# --8<-- [end:cube]


# --8<-- [start:scale_in_place]
class ScaleInPlace(torch.autograd.Function):
    """x.mul_(k) for a Python number k; returns x itself, modified. dL/dx = k * dL/dy."""

    @staticmethod
    def forward(ctx, x, k):
        if isinstance(k, (torch.Tensor, bool)) or not isinstance(k, (int, float)):
            hint = "; pass k.item() for a 0-d tensor" if isinstance(k, torch.Tensor) else ""
            raise TypeError(f"k must be a Python number, got {type(k).__name__}{hint}")
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a tensor, got {type(x).__name__}")
        ctx.k = k            # non-tensor state: a plain attribute of ctx
        x.mul_(k)            # modify the input in place ...
        ctx.mark_dirty(x)    # ... and say so: autograd bumps x's version and rebases its history
        return x             # a dirty tensor must be returned as an output

    @staticmethod
    def backward(ctx, grad_y):
        return grad_y * ctx.k, None  # one entry per forward input: x, k
# --8<-- [end:scale_in_place]


# --8<-- [start:sort]
class SortWithIndices(torch.autograd.Function):
    """x (..., n) -> (values (..., n), indices (..., n) int64), sorted along the last dim."""

    @staticmethod
    def forward(ctx, x):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a tensor, got {type(x).__name__}")
        values, indices = x.sort(dim=-1)
        ctx.mark_non_differentiable(indices)  # an int64 output: no gradient flows through it
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):  # one gradient per output; grad_indices unused
        (indices,) = ctx.saved_tensors
        # values[..., j] = x[..., indices[..., j]]: send each gradient back to where it came from
        return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)
# --8<-- [end:sort]


# --8<-- [start:materialize]
class SquareAndCube(torch.autograd.Function):
    """x (any shape) -> (x ** 2, x ** 3). Backward skips the term of an unused output."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)  # an unused output's gradient arrives as None, not zeros
        ctx.save_for_backward(x)
        return x ** 2, x ** 3

    @staticmethod
    def backward(ctx, grad_sq, grad_cube):
        (x,) = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None
        grad_x = torch.zeros_like(x)
        if grad_sq is not None:
            grad_x = grad_x + grad_sq * 2 * x
        if grad_cube is not None:
            grad_x = grad_x + grad_cube * 3 * x ** 2
        return grad_x
# --8<-- [end:materialize]


# --8<-- [start:compatibility]
COLUMNS = ("backward", "double backward", "vmap", "jvp")


def _first_line(exc):
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _reason(exc):
    """A short reason for a failure, from the exception torch raised."""
    text = str(exc)
    if "setup_context" in text:
        return "no setup_context"
    if "once_differentiable" in text or "doesn't support double backward" in text \
            or "does not require grad and does not have a grad_fn" in text:
        return "once_differentiable"
    if "not modifying the forward mode gradients inplace" in text:
        return "jvp must change a dirty input's tangent in place"
    if "jvp" in text and "not implemented" in text.lower() or "jvp function" in text:
        return "no jvp"
    if "Jacobian mismatch" in text:
        return "wrong values"
    if "vmap support" in text:
        return "no vmap rule"
    if "leaf Variable" in text:
        return "in-place on a leaf: pass prepare=lambda t: t.clone()"
    if "in-place" in text or "inplace" in text:
        return "in-place"
    return _first_line(exc)[:60]


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


def _float_outputs(out):
    return tuple(o for o in _outputs(out) if o.is_floating_point())


def compatibility(fn, inputs, prepare=None):
    """{column: "yes" | "no: reason"} for ``fn`` (a ``Function.apply``) at ``inputs``.

    inputs: a tuple; tensors among them are float64 (or int64 indices); the first tensor is
    the one differentiated and batched. prepare: optional callable applied to that tensor
    before each call (e.g. ``lambda t: t.clone()`` for a Function that works in place).
    vmap batches the first tensor over a new leading dim of size 3 (x, x / 2 + 1/4 and
    -1.5 x) and compares with a loop; a NaN in both, where fn is undefined, agrees.
    Pick inputs without ties or kinks: where fn has no derivative, gradcheck reports "wrong
    values" for a correct backward.
    """
    if not callable(fn) or isinstance(fn, type):
        raise TypeError("fn must be a Function's apply, e.g. Cube.apply, not the class")
    if not isinstance(inputs, (tuple, list)):
        raise TypeError(f"inputs must be a tuple of fn's arguments, e.g. (x,), got {type(inputs).__name__}")
    if not inputs or not isinstance(inputs[0], torch.Tensor) or inputs[0].dtype != torch.float64:
        raise TypeError("inputs[0] must be a float64 tensor: the input that is differentiated and batched")
    if inputs[0].numel() == 0 or not torch.isfinite(inputs[0]).all():
        raise ValueError("inputs[0] must be non-empty and finite: NaN or inf fails every check")
    if prepare is not None and not callable(prepare):
        raise TypeError(f"prepare must be a function of a tensor or None, got {type(prepare).__name__}")
    prep = prepare or (lambda t: t)
    x0 = inputs[0].detach()
    rest = tuple(inputs[1:])

    def f(x):
        return _float_outputs(fn(prep(x), *rest))

    if not f(x0.clone()):
        raise ValueError("fn returned no floating-point tensor at these inputs: there is nothing to "
                         "differentiate; pass a Function with a float output")
    row = {}
    x = x0.clone().requires_grad_(True)
    for column, check in (("backward", torch.autograd.gradcheck), ("double backward", torch.autograd.gradgradcheck)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check(f, (x,), raise_exception=True)
            row[column] = "yes"
        except Exception as exc:  # noqa: BLE001 - the reason is reported, not swallowed
            row[column] = "no: " + _reason(exc)

    batch = torch.stack([x0, x0 * 0.5 + 0.25, x0 * -1.5])  # (3, *x.shape)
    try:
        got = vmap(f)(batch)
        want = [f(b) for b in batch]
        ok = all(torch.allclose(g, torch.stack([w[i] for w in want]), equal_nan=True)  # NaN where f is
                 for i, g in enumerate(got))                                          # undefined: agrees
        row["vmap"] = "yes" if ok else "no: wrong values"
    except Exception as exc:  # noqa: BLE001
        row["vmap"] = "no: " + _reason(exc)

    tangent = torch.linspace(-1.0, 1.0, x0.numel(), dtype=torch.float64).reshape(x0.shape)
    try:
        with fwAD.dual_level():
            outs = f(fwAD.make_dual(x0.clone(), tangent))
            got = [fwAD.unpack_dual(o).tangent for o in outs]
        jac = torch.autograd.functional.jacobian(lambda t: f(t), x0.clone())
        want = [(j.reshape(o.numel(), -1) @ tangent.reshape(-1)).reshape(o.shape) for j, o in zip(jac, outs)]
        ok = all(g is not None and torch.allclose(g, w) for g, w in zip(got, want))
        row["jvp"] = "yes" if ok else "no: wrong tangent"
    except Exception as exc:  # noqa: BLE001
        row["jvp"] = "no: " + _reason(exc)
    return row
# --8<-- [end:compatibility]
