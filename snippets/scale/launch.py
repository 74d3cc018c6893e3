"""Start a small distributed job on this machine: ``run_ranks(fn, world_size=2)``.

Each rank is a new Python process that joins a gloo process group through a store this
process opens on 127.0.0.1 (at a port the OS assigns while the store binds it, so two jobs at
once never meet), waits at a barrier until every rank has joined, calls
``fn(rank, world_size, *args)`` and sends back what it returns. The processes are
started by multiprocessing's ``forkserver`` (``spawn`` where the platform has no forkserver):
the server imports torch once, at the first call, and each rank is a fork of it, so a rank
starts in a fraction of a second instead of importing torch anew. ``run_ranks`` returns those
values as a list, by rank. ``fn`` must be a function at the top level of a module a new process
imports by name, not of ``__main__`` (a notebook's or the REPL's main module cannot be imported
at all, so every ``__main__`` function is refused), and ``args`` and what it returns must be
picklable (tensors, numbers, strings, lists and dicts of them). A script read from standard input
is refused: each rank imports the main module from its file.

A rank that raises makes ``run_ranks`` raise that exception, of its type, with a note naming
the rank (the lowest rank that raised, passing over a rank that only lost its connection to a
peer that had failed); a rank that calls ``sys.exit`` raises a RuntimeError that says so. A rank
left in a collective (an all-reduce, a barrier) by a rank that returned without it loses its
connection once no rank it waits for is still running: ``run_ranks`` then raises a RuntimeError
naming both. A job that does not finish
within ``timeout`` seconds, ranks waiting in collectives that do not match while every process
lives, say, is stopped: every rank still running is terminated and ``run_ranks`` raises
``TimeoutError`` naming the ranks that did not finish. gloo's own timeout is set to the same
value, so a collective that cannot complete fails in the rank too.

A script that calls it must guard its entry point, as every ``spawn`` or ``forkserver`` program
does (each rank imports the script's main module)::

    if __name__ == '__main__':  # each new process imports the main module again
        print(run_ranks(my_module.my_fn))
"""

from __future__ import annotations

import datetime
import functools
import math
import multiprocessing
import os
import pickle
import queue
import sys
import time
import traceback


PRELOAD = ["torch", "torch.distributed", "torch._dynamo"]  # DDP and FSDP import torch._dynamo


def _context():
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)  # read when the server starts, at the first call
        return ctx
    return multiprocessing.get_context("spawn")


def _send(results, message):
    # Pickled here with the standard pickler, so a tensor travels as its bytes: the queue's own
    # pickler (torch.multiprocessing's) would send a tensor as a shared-memory handle, which the
    # rank's process, ending right after, can no longer hand over.
    data = pickle.dumps(message)
    pickle.loads(data)  # an exception whose __init__ takes other arguments pickles but does not load
    results.put(data)


def _send_and_exit(results, rank, ok, value):
    """Send ``(rank, ok, value)``, wait until it is in the pipe, and end the process at once,
    without tearing anything down: the interpreter's own shutdown, with torch loaded, takes as
    long as a small rank's work, and freeing what a failed step left (a DDP reducer whose
    collective is still queued, referenced from the traceback) can deadlock in torch's teardown."""
    try:
        _send(results, (rank, ok, value))
    except Exception as error:  # noqa: BLE001 - a value or an exception that cannot be pickled
        if ok:
            exc, text = TypeError(f"fn returned a value that cannot be sent back ({error}); return tensors, "
                                  "numbers, strings, lists and dicts of them"), ""
        else:
            exc, text = value
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")  # its type and text, at least
        _send(results, (rank, False, (exc, text)))
    results.close()
    results.join_thread()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _rank_main(fn, rank, world_size, port, args, timeout, results):
    import torch.distributed as dist

    try:
        wait = datetime.timedelta(seconds=timeout)
        store = dist.TCPStore("127.0.0.1", port, world_size, is_master=False, timeout=wait)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size, timeout=wait)
        # A rank's init ends when its own connections are made, maybe before another rank's: one
        # that then returned (or raised) and exited at once would close a connection that rank
        # is still making ("connectFullMesh failed ... Connection closed by peer"). The barrier
        # ends on no rank before every rank's init has.
        dist.barrier()
        try:
            value = fn(rank, world_size, *args)
        finally:
            dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
        if isinstance(exc, SystemExit):  # raised in the caller, it would end it without a word
            exc = RuntimeError(f"fn called sys.exit({exc.code!r}) on rank {rank}: return a value or "
                               "raise an exception instead")
        _send_and_exit(results, rank, False, (exc, "".join(traceback.format_exception(exc))))
    _send_and_exit(results, rank, True, value)


def rank_rows(rank, world_size, shards, rows):
    """The rows ``slice`` of a full batch cut into ``shards`` shards of ``rows`` rows that rank
    ``rank`` of ``world_size`` holds; a world size other than ``shards``, or a rank outside it, is
    refused by name."""
    if world_size != shards:
        raise ValueError(f"the example's batch has {shards} shards: run it with world_size={shards}, "
                         f"not {world_size!r}")
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < world_size:
        raise ValueError(f"rank must be an int from 0 to {world_size - 1}; got {rank!r}")
    return slice(rows * rank, rows * rank + rows)


def _lost_peer(exc):
    """True for gloo's error in a rank whose peer process ended (the peer's error is the cause)."""
    return isinstance(exc, RuntimeError) and ("Connection closed by peer" in str(exc)
                                              or "Connection reset by peer" in str(exc))


def run_ranks(fn, world_size: int = 2, args: tuple = (), timeout: float = 120.0) -> list:
    """``[fn(0, world_size, *args), ..., fn(world_size - 1, world_size, *args)]``, each computed in
    a process of its own joined to the others by a gloo process group (see the module's doc)."""
    target = fn.func if isinstance(fn, functools.partial) else fn  # a partial of one travels too
    if not callable(target) or "<locals>" in getattr(target, "__qualname__", "<locals>") \
            or getattr(target, "__module__", "__main__") == "__main__":
        raise TypeError(f"fn must be a function defined at the top level of an importable module, such as "
                        f"snippets.scale.ddp.construction_and_average; got {fn!r}: a nested function, a lambda and a "
                        f"function of __main__ (a notebook's or the REPL's cannot be imported by a new process) "
                        f"are refused; put it in a module and import it")
    if isinstance(world_size, bool) or not isinstance(world_size, int) or not 1 <= world_size <= 8:
        raise ValueError(f"world_size must be an int from 1 to 8 (processes on this machine); got {world_size!r}")
    if not isinstance(args, tuple):
        raise TypeError(f"args must be a tuple of the extra arguments of fn; got {type(args).__name__}")
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file is not None and not os.path.isfile(main_file):  # each rank imports the main module by path
        raise RuntimeError(f"the main module's file {main_file!r} does not exist, and each rank imports it: "
                           "save the script as a .py file and run that file")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
        raise ValueError(f"timeout must be a positive, finite number of seconds; got {timeout!r}")
    import torch.distributed as dist

    ctx = _context()
    results = ctx.Queue()
    # The job's store, bound here to a port the OS picks: no port is chosen first and bound
    # later, when another job (another process running examples) may have taken it.
    store = dist.TCPStore("127.0.0.1", 0, world_size, is_master=True, wait_for_workers=False,
                          timeout=datetime.timedelta(seconds=timeout))
    port = store.port
    procs = [ctx.Process(target=_rank_main, args=(fn, r, world_size, port, args, timeout, results), daemon=True)
             for r in range(world_size)]
    for p in procs:
        try:
            p.start()  # pickles fn and args for the new process
        except Exception as error:  # noqa: BLE001 - pickling raises several types
            for started in procs:
                if started.pid is not None:
                    started.terminate()
                    started.join(timeout=5)
            del store  # its port closes
            raise TypeError(f"fn and args could not be sent to a rank's process ({type(error).__name__}: {error}): "
                            "pass values that pickle (tensors, numbers, strings, functions defined at the top "
                            "level of an importable module; a tensor is shared with the caller and the other "
                            "ranks, so clone it before writing in place)") from error
    got: dict[int, tuple] = {}
    deadline = time.monotonic() + timeout
    try:
        while len(got) < world_size:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                rank, ok, value = pickle.loads(results.get(timeout=min(left, 1.0)))
            except queue.Empty:
                dead = [r for r, p in enumerate(procs) if r not in got and p.exitcode not in (None, 0)]
                if dead:  # killed before it could report (a crash in C code, os._exit)
                    for r in dead:
                        got[r] = (False, (RuntimeError(f"rank {r}'s process ended with exit code "
                                                       f"{procs[r].exitcode} before it returned"), ""))
                continue
            got[rank] = (ok, value)
    finally:
        for p in procs:
            p.join(timeout=5 if len(got) == world_size else 0)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
        del store  # its port closes
    failed = sorted(r for r, (ok, _) in got.items() if not ok)
    if failed:
        # a rank whose peer died fails in its next collective with gloo's lost connection:
        # report the rank that failed first, by its own error, when another one has it
        cause = [r for r in failed if not _lost_peer(got[r][1][0])]
        returned = sorted(r for r, (ok, _) in got.items() if ok)
        if not cause and returned:  # no rank failed: one returned while another was in a collective
            raise RuntimeError(
                f"rank(s) {failed} of {world_size} lost the connection to rank(s) {returned}, which had "
                "returned: those were still in a collective (an all-reduce, a barrier) that the others never "
                "ran. Every rank must run the same collectives, in the same order (under DDP, the same "
                "number of batches)") from got[failed[0]][1][0]
        exc, _text = got[(cause or failed)[0]][1]
        exc.add_note(f"(raised on rank {(cause or failed)[0]} of {world_size})")
        raise exc
    missing = sorted(set(range(world_size)) - set(got))
    if missing:
        raise TimeoutError(f"rank(s) {missing} of {world_size} did not finish within {timeout:g} s; each was "
                           "stopped. A rank that waits for a collective (an all-reduce, a barrier) that another "
                           "rank never reaches waits until then; pass a larger timeout on a slow machine")
    return [got[r][1] for r in range(world_size)]
