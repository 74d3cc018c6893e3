"""Deliberately broken versions of x ** 2 as autograd Functions, for tests that must reject them.

``square_with_backward(rule)`` returns ``Fn.apply`` of a Function whose forward is x ** 2
(x saved) and whose backward returns ``rule(grad_output, x)``.
"""

import torch


def square_with_backward(rule):
    class SquareVariant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return rule(grad_output, x)

    return SquareVariant.apply
