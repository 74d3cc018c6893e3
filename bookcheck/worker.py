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
chain gets a new worker. A block that itself checks a page (``bookcheck.check.check_page``, on
the page about verification) runs that page's chains in its own process, in place.

Work that a session starts early for tests that come later (the notebooks' executions, builds
on other Pythons, set-ups of venvs) runs at a lower priority (``in_background``): on two
cores it fills the time that the test running now leaves idle, instead of slowing that test.
The block workers run at the test process's priority, and so does the site's build and browser
pass (tests/site_check.py: a chain of jobs that the session's last tests wait for).

Every process the test process starts with subprocess is given its environment (``env=``, a
copy of os.environ): ``give_processes_their_environment``, below.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import subprocess
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

KERNELS = ("machine", "plain")
_IN_WORKER: str | None = None  # in a worker: its kernels
_POOLS: dict[str, ProcessPoolExecutor] = {}
_LOCK = threading.Lock()


BACKGROUND_NICE = 10


def in_background(work, *args, name: str = "early"):
    """Start ``work(*args)`` in a thread of its own at the background priority, and return its
    Future (its result, or the exception it raised). On Linux a thread has a nice value of its
    own and every process it starts inherits it; where a thread cannot have one, the work runs
    at the usual priority. The thread is a daemon: a session that ends first does not wait."""
    from concurrent.futures import Future

    future = Future()

    def run():
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
        except (AttributeError, OSError):
            pass
        try:
            future.set_result(work(*args))
        except BaseException as exc:  # noqa: BLE001 - the Future's reader raises it
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def environment() -> dict[str, str]:
    """A copy of os.environ, whole although another thread may be changing it meanwhile."""
    while True:
        try:
            return dict(os.environ)
        except (KeyError, RuntimeError):  # a variable removed, or added, while it was copied
            continue


def give_processes_their_environment() -> None:
    """From now on a process started with subprocess (Popen, run, asyncio's subprocesses) without
    ``env=`` gets ``env=environment()``: its environment is handed to exec, not read by exec from
    the C library's environment block.

    The test process starts processes from threads (in_background, the browser's thread, the
    notebooks' pools) while its main thread changes os.environ: pytest sets and removes
    PYTEST_CURRENT_TEST at every phase of every test, and tests set variables. On Linux,
    subprocess starts a process with vfork(), which shares the parent's memory until exec; a
    process started without ``env=`` has exec read the block that another thread may just have
    moved (a variable added can reallocate it), and exec fails with EFAULT: "OSError: [Errno 14]
    Bad address", once in a CI run, where serve-anywhere started python3.13. With variables
    added and removed in a loop by one thread, 2,889 of 3,000 such starts failed here, and none
    of 3,000 given ``env=``. The pages plugin calls this when a session starts. The block workers
    (multiprocessing's spawn, which has no ``env=``) are started by the tests' own thread, the
    one that changes os.environ, so never during a change."""
    init = subprocess.Popen.__init__
    if getattr(init, "gives_environment", False):
        return

    @functools.wraps(init)
    def __init__(self, args, *positional, **keywords):
        if len(positional) < 10 and keywords.get("env") is None:  # env is the 10th after args
            keywords["env"] = environment()
        init(self, args, *positional, **keywords)

    __init__.gives_environment = True
    subprocess.Popen.__init__ = __init__


# The second configuration's environment (read once by torch at its first dispatch, and by MKL
# at its first call): torch's kernels without vector instructions, MKL's path for any x86-64 CPU.
PLAIN_ENVIRONMENT = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}


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


def _pool(kernels: str) -> ProcessPoolExecutor:
    with _LOCK:
        if kernels not in _POOLS:
            _POOLS[kernels] = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                initializer=_started, initargs=(kernels, multiprocessing.get_start_method()))
        return _POOLS[kernels]


def _drop(kernels: str, wait: bool = False) -> None:
    with _LOCK:
        pool = _POOLS.pop(kernels, None)
    if pool is not None:
        pool.shutdown(wait=wait, cancel_futures=True)


def run_chain_text(blocks: list, chain: list[int], seed: int, probe: bool):
    """Run ``blocks[i] for i in chain`` (bookcheck.run.run_recorded); return each block's
    (shown, error) in chain order, and {index of a checked diagram: (want, what) or an error
    message} when ``probe`` (the first seed's run of the chain, bookcheck.diagrams)."""
    from . import HarnessError
    from .diagrams import diagram_probes
    from .run import run_recorded

    probes, record = diagram_probes(blocks) if probe else ({}, {})
    results = run_recorded([blocks[i] for i in chain], seed, probes)
    outcomes = [(results[id(blocks[i])].shown, results[id(blocks[i])].error) for i in chain]
    index = {id(b): i for i, b in enumerate(blocks)}
    found = {index[d]: (str(v) if isinstance(v, HarnessError) else v) for d, v in record.items()}
    return outcomes, found


def run_chain(blocks: list, chain: list[int], seed: int, probe: bool, kernels: str):
    """``run_chain_text`` in the worker of ``kernels`` (in this process when it is itself a
    worker). Chains run one at a time, so a worker that dies was killed by the chain it ran:
    every block of that chain fails, saying so, and the next chain gets a new worker."""
    if kernels not in KERNELS:
        raise ValueError(f"kernels={kernels!r}: pass one of {KERNELS}")
    if _IN_WORKER:
        return run_chain_text(blocks, chain, seed, probe)
    try:
        return _pool(kernels).submit(run_chain_text, blocks, chain, seed, probe).result()
    except BrokenProcessPool as exc:
        _drop(kernels)
        error = (f"the worker process running this chain (from {blocks[chain[0]].where}) died: {exc} "
                 "A block crashed the interpreter (e.g. in C code, or called os._exit).")
        return [("", f"{blocks[i].where}: {error}") for i in chain], {}


def stop() -> None:
    """Stop the workers (the test session's end); the next chain starts new ones."""
    for kernels in list(_POOLS):
        _drop(kernels, wait=True)
