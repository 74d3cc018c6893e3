"""Where page blocks run: worker processes, never the process that runs the checks.

The test process holds threads of its own (the browser client, the background build's pipes,
pytest's capture), and a block's output and warnings are caught per process
(``contextlib.redirect_stdout``, ``warnings.catch_warnings``), which is only sound where nothing
else runs. So a chain of blocks runs in a worker: a fresh interpreter started with
multiprocessing's ``spawn`` (never a fork of a process with threads), which imports torch
once and then runs chain after chain, each in a fresh namespace after
``reset_torch_state`` (bookcheck.run.run_recorded). What comes back is text: each block's
output or error message, and for the first seed what each checked diagram's code generates.

``BOOK_WORKERS`` sets how many workers run at once (default 1); a page's chains are handed
out together, so the worker runs the next chain while the checks compare the last one. A chain that
kills its worker (a crash in C code, ``os._exit``) fails with that said; the next chain gets a
new worker. A block that itself checks a page (``bookcheck.check.check_page``, on the page
about verification) runs that page's chains in its own worker process, in place.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from . import HarnessError

_IN_WORKER = False
_POOL: ProcessPoolExecutor | None = None
_LOCK = threading.Lock()


def workers() -> int:
    """How many worker processes run chains at once: BOOK_WORKERS, else 1. Two workers on two
    cores took longer than one for every page (120 s against 88 s): each worker's torch uses
    every core already."""
    raw = os.environ.get("BOOK_WORKERS", "")
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise HarnessError(f"BOOK_WORKERS={raw!r}: give a whole number of worker processes, 1 or more")
        return int(raw)
    return 1


def _started(start_method: str) -> None:
    global _IN_WORKER
    _IN_WORKER = True
    # A spawned interpreter makes spawn its default; a reader's script has the platform's
    # default (a DataLoader with workers pickles nothing under fork, everything under spawn).
    multiprocessing.set_start_method(start_method, force=True)
    import torch  # noqa: F401 - once per worker, not once per chain


def _new_pool(n: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_started, initargs=(multiprocessing.get_start_method(),))


def _pool() -> ProcessPoolExecutor:
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = _new_pool(workers())
        return _POOL


def _drop(pool: ProcessPoolExecutor) -> None:
    global _POOL
    with _LOCK:
        if _POOL is pool:
            _POOL = None
    pool.shutdown(wait=False, cancel_futures=True)


def run_chain_text(blocks: list, chain: list[int], seed: int, probe: bool):
    """Run ``blocks[i] for i in chain`` (bookcheck.run.run_recorded); return each block's
    (shown, error) in chain order, and {index of a checked diagram: (want, what) or an error
    message} when ``probe`` (the first seed's run of the chain, bookcheck.diagrams)."""
    from .diagrams import diagram_probes
    from .run import run_recorded

    probes, record = diagram_probes(blocks) if probe else ({}, {})
    results = run_recorded([blocks[i] for i in chain], seed, probes)
    outcomes = [(results[id(blocks[i])].shown, results[id(blocks[i])].error) for i in chain]
    index = {id(b): i for i, b in enumerate(blocks)}
    found = {index[d]: (str(v) if isinstance(v, HarnessError) else v) for d, v in record.items()}
    return outcomes, found


def submit(blocks: list, chain: list[int], seed: int, probe: bool) -> Future:
    """Start ``run_chain_text`` in a worker (in this process when it is itself a worker)."""
    if _IN_WORKER:
        done: Future = Future()
        done.set_result(run_chain_text(blocks, chain, seed, probe))
        return done
    pool = _pool()
    try:
        return pool.submit(run_chain_text, blocks, chain, seed, probe)
    except BrokenProcessPool:
        _drop(pool)
        return _pool().submit(run_chain_text, blocks, chain, seed, probe)


def result(future: Future, blocks: list, chain: list[int], seed: int, probe: bool):
    """What ``submit`` returned. When a worker dies, every chain it or its siblings held is lost:
    each runs again alone in a new worker, and the one that kills that worker too fails every
    block of its chain, saying so."""
    try:
        return future.result()
    except BrokenProcessPool:
        pool = _POOL
        if pool is not None:
            _drop(pool)
    alone = _new_pool(1)
    try:
        return alone.submit(run_chain_text, blocks, chain, seed, probe).result()
    except BrokenProcessPool as exc:
        error = (f"the worker process running this chain (from {blocks[chain[0]].where}) died: {exc} "
                 "A block crashed the interpreter (e.g. in C code, or called os._exit).")
        return [("", f"{blocks[i].where}: {error}") for i in chain], {}
    finally:
        alone.shutdown(wait=False)


def stop() -> None:
    """Stop the workers (the test session's end); the next chain starts new ones."""
    pool = _POOL
    if pool is not None:
        _drop(pool)
        pool.shutdown(wait=True)
