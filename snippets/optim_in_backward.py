"""An optimizer step inside backward, with ``register_post_accumulate_grad_hook``.

The hook of a parameter fires right after its gradient has been accumulated into ``.grad``
during ``backward()``. Stepping that parameter there and freeing its ``.grad`` means the
gradients of all parameters are never held at the same time: the peak of gradient memory is
one parameter's gradient instead of all of them. ``GradBytes`` counts that peak exactly
(bytes of ``.grad`` tensors alive when each gradient lands), which is deterministic; process
memory is not measured here.
"""

import inspect
import math

import torch

from snippets.guards import require_module


def _check_model(model):
    require_module(model, loose_tensors=True)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("model has no parameter that requires grad: pass a module with one (a frozen "
                         "layer's parameters need p.requires_grad_() first)")
    return params


def _check_maker(make_optimizer, p):
    if isinstance(make_optimizer, torch.optim.Optimizer) or not callable(make_optimizer):
        raise TypeError("make_optimizer must be a function of a parameter list, e.g. "
                        f"lambda ps: torch.optim.SGD(ps, lr=0.1); got {type(make_optimizer).__name__}")
    opt = make_optimizer([p])
    if not isinstance(opt, torch.optim.Optimizer):
        raise TypeError(f"make_optimizer must return a torch.optim.Optimizer, got {type(opt).__name__}")
    got = [q for group in opt.param_groups for q in group["params"]]
    if len(got) != 1 or got[0] is not p:
        raise ValueError("make_optimizer must build its optimizer over the list it is given, e.g. "
                         f"lambda ps: torch.optim.SGD(ps, lr=0.1); given one parameter, it built one over "
                         f"{len(got)} tensor(s){'' if len(got) != 1 else ', another one'}")
    closure = inspect.signature(opt.step).parameters.get("closure")
    if closure is not None and closure.default is inspect.Parameter.empty:
        raise ValueError(f"{type(opt).__name__}.step needs a closure that computes the loss again, which "
                         "a hook inside backward cannot run: use an optimizer whose step needs none, "
                         "such as SGD or AdamW")
    lr = float(opt.param_groups[0].get("lr", 0.0))
    if not math.isfinite(lr):
        raise ValueError(f"the optimizer's lr is {lr}: every step would make the parameters NaN")


# --8<-- [start:in_backward]
def step_in_backward(model, make_optimizer, step_if=None):
    """Give each parameter its own optimizer, stepped by a post-accumulate-grad hook.

    ``make_optimizer(params)`` builds an optimizer, e.g. ``lambda ps: torch.optim.SGD(ps, lr=0.1)``.
    After ``loss.backward()`` every parameter is updated and every ``.grad`` is None.
    ``step_if()``, if given, is asked in each hook: when it returns False the hook neither
    steps nor frees, so ``.grad`` accumulates (a micro-batch that is not the last one); a
    parameter that the stepping micro-batch's backward does not reach is not stepped, and
    keeps its ``.grad``. Returns the hook handles; ``h.remove()`` each to go back to ordinary steps.
    """
    params = _check_model(model)
    _check_maker(make_optimizer, params[0])
    if step_if is not None and not callable(step_if):
        raise TypeError("step_if must be a function of no arguments that returns True on the "
                        f"micro-batch that should step, got {type(step_if).__name__}")
    optimizers = {p: make_optimizer([p]) for p in params}

    def hook(p):                       # called with the parameter, after p.grad is final
        if step_if is not None and not step_if():
            return                     # not the last micro-batch: keep accumulating
        optimizers[p].step()
        optimizers[p].zero_grad(set_to_none=True)   # free this gradient now

    return [p.register_post_accumulate_grad_hook(hook) for p in params]
# --8<-- [end:in_backward]


# --8<-- [start:grad_bytes]
class GradBytes:
    """Peak bytes of ``.grad`` tensors alive at once, sampled each time a gradient lands.

    Attach it *before* ``step_in_backward`` (hooks of one tensor run in registration
    order), so it counts the new gradient before the step frees it. A sparse gradient
    (``nn.Embedding(sparse=True)``) counts at its dense size, not at the bytes it holds.
    """

    def __init__(self, model):
        self.params = _check_model(model)
        self.peak = 0
        self.handles = [p.register_post_accumulate_grad_hook(self._sample) for p in self.params]

    def alive(self):
        return sum(p.grad.numel() * p.grad.element_size() for p in self.params if p.grad is not None)

    def _sample(self, _param):
        self.peak = max(self.peak, self.alive())
# --8<-- [end:grad_bytes]
