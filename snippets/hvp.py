"""Second derivatives: Hessian-vector products three ways, and a gradient penalty.

A Hessian-vector product ``H v`` of a scalar function ``f`` at ``x`` is the gradient of
``<grad f(x), v>`` with respect to ``x``. Autograd computes it without forming ``H``: one
backward pass that records its own graph (``create_graph=True``), then a second backward
through that graph. ``torch.autograd.functional.hvp`` and ``torch.func`` compute the same
vector; the three must agree.
"""

import torch

import snippets.jvp_rules  # noqa: F401 - forward mode loaded quietly (torch.func.jvp below)
from snippets.guards import batch_statistics_layer


def _refuse_inference_mode(name):
    """Raise inside torch.inference_mode(), where enable_grad turns grad mode on and still
    nothing is recorded: a second derivative would come back as zeros (or a constant), silently."""
    if torch.is_inference_mode_enabled():
        raise RuntimeError(f"{name} needs autograd, which torch.inference_mode() turns off even inside "
                           "enable_grad: call it outside inference_mode (under torch.no_grad() it works)")


def _check_point(f, x, v, name):
    _refuse_inference_mode(name)
    if not callable(f):
        raise TypeError(f"f must be a function of one tensor returning a scalar, got {type(f).__name__}")
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError("x must be a floating-point tensor, e.g. torch.tensor([1.0, 2.0])")
    if x.is_inference():
        raise ValueError("x was made under torch.inference_mode(), so it cannot require grad: "
                         "pass x.clone() made outside inference_mode")
    if not isinstance(v, torch.Tensor) or v.shape != x.shape:
        got = tuple(v.shape) if isinstance(v, torch.Tensor) else type(v).__name__
        raise ValueError(f"v must be a tensor of x's shape {tuple(x.shape)}, got {got}")
    if v.dtype != x.dtype:
        raise TypeError(f"v is {v.dtype} and x {x.dtype}: pass v in x's dtype (v.to(x.dtype))")


def _check_batches(critic, real, fake):
    if not isinstance(critic, torch.nn.Module):  # a function could hide a batch norm from the check below
        raise TypeError(f"critic must be a model (N, D) -> (N, 1), a torch.nn.Module, got {type(critic).__name__}")
    for name, t in (("real", real), ("fake", fake)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor (N, D), got {getattr(t, 'dtype', type(t).__name__)}")
        if not torch.isfinite(t).all():
            raise ValueError(f"{name} holds NaN or inf: pass finite samples")
    if real.dim() != 2 or real.shape != fake.shape:
        raise ValueError(f"real and fake must both be (N, D), got {tuple(real.shape)} and {tuple(fake.shape)}")
    if real.shape[0] == 0:
        raise ValueError(f"real and fake are empty, {tuple(real.shape)}: the penalty is a mean over samples; pass N >= 1")
    if real.dtype != fake.dtype:
        raise TypeError(f"real is {real.dtype} and fake {fake.dtype}: pass both in the critic's dtype")
    if batch_statistics_layer(critic):
        raise ValueError("critic normalises with batch statistics (a BatchNorm in train mode, or without "
                         "running stats), which mix the samples, so the gradient of the summed scores is "
                         "not per sample: use LayerNorm in the critic, as WGAN-GP does")


# --8<-- [start:double_backward]
def hvp_double_backward(f, x, v):
    """``H v`` for the Hessian ``H`` of scalar ``f`` at ``x``; same shape as ``x``.

    First backward with ``create_graph=True``, so the gradient ``g`` has a graph of its
    own; then the gradient of ``g`` with ``grad_outputs=v``, which is ``v^T H = (H v)^T``
    (``H`` is symmetric). A function whose gradient is constant in ``x`` (a zero Hessian:
    ``(2 * x).sum()``, a constant) gives zeros, as ``torch.autograd.functional.hvp`` does.
    Refused under ``torch.inference_mode()``, where both would give zeros for every ``f``.
    """
    _check_point(f, x, v, "hvp_double_backward")
    x = x.detach().requires_grad_(True)   # a fresh leaf: the caller's tensor is not touched
    with torch.enable_grad():             # works even when called under torch.no_grad()
        out = f(x)
        if not isinstance(out, torch.Tensor) or out.dim() != 0:   # 0-d, as torch.func.grad needs
            got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise ValueError(f"f must return a 0-d tensor, got {got}: reduce it, e.g. .sum()")
        if not out.requires_grad:                                # f is constant in x: H = 0
            return torch.zeros_like(x)
        (g,) = torch.autograd.grad(out, x, create_graph=True, materialize_grads=True)  # x's shape
        if not g.requires_grad:                                  # g is constant in x: H = 0
            return torch.zeros_like(x)
        (hv,) = torch.autograd.grad(g, x, grad_outputs=v, materialize_grads=True)      # v^T H
    return hv
# --8<-- [end:double_backward]


# --8<-- [start:three_ways]
def hvp_three_ways(f, x, v):
    """``{"double backward": Hv, "autograd.functional.hvp": Hv, "torch.func": Hv}``; refused under
    ``torch.inference_mode()``, as hvp_double_backward is."""
    _check_point(f, x, v, "hvp_three_ways")
    hv_double = hvp_double_backward(f, x, v)       # first: its message names a bad f
    _, hv_functional = torch.autograd.functional.hvp(f, x, v)
    # forward-over-reverse: the directional derivative (jvp) of the gradient function
    # (snippets.jvp_rules, imported above, keeps torch's first-use warning quiet).
    _, hv_func = torch.func.jvp(torch.func.grad(f), (x,), (v,))
    return {
        "double backward": hv_double,
        "autograd.functional.hvp": hv_functional,
        "torch.func": hv_func,
    }
# --8<-- [end:three_ways]


# --8<-- [start:penalty]
def gradient_penalty(critic, real, fake):
    """The WGAN-GP penalty ``mean((||d critic / d x_hat|| - 1)^2)`` at random interpolates.

    ``real`` and ``fake``: (N, D). Both are detached, so the penalty reaches the critic's
    parameters only (never the generator that made ``fake``). A critic that normalises with
    batch statistics is refused: they mix the samples. The per-sample gradients are
    computed with ``create_graph=True`` so that ``penalty.backward()`` can differentiate
    them with respect to the critic's parameters. Runs under ``enable_grad`` so it also works
    inside an evaluation loop that turned grad mode off with ``no_grad``; under
    ``inference_mode``, which ``enable_grad`` does not undo, it raises. The mixing weights take ``real``'s
    dtype and device, so a float16 or bfloat16 critic gets inputs of its own dtype. An empty
    batch is refused (the mean of no samples is NaN).
    """
    _check_batches(critic, real, fake)
    _refuse_inference_mode("gradient_penalty")
    with torch.enable_grad():
        alpha = torch.rand(real.shape[0], 1, dtype=real.dtype, device=real.device)  # (N, 1), one mix per sample
        x_hat = (alpha * real.detach() + (1 - alpha) * fake.detach()).requires_grad_(True)  # (N, D)
        scores = critic(x_hat)                                    # (N, 1)
        if scores.requires_grad:  # zeros where the critic does not use x_hat (materialize_grads)
            (g,) = torch.autograd.grad(scores.sum(), x_hat, create_graph=True, materialize_grads=True)  # (N, D)
        else:  # a critic that has no graph at all: its gradient is 0 too
            g = torch.zeros_like(x_hat)
        return ((g.norm(dim=1) - 1) ** 2).mean()
# --8<-- [end:penalty]
