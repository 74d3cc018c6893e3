"""A gradient recipe to copy: an accumulation loop with 1/k scaling.

``accumulate_gradients`` fills ``.grad`` with the gradient of the full batch's mean loss,
computed from ``k`` equal micro-batches, so that one optimizer step after it is the step a
single full-batch backward would give. (The seed set-up recipe is snippets/determinism.py.)
"""

# --8<-- [start:accumulation]
import torch


def accumulate_gradients(model, loss_fn, inputs, targets, k):
    """Backward over ``k`` micro-batches; ``.grad`` ends equal to the full-batch gradient.

    inputs: (N, ...) and targets: (N, ...), with N divisible by k, so every micro-batch has
    N / k rows. loss_fn(prediction, target) must return the *mean* loss of its micro-batch
    (a 0-d tensor), as nn losses do by default. Each micro-batch loss is scaled by 1/k
    before backward: the mean of k equal-sized means is the full-batch mean. Existing
    gradients are cleared first. Returns the full-batch mean loss as a Python float.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}: pass the model itself")
    if not isinstance(inputs, torch.Tensor) or not isinstance(targets, torch.Tensor):
        raise TypeError("inputs and targets must be tensors (N, ...): pass the whole batch, not a loader")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive int (the number of micro-batches), got {k!r}")
    if inputs.shape[0] != targets.shape[0]:
        raise ValueError(
            f"inputs has {inputs.shape[0]} rows and targets {targets.shape[0]}: pass matching batches"
        )
    if inputs.shape[0] % k != 0:
        raise ValueError(
            f"N = {inputs.shape[0]} is not divisible by k = {k}: with unequal micro-batches the "
            "1/k scaling no longer gives the full-batch mean; pick k dividing N"
        )
    model.zero_grad(set_to_none=True)
    total = 0.0
    for x_mb, y_mb in zip(inputs.chunk(k), targets.chunk(k)):  # each (N/k, ...)
        loss = loss_fn(model(x_mb), y_mb)
        if loss.dim() != 0:
            raise ValueError(
                f"loss_fn returned shape {tuple(loss.shape)}: it must return the mean loss, a 0-d tensor"
            )
        (loss / k).backward()  # .grad += (1/k) * d(micro-batch mean)/d(param)
        total += loss.item() / k  # a float: no graph is kept alive
    return total
# --8<-- [end:accumulation]
