"""A gradient recipe to copy: an accumulation loop with 1/k scaling.

``accumulate_gradients`` fills ``.grad`` with the gradient of the full batch's mean loss,
computed from ``k`` equal micro-batches, so that one optimizer step after it is the step a
single full-batch backward would give. (The seed set-up recipe is snippets/determinism.py.)
"""

# --8<-- [start:accumulation]
import math

import torch

from snippets.guards import batch_statistics_layer, require_module


def accumulate_gradients(model, loss_fn, inputs, targets, k):
    """Backward over ``k`` micro-batches; ``.grad`` ends equal to the full-batch gradient.

    inputs: (N, ...) and targets: (N, ...), with N >= 1 divisible by k, so every micro-batch
    has N / k rows. loss_fn(prediction, target) must return the *mean* loss of its micro-batch
    (a 0-d tensor), as nn losses do by default. Each micro-batch loss is scaled by 1/k
    before backward: the mean of k equal-sized means is the full-batch mean. Existing
    gradients are cleared first. Returns the full-batch mean loss as a Python float.
    Refused before any forward, for k > 1: a model with a BatchNorm layer that normalises with
    its batch's statistics (training mode, or no running statistics), since each micro-batch
    would get its own mean and variance. Checked at the end: loss_fn on all N predictions
    gives that same mean, to the precision of the loss's dtype (a sum-reduced loss, a
    class-weighted or ignore_index mean, a micro-batch whose targets are all ignored, whose
    mean is nan, or a target that broadcasts against the prediction, does not; .grad is then
    cleared). Not detected: a layer that mixes rows along dim 0 other than BatchNorm, such as
    an RNN or attention layer left at batch_first=False, for which dim 0 is time; splitting
    it splits the sequence (build such layers with batch_first=True).
    """
    require_module(model)
    if not isinstance(inputs, torch.Tensor) or not isinstance(targets, torch.Tensor):
        raise TypeError("inputs and targets must be tensors (N, ...): pass the whole batch, not a loader")
    if not isinstance(k, int) or isinstance(k, bool):
        raise ValueError(f"k must be a positive int (the number of micro-batches), got {k!r}: "
                         "pass a Python int")
    if k < 1:
        raise ValueError(f"k must be a positive int (the number of micro-batches), got {k!r}: pick k >= 1")
    if not torch.is_grad_enabled():
        raise RuntimeError("accumulate_gradients runs backward: call it outside torch.no_grad() "
                           "and torch.inference_mode()")
    if not any(True for _ in model.parameters()):
        raise ValueError("model has no parameters: there is nothing to accumulate gradients into")
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError("model has no parameter that requires grad: unfreeze the ones to train "
                         "(p.requires_grad_(True))")
    if inputs.dim() == 0 or inputs.shape[0] == 0:
        raise ValueError(f"inputs has shape {tuple(inputs.shape)}: pass a batch (N, ...) with N >= 1 rows")
    if targets.dim() == 0:
        raise ValueError("targets is 0-d: pass one target per row of inputs, shape (N, ...)")
    if inputs.shape[0] != targets.shape[0]:
        raise ValueError(
            f"inputs has {inputs.shape[0]} rows and targets {targets.shape[0]}: pass matching batches"
        )
    if inputs.shape[0] % k != 0:
        raise ValueError(
            f"N = {inputs.shape[0]} is not divisible by k = {k}: with unequal micro-batches the "
            "1/k scaling no longer gives the full-batch mean; pick k dividing N"
        )
    found = batch_statistics_layer(model) if k > 1 else None
    if found:
        name, layer = found
        raise ValueError(
            f"{'model.' + name if name else 'model'} ({type(layer).__name__}) normalises with the mean and "
            f"variance of its batch, and a micro-batch of {inputs.shape[0] // k} rows has other statistics "
            f"than the full batch of {inputs.shape[0]}: accumulation would not give the full-batch gradient. "
            "Pass k=1" + ("" if layer.running_mean is None else
                          ", or call model.eval() first if it should use its running statistics")
        )
    model.zero_grad(set_to_none=True)
    total, predictions = 0.0, []
    for x_mb, y_mb in zip(inputs.chunk(k), targets.chunk(k)):  # each (N/k, ...)
        prediction = model(x_mb)
        loss = loss_fn(prediction, y_mb)
        if loss.dim() != 0:
            raise ValueError(
                f"loss_fn returned shape {tuple(loss.shape)}: it must return the mean loss, a 0-d tensor"
            )
        (loss / k).backward()  # .grad += (1/k) * d(micro-batch mean)/d(param)
        total += loss.item() / k  # a float: no graph is kept alive
        predictions.append(prediction.detach())
    with torch.no_grad():
        whole = loss_fn(torch.cat(predictions), targets).item()  # the full batch's loss
    # a nan in both is the model's own (the guards name it); a nan in one of them is a mismatch;
    # both are rounded to the loss's dtype (bfloat16 keeps 8 bits: a tolerance of 1e-4 is too tight)
    tol = max(1e-4, 2 * torch.finfo(loss.dtype).eps)
    if (math.isfinite(total) or math.isfinite(whole)) and not math.isclose(total, whole, rel_tol=tol, abs_tol=1e-8):
        model.zero_grad(set_to_none=True)
        if math.isclose(whole, k * total, rel_tol=tol):
            why = "loss_fn sums over its rows: pass a mean loss (reduction='mean', the default)"
        elif not y_mb.is_floating_point() and y_mb.shape == predictions[0].shape[:1] + predictions[0].shape[2:]:
            why = ("loss_fn weights its rows (class weights or ignore_index, with class-index targets): its mean "
                   "divides by the total weight of each micro-batch's targets, which differs between micro-batches "
                   "(and is 0, a mean of nan, when every target of one is ignored); "
                   "accumulate by hand: each micro-batch's reduction='sum' loss divided by the full batch's total weight")
        elif predictions[0].shape != y_mb.shape:
            why = (f"the target {tuple(y_mb.shape)} broadcasts against the prediction "
                   f"{tuple(predictions[0].shape)}, comparing rows with other rows' targets: "
                   "give the target the prediction's shape")
        else:
            why = "loss_fn couples rows, so a sum of micro-batch losses cannot reproduce it"
        raise ValueError(
            f"loss_fn on the full batch gives {whole:.6g}, the mean of its {k} micro-batch losses "
            f"{total:.6g}: {why}"
        )
    return total
# --8<-- [end:accumulation]
