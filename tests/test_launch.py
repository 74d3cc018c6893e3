"""snippets.scale.launch.run_ranks: the processes of a distributed example on this machine."""

import inspect
import re
import time

import pytest
import torch
import torch.distributed as dist

from snippets.scale.launch import run_ranks


def summed(rank, world_size):
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)  # a sum over the ranks: 1 + 2 = 3 on each
    return t.item(), rank, world_size


def raises_on_rank_1(rank, world_size):
    if rank == 1:
        raise ValueError("a bad shard on this rank")
    return rank


def waits_alone(rank, world_size):
    if rank == 0:
        dist.barrier()  # rank 1 never arrives
    else:
        time.sleep(60)
    return rank


def with_args(rank, world_size, scale, name):
    return {"rank": rank, "value": scale * rank, "name": name}


def test_each_rank_returns_its_value_in_rank_order():
    assert run_ranks(summed) == [(3.0, 0, 2), (3.0, 1, 2)]
    assert run_ranks(with_args, world_size=3, args=(10, "x")) == [
        {"rank": r, "value": 10 * r, "name": "x"} for r in range(3)]


def test_a_rank_that_raises_raises_its_exception_naming_the_rank():
    with pytest.raises(ValueError, match="a bad shard on this rank") as info:
        run_ranks(raises_on_rank_1)
    assert info.value.__notes__ == ["(raised on rank 1 of 2)"]


def test_a_job_that_hangs_is_stopped_and_names_its_ranks():
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"rank\(s\) \[0, 1\] of 2 did not finish within 3 s"):
        run_ranks(waits_alone, timeout=3)
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("call, error, message", [
    (lambda: run_ranks(lambda r, w: r), TypeError, "top level of an importable module"),
    (lambda: run_ranks(summed, world_size=0), ValueError, "world_size must be an int from 1 to 8"),
    (lambda: run_ranks(summed, world_size=True), ValueError, "world_size must be an int"),
    (lambda: run_ranks(summed, args=[1]), TypeError, "args must be a tuple"),
    (lambda: run_ranks(summed, timeout=float("nan")), ValueError, "timeout must be a positive, finite number"),
    (lambda: run_ranks(summed, timeout=0), ValueError, "timeout must be a positive, finite number"),
])
def test_bad_arguments_are_refused_by_name(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_example_a_refusal_names_is_a_function_run_ranks_takes():
    """The message of a function a new process cannot import names one it can: it must exist."""
    import importlib

    with pytest.raises(TypeError) as info:
        run_ranks(lambda r, w: r)
    module, _, name = re.search(r"such as ([\w.]+);", str(info.value)).group(1).rpartition(".")
    example = getattr(importlib.import_module(module), name)
    assert callable(example) and list(inspect.signature(example).parameters)[:2] == ["rank", "world_size"]


def tensors(rank, world_size):
    t = torch.full((2, 3), float(rank), dtype=torch.float64)
    dist.all_reduce(t)  # 0 + 1 = 1 everywhere
    return {"t": t, "grads": [t * 2, torch.arange(rank + 1)]}


def test_tensors_come_back_as_values_after_their_rank_has_ended():
    # sent through the queue as shared-memory handles, they would need the ended rank to serve them
    out = run_ranks(tensors)
    for rank, r in enumerate(out):
        assert torch.equal(r["t"], torch.ones(2, 3, dtype=torch.float64))
        assert torch.equal(r["grads"][0], torch.full((2, 3), 2.0, dtype=torch.float64))
        assert torch.equal(r["grads"][1], torch.arange(rank + 1))


def unpicklable(rank, world_size):
    return lambda: rank  # a lambda cannot be pickled


def test_a_value_that_cannot_be_sent_back_raises_naming_what_to_return():
    with pytest.raises(TypeError, match="fn returned a value that cannot be sent back") as info:
        run_ranks(unpicklable)
    assert info.value.__notes__ == ["(raised on rank 0 of 2)"]


def ddp_error_with_pending_work(rank, world_size):
    # reentrant checkpointing under DDP with find_unused_parameters=True: the error is raised
    # while DDP's all-reduce of a bucket may still be queued; the traceback holds the DDP object
    from snippets.scale.ddp import checkpoint_with_find_unused

    checkpoint_with_find_unused(rank, world_size)


def test_a_failed_ddp_step_ends_every_rank_promptly():
    # freeing the traceback's DDP reducer while gloo still holds its work deadlocked a rank
    # (gloo's thread waits for the GIL that the freeing thread holds) in about one run in five
    start = time.monotonic()
    for _ in range(15):
        with pytest.raises(RuntimeError, match="Expected to mark a variable ready only once") as info:
            run_ranks(ddp_error_with_pending_work, timeout=30)
        assert info.value.__notes__ == ["(raised on rank 0 of 2)"]  # rank 0 reported too
    assert time.monotonic() - start < 60


class TwoArgumentError(Exception):
    def __init__(self, got, want):  # pickled as (message,): loading it calls __init__ with one argument
        super().__init__(f"got {got}, want {want}")


def raises_an_error_that_does_not_load(rank, world_size):
    raise TwoArgumentError(3, 4)


def test_an_error_that_cannot_be_loaded_comes_back_as_a_runtime_error_naming_its_type():
    with pytest.raises(RuntimeError, match=r"^TwoArgumentError: got 3, want 4\n") as info:
        run_ranks(raises_an_error_that_does_not_load, world_size=1)
    assert info.value.__notes__ == ["(raised on rank 0 of 1)"]


def fails_before_the_reduce(rank, world_size):
    import torch
    import torch.distributed as dist

    if rank == 1:
        raise ValueError("rank 1's own error")
    dist.all_reduce(torch.ones(1))   # rank 1 never comes: gloo loses the connection


def test_the_rank_that_failed_first_is_reported_not_the_one_left_waiting():
    with pytest.raises(ValueError, match="rank 1's own error") as info:
        run_ranks(fails_before_the_reduce, timeout=30)
    assert info.value.__notes__ == ["(raised on rank 1 of 2)"]


def returns_before_the_reduce(rank, world_size):
    import torch
    import torch.distributed as dist

    if rank == 1:
        dist.all_reduce(torch.ones(1))   # rank 0 has returned: no rank raised, none will come
    return rank


def test_a_rank_left_in_a_collective_by_one_that_returned_is_named_with_it():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"rank\(s\) \[1\] of 2 lost the connection to rank\(s\) \[0\], "
                                           r"which had returned: .* Every rank must run the same collectives"):
        run_ranks(returns_before_the_reduce, timeout=60)
    assert time.monotonic() - start < 30  # at once, not at the timeout


def exits_on_rank_1(rank, world_size):
    import sys

    if rank == 1:
        sys.exit(3)   # as argparse does on a bad argument
    return rank


def test_a_rank_that_calls_sys_exit_raises_a_runtime_error_that_says_so():
    with pytest.raises(RuntimeError, match=r"fn called sys.exit\(3\) on rank 1: return a value or raise") as info:
        run_ranks(exits_on_rank_1)
    assert info.value.__notes__ == ["(raised on rank 1 of 2)"]


def test_a_partial_of_a_top_level_function_is_taken():
    import functools

    assert run_ranks(functools.partial(with_args, scale=2, name="p")) == [
        {"rank": r, "value": 2 * r, "name": "p"} for r in range(2)]


def test_args_that_cannot_be_pickled_are_refused_by_name():
    with pytest.raises(TypeError, match=r"fn and args could not be sent to a rank's process \(.*\): pass values that pickle"):
        run_ranks(with_args, args=(lambda v: v, "x"))


def test_a_script_read_from_standard_input_is_refused_before_any_rank_starts(tmp_path):
    import subprocess
    import sys

    from bookcheck import ROOT

    script = "from snippets.scale.launch import run_ranks\nfrom tests.test_launch import summed\nrun_ranks(summed)\n"
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 1
    assert "RuntimeError: the main module's file '<stdin>' does not exist, and each rank imports it" in done.stderr


def puts_on_the_queue(rank, world_size, q):
    q.put(rank)
    return rank


def test_a_queue_of_the_launchers_context_can_be_passed_in_args():
    """A guard on the pickling check: a check before the processes start refused this queue,
    which multiprocessing sends while it starts them."""
    from snippets.scale import launch

    q = launch._context().Queue()
    assert run_ranks(puts_on_the_queue, args=(q,)) == [0, 1]
    assert sorted(q.get(timeout=10) for _ in range(2)) == [0, 1]
