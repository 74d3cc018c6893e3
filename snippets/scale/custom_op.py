"""A custom operator with its autograd formula: ``autograd_book::scaled_softplus``.

``scaled_softplus(x, beta) = log(1 + exp(beta * x)) / beta``, elementwise: x any shape,
floating point; beta a positive float; the output has x's shape and dtype. It is the function
``torch.nn.functional.softplus(x, beta)`` computes, with its threshold (where ``beta * x > 20`` it
returns ``x``), and agrees with it within ``torch.allclose``'s default tolerances in float32;
in float16 and bfloat16 only to a unit or so of their rounding (in float16, beta = 2 at
x = 40000 overflows to inf where softplus returns x). Its derivative is ``sigmoid(beta * x)``,
also past the threshold, where softplus's is exactly 1.

Importing this module defines the operator once, with ``torch.library.custom_op``, and registers
what ``torch.compile`` and autograd need from it: a fake implementation (the output's shape and
dtype, computed without data) and a backward formula. Call it as ``scaled_softplus(x, 2.0)`` or,
by its name, ``torch.ops.autograd_book.scaled_softplus(x, 2.0)``.
"""

import math

import torch


# --8<-- [start:op]
def _check(x, beta):
    """The op's arguments, checked by the op and by its fake implementation alike."""
    if x.is_complex():
        raise ValueError(f"x must be a real floating-point tensor; got {x.dtype}: complex is not supported")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor; got {x.dtype}: convert it with x.float()")
    if not (math.isfinite(beta) and 0 < beta <= torch.finfo(x.dtype).max):
        raise ValueError(f"beta must be a positive finite number that x's dtype {x.dtype} can hold; got {beta!r}")


@torch.library.custom_op("autograd_book::scaled_softplus", mutates_args=())
def scaled_softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    """log(1 + exp(beta * x)) / beta, elementwise; x: any shape, floating point."""
    _check(x, beta)
    return torch.nn.functional.softplus(beta * x) / beta   # any code: compile does not trace it


@scaled_softplus.register_fake
def _(x, beta):
    """The output's metadata from the inputs' alone: what torch.compile traces with."""
    _check(x, beta)
    return torch.empty_like(x)                              # (x's shape), x's dtype


def setup_context(ctx, inputs, output):
    """Runs after the forward: keep what backward needs."""
    x, beta = inputs
    ctx.save_for_backward(x)                                # a tensor: save_for_backward
    ctx.beta = beta                                         # a Python float: an attribute


def backward(ctx, grad):
    """dL/dx = dL/dy * sigmoid(beta * x); one gradient per input, None for beta."""
    (x,) = ctx.saved_tensors
    return grad * torch.sigmoid(ctx.beta * x), None


scaled_softplus.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:op]

