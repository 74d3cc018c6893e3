"""Gradient recipes to copy: an accumulation loop with 1/k scaling, and a seed set-up.

``accumulate_gradients`` fills ``.grad`` with the gradient of the full batch's mean loss,
computed from ``k`` equal micro-batches, so that one optimizer step after it is the step a
single full-batch backward would give. ``seed_everything`` seeds every random stream a
training script on CPU draws from and returns a generator for data shuffling.
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


# --8<-- [start:determinism]
import random

import numpy
import torch


def seed_everything(seed):
    """Seed Python's ``random``, NumPy's global generator and torch (CPU and, if present, CUDA).

    Returns a ``torch.Generator`` seeded with ``seed``: pass it to ``DataLoader(generator=...)``
    or ``torch.randperm(n, generator=...)`` so shuffling does not depend on how many random
    numbers other code drew first. Seeding fixes random streams only; it does not make
    nondeterministic kernels deterministic (see torch.use_deterministic_algorithms).
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an int in [0, 2**32), got {seed!r}; NumPy accepts no other")
    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator
# --8<-- [end:determinism]
