"""A first-step gradient check: which parameters did the first backward leave without a usable gradient?

Run it once on a new architecture, after the first ``loss.backward()`` and before
``optimizer.zero_grad()`` (which, by default since PyTorch 2.0, sets every ``.grad`` to None).
"""

import torch

from snippets.guards import require_module


def report_dead_grads(model):
    """Return ``{parameter name: why}`` for every parameter with no usable gradient.

    ``why`` is one of
      ``"frozen"``    requires_grad is False: it will never get a gradient (intended?);
      ``"None"``      it requires grad, but no gradient reached it: it is not in the loss's
                      graph (a .detach(), an .item(), a branch the loss does not use);
      ``"zero"``      a gradient reached it and every element is 0;
      ``"nonfinite"`` the gradient holds nan or inf.
    An empty dict means every trainable parameter received a finite, nonzero gradient (an
    empty parameter that a gradient reached is not reported; a sparse gradient is read by its
    values).
    Each ``.grad`` has its parameter's shape; this function only reads it.
    """
    require_module(model)
    params = list(model.named_parameters())
    if not params:
        raise ValueError("the model has no parameters: pass the module you train")
    trainable = [p for _, p in params if p.requires_grad]
    if trainable and all(p.grad is None for p in trainable):
        raise RuntimeError(
            "no trainable parameter has a .grad: call this after loss.backward() and before "
            "optimizer.zero_grad() (which sets .grad to None); if you did, the loss does not "
            "depend on this model at all"
        )
    dead = {}
    for name, p in params:
        if not p.requires_grad:
            dead[name] = "frozen"
        elif p.grad is None:
            dead[name] = "None"
        elif p.numel() == 0:
            continue  # an empty parameter has nothing to learn
        else:
            g = p.grad.coalesce().values() if p.grad.is_sparse else p.grad  # Embedding(sparse=True)
            if not torch.isfinite(g).all():
                dead[name] = "nonfinite"
            elif not g.any():
                dead[name] = "zero"
    return dead
