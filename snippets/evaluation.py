"""Evaluate a model without recording graphs and without training-mode layers.

Evaluation needs two independent switches: ``model.eval()`` (dropout off, batch norm uses its
running statistics and stops updating them) and a mode that records no graph
(``torch.inference_mode()``). ``evaluating(model)`` turns both on for a block and puts every
submodule back in the mode it was in, so a model that was training trains again afterwards,
and a submodule kept in eval mode on purpose (a frozen batch norm) stays in eval mode.

``tracking_profile`` measures, for one forward pass, what each way of "turning tracking off"
changes: it is the evidence behind the side-by-side table of the book.
"""

from contextlib import contextmanager

import torch

from snippets.guards import BATCH_NORMS, require_module
from snippets.saved_bytes import track_saved


def _check_module(model):
    require_module(model)
    lazy = (torch.nn.parameter.UninitializedParameter, torch.nn.parameter.UninitializedBuffer)
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        if isinstance(t, lazy):   # created at the first forward: inside, an inference tensor
            raise ValueError(f"model has a lazy layer whose {name} is not created yet: run one forward "
                             "pass outside inference mode first (made inside, it would never train)")


# --8<-- [start:evaluate]
@contextmanager
def evaluating(model):
    """Inside the block: ``model`` in eval mode and ``torch.inference_mode()`` on.

    On exit (also on an exception) every submodule gets back its own previous ``training``
    flag, and grad mode is what it was. Outputs made inside are inference tensors: use them
    for metrics, not as inputs to a later training step (clone them first if you must).
    """
    _check_module(model)
    previous = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode():
            yield model
    finally:
        for module, was_training in previous:
            module.training = was_training


def evaluate(model, batches):
    """Run ``model`` on each batch under ``evaluating(model)``; return the outputs concatenated.

    ``batches``: an iterable of input tensors of shapes (B_i, ...), all with the same trailing
    shape. Returns a tensor of shape (sum of B_i, ...) with no graph and no ``grad_fn``.
    """
    _check_module(model)
    if isinstance(batches, torch.Tensor):
        raise TypeError(
            f"batches is one tensor of shape {tuple(batches.shape)}: pass an iterable of batches, "
            "e.g. [X] for a single batch or X.split(64) for batches of 64 rows"
        )
    outputs = []
    with evaluating(model):
        for i, batch in enumerate(batches):
            if not isinstance(batch, torch.Tensor):
                raise TypeError(
                    f"batch {i} is a {type(batch).__name__}; pass input tensors only "
                    "(e.g. (x for x, y in loader))"
                )
            out = model(batch)
            if not isinstance(out, torch.Tensor) or out.dim() == 0:
                what = type(out).__name__ if not isinstance(out, torch.Tensor) else "a 0-d tensor"
                raise TypeError(
                    f"model returned {what} for batch {i}; evaluate joins the outputs along their "
                    "first dimension: wrap the model to return one tensor of shape (B, ...)"
                )
            outputs.append(out)
    if not outputs:
        raise ValueError("batches is empty: pass at least one input tensor")
    with torch.inference_mode():
        return torch.cat(outputs)
# --8<-- [end:evaluate]


HOWS = ("grad", "no_grad", "inference_mode", "detach", "eval", "eval+inference_mode")


def _forward(model, x, how):
    if how == "no_grad":
        with torch.no_grad():
            return model(x)
    if how in ("inference_mode", "eval+inference_mode"):
        with torch.inference_mode():
            return model(x)
    if how == "detach":
        return model(x).detach()
    return model(x)  # "grad" (train mode) and "eval" (eval mode), grad mode on


def tracking_profile(model, x, how):
    """What one forward pass of ``model`` on ``x`` does under ``how``, measured.

    ``how``: "grad" (train mode, grad mode on), "no_grad", "inference_mode", "detach" (train
    mode, output detached), "eval" (eval mode, grad mode on) or "eval+inference_mode" (what
    ``evaluating`` does). ``model`` should contain a
    ``Dropout`` and a ``BatchNorm`` layer; its parameters, buffers and modes are restored
    afterwards. Returns a dict:

    - ``saves``: tensors saved for backward during the forward (pack-hook calls);
    - ``kept_bytes``: bytes of saved tensors still alive while the output is held;
    - ``requires_grad``: of the output;
    - ``params_require_grad``: of every parameter, during the pass;
    - ``dropout_active``: two passes on the same input differ;
    - ``bn_stats_move``: the running mean of the first batch norm changed;
    - ``version_counter``: the output has one (inference tensors have none);
    - ``joins_graph``: ``out * w`` can be differentiated for a ``w`` that requires grad
      (computed with ``torch.autograd.grad``, so no ``.grad`` of the model is touched).
    """
    _check_module(model)
    if how not in HOWS:
        raise ValueError(f"how must be one of {HOWS}; got {how!r}")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be an input tensor; got {type(x).__name__}")
    dropouts = (torch.nn.Dropout, torch.nn.Dropout1d, torch.nn.Dropout2d, torch.nn.Dropout3d,
                torch.nn.AlphaDropout, torch.nn.FeatureAlphaDropout)
    norms = [m for m in model.modules() if isinstance(m, BATCH_NORMS)]
    if not norms or not any(isinstance(m, dropouts) for m in model.modules()):
        raise ValueError("model needs a BatchNorm layer and a Dropout layer to show their modes")
    if norms[0].running_mean is None:
        raise ValueError("the model's first batch norm keeps no running statistics "
                         "(track_running_stats=False): pass one that does, to measure whether they move")
    if not torch.isfinite(x).all():   # NaN * 0 is NaN: a dropped entry would not show
        raise ValueError("x holds NaN or inf, through which dropout cannot be seen: pass a finite batch")
    if x.numel() == 0:
        raise ValueError(f"x is empty, shape {tuple(x.shape)}: every measurement would read 'unchanged'; "
                         "pass a batch")
    state = {k: v.clone() for k, v in model.state_dict().items()}
    modes = [(m, m.training) for m in model.modules()]
    model.train(how not in ("eval", "eval+inference_mode"))
    try:
        before = norms[0].running_mean.clone()
        during = []  # the parameters' flags, read inside the construct, where it is in effect
        hook = model.register_forward_hook(
            lambda module, args, output: during.append(all(p.requires_grad for p in module.parameters())))
        try:
            with track_saved(exclude=list(model.parameters())) as saved:
                out = _forward(model, x, how)
        finally:
            hook.remove()
        if not torch.isfinite(out).all():   # a NaN the model made: dropout cannot be seen through it
            raise ValueError("the model's output holds NaN or inf, through which dropout cannot be seen: "
                             "measure a model whose output is finite")
        result = {
            "saves": saved.calls,
            "kept_bytes": saved.alive_bytes(),
            "requires_grad": out.requires_grad,
            "params_require_grad": during[0],
            "bn_stats_move": not torch.equal(before, norms[0].running_mean),
            "dropout_active": not torch.equal(out, _forward(model, x, how)),
        }
        try:
            out._version
            result["version_counter"] = True
        except RuntimeError:  # "Inference tensors do not track version counter."
            result["version_counter"] = False
        w = torch.ones(out.shape[-1], requires_grad=True)
        try:
            torch.autograd.grad((out * w).sum(), w)
            result["joins_graph"] = True
        except RuntimeError:  # "Inference tensors cannot be saved for backward."
            result["joins_graph"] = False
        return result
    finally:
        with torch.no_grad():
            model.load_state_dict(state)
        for module, was_training in modes:
            module.training = was_training
