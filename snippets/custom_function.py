"""Custom autograd Functions: a template to copy, and the check every one of them must pass.

A ``torch.autograd.Function`` is called through its class: ``Square.apply(x)``. ``forward``
computes the output and stores in ``ctx`` what ``backward`` needs; ``backward`` receives
one upstream gradient per output and returns one gradient per input of ``forward``, ``None``
for an input that is not a tensor requiring grad (extra trailing ``None``s are accepted too).
Both methods are static.

Invariant of every Function here: each gradient has the shape of its input, and the
backward is built from differentiable torch operations on saved tensors, so the Function
passes ``gradcheck`` and ``gradgradcheck`` in float64 (``check_function`` runs both).
"""

# --8<-- [start:square]
import torch


class Square(torch.autograd.Function):
    """y = x ** 2, elementwise. x: any shape; y and dL/dx have x's shape."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)  # backward needs x: dy/dx = 2x
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):  # grad_output = dL/dy, shape of y
        (x,) = ctx.saved_tensors
        return grad_output * 2 * x  # dL/dx = dL/dy * 2x, one gradient for one input
# --8<-- [end:square]


# --8<-- [start:scaled_pow]
class ScaledPow(torch.autograd.Function):
    """y = s * x ** p, elementwise.

    x: float tensor, any shape; s: float tensor that broadcasts to x's shape (a 0-d scale
    or one of x's shape); p: a Python int >= 1, not differentiable. y has x's shape.
    backward returns (dL/dx with x's shape, dL/ds with s's shape, None for p).
    """

    @staticmethod
    def forward(ctx, x, s, p):
        if not isinstance(p, int) or isinstance(p, bool) or p < 1:
            raise ValueError(f"p must be a Python int >= 1, got {p!r}; for p = 0 the output is just s")
        for name, t in (("x", x), ("s", s)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{name} must be a tensor, got {type(t).__name__}: pass torch.tensor({t!r})")
        try:
            joint = torch.broadcast_shapes(x.shape, s.shape)
        except RuntimeError:  # the sizes cannot broadcast at all
            joint = None
        if joint != x.shape:
            raise ValueError(
                f"s of shape {tuple(s.shape)} must broadcast to x's shape {tuple(x.shape)}; "
                "pass a 0-d scale or one of x's shape"
            )
        ctx.save_for_backward(x, s)  # tensors go through save_for_backward
        ctx.p = p  # a plain Python value can be stored on ctx directly
        return s * x ** p

    @staticmethod
    def backward(ctx, grad_output):  # grad_output: x's shape
        x, s = ctx.saved_tensors
        p = ctx.p
        grad_x = grad_s = None
        if ctx.needs_input_grad[0]:  # skip the work for an input that needs no gradient
            grad_x = grad_output * s * p * x ** (p - 1)  # x's shape
        if ctx.needs_input_grad[1]:
            # s was broadcast to x's shape in forward: sum the gradient back to s's shape
            grad_s = (grad_output * x ** p).sum_to_size(s.shape)
        return grad_x, grad_s, None  # one entry per forward input: x, s, p
# --8<-- [end:scaled_pow]


# --8<-- [start:check_function]
def check_function(fn, *inputs):
    """Run gradcheck and gradgradcheck on ``fn(*inputs)``; return True or raise.

    ``fn`` is a callable such as ``Square.apply``. ``inputs`` are passed as they are:
    tensors (every one that requires grad float64, or complex128 if complex) and plain values
    such as an int exponent; a fixed tensor of another dtype is not perturbed, so it is allowed
    while every output stays float64 (or complex128). At least one non-empty tensor must
    require grad. A wrong backward
    raises ``GradcheckError`` (a RuntimeError; ``from torch.autograd.gradcheck import
    GradcheckError``) with the numerical and analytical Jacobians.
    """
    if isinstance(fn, type) and issubclass(fn, torch.autograd.Function):
        raise TypeError(f"pass {fn.__name__}.apply, not the class: a Function is called through .apply")
    if not callable(fn):
        raise TypeError(f"fn must be callable, such as MyFunction.apply, got {type(fn).__name__}")
    if len(inputs) == 1 and isinstance(inputs[0], (tuple, list)):
        raise TypeError("pass the inputs unpacked, check_function(fn, x, s, 3), not one tuple as "
                        "gradcheck(fn, (x, s, 3)) takes")
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    for i, t in enumerate(inputs):
        if isinstance(t, torch.Tensor) and t.requires_grad \
                and t.dtype not in (torch.float64, torch.complex128):
            wide = "to(torch.complex128)" if t.is_complex() else "double()"
            raise TypeError(
                f"input #{i} is {t.dtype}; finite differences in {t.dtype} are swamped by rounding "
                "error and gradcheck fails even for a correct backward. "
                f"Pass t.detach().{wide}.requires_grad_() instead"
            )
    for i, t in enumerate(inputs):
        if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()) and not torch.isfinite(t).all():
            raise ValueError(f"input #{i} holds NaN or inf: gradcheck needs a point where fn is finite")
    if not any(t.requires_grad for t in tensors):
        raise ValueError("no input requires grad: create the tensors to check with requires_grad=True")
    if all(t.numel() == 0 for t in tensors if t.requires_grad):
        raise ValueError("every input that requires grad is empty: gradcheck would compare no element; "
                         "pass a point with at least one element")
    if torch.is_inference_mode_enabled():
        raise RuntimeError("check_function needs autograd: call it outside torch.inference_mode()")
    with torch.enable_grad():  # a caller's torch.no_grad() must not hide the graph
        out = fn(*inputs)
        for j, o in enumerate(out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(o, torch.Tensor) and (o.is_floating_point() or o.is_complex()) \
                    and o.dtype not in (torch.float64, torch.complex128):
                raise TypeError(f"output #{j} is {o.dtype}, and its rounding swamps the finite differences: "
                                "every output must be float64 (or complex128); pass a fixed input of "
                                "lower precision as t.double(), and do not cast inside fn")
        torch.autograd.gradcheck(fn, inputs)
        torch.autograd.gradgradcheck(fn, inputs)
    return True
# --8<-- [end:check_function]
