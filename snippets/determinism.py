"""Seeding and a run-twice check.

``seed_everything(seed)`` seeds Python's ``random``, NumPy's global generator and torch's
default generator (which also seeds CUDA generators when CUDA is present).
``seed_worker`` and ``loader_generator`` make DataLoader workers reproducible.
``run_twice(train, seed)`` runs a training function twice from the same seed and returns the
largest absolute difference between the two runs' tensors: 0.0 means equal element for element.

Invariant: ``run_twice`` and ``deterministic_algorithms`` leave the process as they found it
(RNG states of random, NumPy and torch; the deterministic-algorithms flags; the
``fill_uninitialized_memory`` flag).
"""

# --8<-- [start:seed]
import random
from contextlib import contextmanager

import numpy as np
import torch
import torch.utils.deterministic


def seed_everything(seed):
    """Seed random, NumPy and torch (CPU and, if present, CUDA) with one integer."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be a Python int, got {type(seed).__name__} {seed!r}: pass an int such "
                        "as 0 (int(seed) for a NumPy integer)")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an int in [0, 2**32), as NumPy requires; got {seed!r}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # seeds every device's default generator


def seed_worker(worker_id):
    """DataLoader worker_init_fn: derive random's and NumPy's seeds from the worker's torch seed."""
    worker_seed = torch.initial_seed() % 2**32  # set by the loader: base_seed + worker_id
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def loader_generator(seed):
    """A generator to pass as DataLoader(generator=...): fixes shuffling and worker seeds."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {seed!r}")
    if not -2**63 <= seed < 2**64:  # torch's range; outside it manual_seed overflows
        raise ValueError(f"seed must be in torch's range of seeds, -2**63 to 2**64 - 1; got {seed}")
    g = torch.Generator()
    g.manual_seed(seed)
    return g
# --8<-- [end:seed]


# --8<-- [start:run_twice]
from snippets.views import is_nested


@contextmanager
def rng_preserved():
    """Restore the states of random, NumPy and torch's CPU generator on exit."""
    py, nps, th = random.getstate(), np.random.get_state(), torch.get_rng_state()
    try:
        yield
    finally:
        random.setstate(py)
        np.random.set_state(nps)
        torch.set_rng_state(th)


@contextmanager
def deterministic_algorithms(warn_only=False):
    """``torch.use_deterministic_algorithms(True)`` inside the block; the old flags after it."""
    old = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.utils.deterministic.fill_uninitialized_memory,
    )
    try:
        torch.use_deterministic_algorithms(True, warn_only=warn_only)  # a bad warn_only raises here
        yield
    finally:
        torch.use_deterministic_algorithms(old[0], warn_only=old[1])
        torch.utils.deterministic.fill_uninitialized_memory = old[2]


_SPARSE = (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc)


def _comparable(t):
    """t as run_twice compares it: a sparse tensor densified; a nested tensor refused."""
    if t.layout in _SPARSE:
        return t.to_dense()
    if is_nested(t):
        raise TypeError("train() returned a nested tensor, whose two runs cannot be compared as one "
                        "shape: return its tensors, list(t.unbind())")
    return t


def run_twice(train, seed):
    """Seed, run ``train()``, seed again, run it again; return the max abs difference.

    ``train`` takes no argument and returns a list of tensors (e.g. the trained parameters).
    The result is a float: 0.0 when the two runs agree element for element (an infinity in
    both agrees; 0.0 and -0.0 count as equal), nan if a run produced a NaN. RNG states are
    restored afterwards.
    """
    if not callable(train):
        raise TypeError(f"train must be a function of no arguments; got {type(train).__name__}")
    with rng_preserved():
        runs = []
        for _ in range(2):
            seed_everything(seed)
            out = train()
            if isinstance(out, torch.Tensor):
                out = [out]
            elif hasattr(out, "__iter__") and not isinstance(out, (str, bytes, dict)):
                out = list(out)                        # a list, a tuple, model.parameters()
            if not isinstance(out, list) or not out:
                raise TypeError("train() must return a non-empty list of tensors, e.g. "
                                "[p.detach() for p in model.parameters()]; got "
                                + ("an empty list" if isinstance(out, list) else type(out).__name__))
            bad = next((i for i, t in enumerate(out) if not isinstance(t, torch.Tensor)), None)
            if bad is not None:
                advice = ("None (the .grad of a parameter that got no gradient is None): "
                          "leave it out" if out[bad] is None else
                          f"a {type(out[bad]).__name__}: return torch.tensor(values) for numbers")
                raise TypeError(f"train() must return tensors only; its element {bad} is {advice}")
            runs.append([_comparable(t).detach().clone() for t in out])
    first, second = runs
    if [t.shape for t in first] != [t.shape for t in second]:
        raise ValueError("the two runs returned tensors of different shapes; train() must be a fixed computation")
    diffs = [_max_abs_diff(a, b) for a, b in zip(first, second)]
    return float("nan") if any(d != d for d in diffs) else max(diffs)


def _max_abs_diff(a, b):
    """0.0 only if every element is equal (inf - inf is NaN: equal elements give 0); a complex
    tensor compares both parts, and unequal elements count at least float64's tiny (int64
    values past 2**53 that round to one float64)."""
    if a.numel() == 0:
        return 0.0
    if a.is_complex():
        a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
    d = (a.double() - b.double()).abs().clamp(min=torch.finfo(torch.float64).tiny)
    return torch.where(a == b, 0.0, d).max().item()
# --8<-- [end:run_twice]
