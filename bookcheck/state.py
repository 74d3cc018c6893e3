"""Torch global state: every piece a block could change and a later block notice.

Each entry is read by ``read`` and put back by ``reset``: a state that is checked is also
reset (a test asserts the two tables have the same keys).
"""

from __future__ import annotations

import functools
import random
import sys


def _opts():
    import torch

    # torch has a setter for its print options (torch.set_printoptions) and no public getter:
    # they are read from the object the setter writes (tests/test_bookcheck.py fails, naming
    # it, when torch no longer has it).
    o = torch._tensor_str.PRINT_OPTS
    return (o.precision, o.threshold, o.edgeitems, o.linewidth, o.sci_mode)


def _readers():
    import torch
    import torch.utils.deterministic as det

    return {
        "grad mode (torch.is_grad_enabled())": torch.is_grad_enabled,
        "inference mode": torch.is_inference_mode_enabled,
        "anomaly mode": torch.is_anomaly_enabled,
        "anomaly check_nan": torch.is_anomaly_check_nan_enabled,
        "deterministic algorithms": torch.are_deterministic_algorithms_enabled,
        "deterministic warn_only": torch.is_deterministic_algorithms_warn_only_enabled,
        "fill_uninitialized_memory": lambda: det.fill_uninitialized_memory,
        "cudnn.deterministic": lambda: torch.backends.cudnn.deterministic,
        "cudnn.benchmark": lambda: torch.backends.cudnn.benchmark,
        "default dtype": torch.get_default_dtype,
        "threads": torch.get_num_threads,
        "print options": _opts,
        "autocast (cpu)": lambda: torch.is_autocast_enabled("cpu"),
        "autocast dtype (cpu)": lambda: torch.get_autocast_dtype("cpu"),
        "default device": torch.get_default_device,
    }


def _writers():
    import torch
    import torch.utils.deterministic as det

    def anomaly(base):
        torch.autograd.set_detect_anomaly(base["anomaly mode"], base["anomaly check_nan"])

    def deterministic(base):
        torch.use_deterministic_algorithms(base["deterministic algorithms"], warn_only=base["deterministic warn_only"])

    def fill(base):
        det.fill_uninitialized_memory = base["fill_uninitialized_memory"]

    def cudnn_det(base):
        torch.backends.cudnn.deterministic = base["cudnn.deterministic"]

    def cudnn_bench(base):
        torch.backends.cudnn.benchmark = base["cudnn.benchmark"]

    def print_options(base):
        torch.set_printoptions(profile="default")
        torch.set_printoptions(sci_mode=base["print options"][4])

    def inference(base):
        # inference mode is a thread-local guard: a block that entered it without leaving
        # is left by entering the opposite mode's guard for good (torch has no setter).
        if torch.is_inference_mode_enabled() != base["inference mode"]:
            _leave_inference(base["inference mode"])

    def device(base):
        # None is torch's own starting state, whatever a block set: set_default_device("cpu")
        # enters a function mode that every torch call then goes through (and a compiled
        # function's trace shows), though the device reads the same. A mode this cannot clear
        # (one a block displaced inside `with torch.device(...)`) shows in state_leaks after the
        # reset when its device differs from the baseline's, and the worker is replaced
        # (worker._serve); one of the baseline's own device reads the same and is not seen
        torch.set_default_device(None if base["default device"].type == "cpu" else base["default device"])

    def autocast(base):
        if torch.is_autocast_enabled("cpu") != base["autocast (cpu)"]:
            torch.set_autocast_enabled("cpu", base["autocast (cpu)"])

    return {
        # called, torch.set_grad_enabled sets the mode (its use as a context manager restores it)
        "grad mode (torch.is_grad_enabled())": lambda b: torch.set_grad_enabled(b["grad mode (torch.is_grad_enabled())"]),
        "inference mode": inference,
        "anomaly mode": anomaly,
        "anomaly check_nan": anomaly,
        "deterministic algorithms": deterministic,
        "deterministic warn_only": deterministic,
        "fill_uninitialized_memory": fill,
        "cudnn.deterministic": cudnn_det,
        "cudnn.benchmark": cudnn_bench,
        "default dtype": lambda b: torch.set_default_dtype(b["default dtype"]),
        "threads": lambda b: torch.set_num_threads(b["threads"]),
        "print options": print_options,
        "autocast (cpu)": autocast,
        "autocast dtype (cpu)": lambda b: torch.set_autocast_dtype("cpu", b["autocast dtype (cpu)"]),
        "default device": device,
    }


_KEPT = []  # inference-mode guards entered to undo a block's leaked one


def _leave_inference(enabled):
    import torch

    guard = torch.inference_mode(enabled)
    guard.__enter__()
    _KEPT.append(guard)


def torch_state() -> dict:
    return {name: read() for name, read in _readers().items()}


@functools.lru_cache(maxsize=1)
def baseline_state() -> dict:
    return torch_state()


def reset_torch_state(seed: int) -> None:
    """Put torch back to the baseline and seed every RNG a block might use."""
    import numpy
    import torch

    base = baseline_state()
    done = set()
    for write in _writers().values():
        if write not in done:
            write(base)
            done.add(write)
    # torch.compile's caches: a graph compiled by an earlier block is not reused, and its
    # entries do not count toward the recompile limit of a later block's function.
    if "torch._dynamo" in sys.modules:  # imported by torch.compile; not imported here otherwise
        torch.compiler.reset()
    # A warning torch's C++ code gives once per process would reach only the first block of the
    # worker that triggers it; a reader who runs a later block alone sees it, so every block is
    # shown it. Not a state a block is checked for: a reader's torch starts with it off.
    torch.set_warn_always(True)
    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)


def state_leaks() -> list[str]:
    now, base = torch_state(), baseline_state()
    return [f"{k}: {base[k]!r} -> {now[k]!r}" for k in base if now[k] != base[k]]
