"""Where page blocks run: worker processes, never the process that runs the checks.

The test process holds threads of its own (the browser client, the background build's pipes,
pytest's capture), and a block's output and warnings are caught per process
(``contextlib.redirect_stdout``, ``warnings.catch_warnings``), which is only sound where nothing
else runs. So a chain of blocks runs in a worker: a fresh interpreter started with
multiprocessing's ``spawn`` (never a fork of a process with threads), which imports torch
once and then runs chain after chain, each in a fresh namespace after
``reset_torch_state`` (bookcheck.run.run_recorded). What comes back is text: each block's
output or error message, and for the first seed what each checked diagram's code generates.

There are two workers, one per kind of CPU kernel: ``"machine"``, the kernels torch picks for
this CPU (as a reader's torch does for theirs), and ``"plain"``, torch's plain C++ kernels
without vector instructions (``ATEN_CPU_CAPABILITY=default``) and MKL's code path for any x86-64
CPU (``MKL_CBWR=COMPATIBLE``, MKL's documented conditional numerical reproducibility mode; torch's
CPU build does float32 and float64 matrix products in MKL), both set before the worker imports
torch: PLAIN_ENVIRONMENT. The first seed runs on the first, the second seed on the second
(bookcheck.run.RUNS), so the seed check also proves that an output depends neither on the
order in which this CPU adds floats nor on the BLAS kernel MKL picks for it, without running
any block a third time.

Why both: on an Intel Xeon with AVX-512, MKL's AVX-512 matrix product and its path on an AMD
EPYC with AVX-512 round differently (a float32 central difference of the 02-gradient-check
notebook printed -0.506639 on the first and -0.512600 on the second). On the EPYC, every
setting tried (ATEN_CPU_CAPABILITY=default; MKL_CBWR=COMPATIBLE, AVX2 or AVX512, which MKL
ignores on that CPU but COMPATIBLE; MKL_ENABLE_INSTRUCTIONS=SSE4_2, AVX or AVX2; one thread)
printed -0.512600, and MKL_VERBOSE showed "CNR:COMPATIBLE" only for COMPATIBLE, so that is
the setting that moves the Xeon onto the path other CPUs take; torch's own reductions (a sum,
a mean) change with ATEN_CPU_CAPABILITY (an accumulation difference printed 0.0e+00 on one
kernel and 2.4e-07 on the other, on both machines). One chain runs at
a time: two workers at once on two cores took longer than one (each worker's torch uses every
core already).

A chain that kills its worker (a crash in C code, ``os._exit``) fails, saying so; the next
chain gets a new worker. So does the chain after one that left torch's state other than the
baseline even after the reset (``_serve``'s ``spoiled``): no chain inherits what another left.
A block that itself checks a page (``bookcheck.check.check_page``, on the page about
verification) runs that page's chains in its own process, in place.

A worker is a ``multiprocessing`` Process and a Pipe, driven from the test process's one thread:
a chain is sent, its result received; no thread, pool or queue runs in the test process. Work
that runs beside the page checks (the site's build and browser pass, the notebooks, other
Pythons, the PDF, the second torch) is a step of its own, a process that make runs side by side
(the Makefile's ``test`` target; bookcheck.steps), not work inside this session.
"""

from __future__ import annotations

import multiprocessing
import os
import sys

KERNELS = ("machine", "plain")
_IN_WORKER: str | None = None  # in a worker: its kernels
_WORKERS: dict = {}  # kernels -> (Process, Connection)


# The second configuration's environment (read once by torch at its first dispatch, and by MKL
# at its first call): torch's kernels without vector instructions, MKL's path for any x86-64 CPU.
PLAIN_ENVIRONMENT = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
# Each worker's hash seed, read as its interpreter starts: a reader's process draws one afresh,
# so the order of a set of strings can differ between the two workers, as between two readers; a
# block that prints one fails when these two seeds order it differently, and then on every run
# (drawn seeds would fail it on some runs only). Some small sets come out alike under both.
HASH_SEEDS = {"machine": "1", "plain": "2"}


def _started(kernels: str, start_method: str) -> None:
    global _IN_WORKER
    _IN_WORKER = kernels
    if kernels == "plain":
        os.environ.update(PLAIN_ENVIRONMENT)
        if os.environ.get("TORCHINDUCTOR_CACHE_DIR"):  # kernels compiled for the vector ISA do not load here
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "plain")
    # A spawned interpreter makes spawn its default; a reader's script has the platform's
    # default (a DataLoader with workers pickles nothing under fork, everything under spawn).
    multiprocessing.set_start_method(start_method, force=True)
    import torch

    if kernels == "plain" and torch.backends.cpu.get_cpu_capability() != "DEFAULT":
        raise RuntimeError(f"ATEN_CPU_CAPABILITY=default did not reach torch: {torch.backends.cpu.get_cpu_capability()}")
    os.environ.pop("PYTHONHASHSEED", None)  # read at start-up; a process a block starts draws its own


def _serve(connection, kernels: str, start_method: str) -> None:
    """A worker's loop: run each call it receives, send back ("ok", result, spoiled) or ("error",
    exc, spoiled); ``spoiled``: torch's state still differs from the baseline after the chain's
    reset (a block left something the reset cannot undo), so the test process replaces this worker
    rather than let the next chain inherit it."""
    from .state import state_leaks

    _started(kernels, start_method)
    while True:
        try:
            fn, args = connection.recv()
        except EOFError:  # the test process ended
            return
        try:
            result = ("ok", fn(*args))
        except BaseException as exc:  # noqa: BLE001 - raised again in the test process
            result = ("error", exc)
        spoiled = "torch" in sys.modules and bool(state_leaks())
        try:
            connection.send((*result, spoiled))
        except Exception as exc:  # noqa: BLE001 - a result that does not pickle: say what it was
            connection.send(("error", RuntimeError(f"the worker's result could not be sent back: "
                                                   f"{type(exc).__name__}: {exc}"), spoiled))


def _worker(kernels: str):
    if kernels not in _WORKERS:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(target=_serve, args=(theirs, kernels, multiprocessing.get_start_method()),
                                  name=f"blocks-{kernels}")  # not a daemon: a block may start processes
        kept = os.environ.get("PYTHONHASHSEED")
        os.environ["PYTHONHASHSEED"] = HASH_SEEDS[kernels]  # the child's environment is this one's
        try:
            process.start()
        finally:
            if kept is None:
                del os.environ["PYTHONHASHSEED"]
            else:
                os.environ["PYTHONHASHSEED"] = kept
        if not _WORKERS:
            import atexit

            atexit.register(stop)
        theirs.close()
        _WORKERS[kernels] = (process, ours)
    return _WORKERS[kernels]


def _drop(kernels: str) -> None:
    process, connection = _WORKERS.pop(kernels, (None, None))
    if process is not None:
        connection.close()
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
            process.join()


class WorkerDied(RuntimeError):
    pass


def call(kernels: str, fn, *args):
    """``fn(*args)`` in the worker of ``kernels`` (here, when this process is itself a worker):
    ``fn`` and its arguments are pickled, so ``fn`` is a module's function. Raises what ``fn``
    raised, or WorkerDied if the worker ended (the next call starts a new one)."""
    if kernels not in KERNELS:
        raise ValueError(f"kernels={kernels!r}: pass one of {KERNELS}")
    if _IN_WORKER:
        return fn(*args)
    process, connection = _worker(kernels)
    try:
        connection.send((fn, args))
        status, value, spoiled = connection.recv()
    except (EOFError, BrokenPipeError, ConnectionResetError) as exc:
        process.join(timeout=10)
        _drop(kernels)
        raise WorkerDied(f"exit code {process.exitcode}") from exc
    if spoiled:  # the next chain gets a new worker, not what this one's reset could not undo
        _drop(kernels)
    if status == "error":
        raise value
    return value


def stop() -> None:
    """Stop the workers (the test session's end); the next chain starts new ones."""
    for kernels in list(_WORKERS):
        _drop(kernels)
