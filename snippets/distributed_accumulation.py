"""Gradient accumulation across processes: all-reduce by hand, and DDP with ``no_sync()``.

Setting: a linear model ``Linear(D, 1)`` in float64 and a mean-squared-error loss on a batch of
``N = world_size * k * m`` examples, shape ``(N, D)``. Rank ``r`` owns the contiguous shard
``r*k*m : (r+1)*k*m`` and splits it into ``k`` micro-batches of ``m`` rows.

Invariant checked by ``run``: scaling each micro-batch's mean loss by ``1/k``, accumulating
``k`` backward passes into ``.grad`` (a ``+=``), summing across ranks with ``all_reduce`` and
dividing by ``world_size`` gives the gradient of the mean loss over all ``N`` examples, which
``full_batch_gradient`` computes in one process.

``worker`` is a module-level function so that ``torch.multiprocessing.spawn`` can import it in
each new process; each worker writes its results to ``<out_dir>/rank<r>.pt``.
"""

import os
import socket
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel as DDP

D = 3  # features


def _check_sizes(**sizes):
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int; got {value!r}")


def make_data(n, seed=1):
    """The full batch: X (n, D) and Y (n, 1), float64, the same in every process."""
    _check_sizes(n=n)
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, D, dtype=torch.float64, generator=g)
    Y = torch.randn(n, 1, dtype=torch.float64, generator=g)
    return X, Y


def make_model(seed=0):
    """Linear(D, 1) in float64 with weights fixed by ``seed`` (identical on every rank)."""
    g = torch.Generator().manual_seed(seed)
    model = torch.nn.Linear(D, 1).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, dtype=torch.float64, generator=g))
    return model


def loss_fn(model, x, y):
    """Mean squared error of one (micro-)batch: x (m, D), y (m, 1) -> scalar."""
    if x.shape[1:] != (D,) or y.shape != (x.shape[0], 1):
        raise ValueError(f"x must be (m, {D}) and y (m, 1); got {tuple(x.shape)} and {tuple(y.shape)}")
    return ((model(x) - y) ** 2).mean()


def full_batch_gradient(world_size=2, k=2, m=2):
    """Single-process reference: gradients of the mean loss over all N examples."""
    _check_sizes(world_size=world_size, k=k, m=m)
    X, Y = make_data(world_size * k * m)
    model = make_model()
    loss_fn(model, X, Y).backward()
    return [p.grad for p in model.parameters()]


# --8<-- [start:worker]
def worker(rank, world_size, port, out_dir, k, m):
    """One process: all-reduce demo, manual accumulation, then DDP with no_sync()."""
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    try:
        out = {}
        # 1. all_reduce sums: every rank ends with the same total; divide to average.
        t = torch.tensor([float(rank + 1)], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        out["all_reduce"] = t.item()

        X, Y = make_data(world_size * k * m)
        shard = slice(rank * k * m, (rank + 1) * k * m)
        Xs, Ys = X[shard], Y[shard]  # (k*m, D), (k*m, 1): this rank's examples
        micro = [(Xs[j * m:(j + 1) * m], Ys[j * m:(j + 1) * m]) for j in range(k)]

        # 2. By hand: k backward passes add into .grad, one all_reduce per parameter at the end.
        model = make_model()
        for x, y in micro:
            (loss_fn(model, x, y) / k).backward()  # .grad += (1/k) * grad of this micro-batch
        for p in model.parameters():
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world_size  # all_reduce sums; the mean over ranks is ours to take
        out["manual"] = [p.grad.clone() for p in model.parameters()]

        # 3. DDP: no_sync() skips the all-reduce for every micro-batch but the last.
        model = make_model()
        ddp = DDP(model)
        calls = {"n": 0}

        def counting_hook(state, bucket):  # count, then divide by world_size and sum, as DDP does
            state["n"] += 1
            return allreduce_hook(None, bucket)

        ddp.register_comm_hook(calls, counting_hook)
        for j, (x, y) in enumerate(micro):
            if j < k - 1:
                with ddp.no_sync():
                    (loss_fn(ddp, x, y) / k).backward()
                if j == 0:
                    out["local_after_first"] = model.weight.grad.clone()
            else:
                (loss_fn(ddp, x, y) / k).backward()  # this backward all-reduces
        out["ddp"] = [p.grad.clone() for p in model.parameters()]
        out["all_reduce_calls"] = calls["n"]
        torch.save(out, os.path.join(out_dir, f"rank{rank}.pt"))
        del ddp  # DDP's reducer holds the process group: release it before teardown
        dist.barrier()  # no rank tears down while the other still communicates
    finally:
        dist.destroy_process_group()
# --8<-- [end:worker]


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --8<-- [start:run]
def run(world_size=2, k=2, m=2):
    """Start ``world_size`` processes running ``worker``; return their results, by rank.

    Blocks until every process has exited (``join=True``); a failing worker raises here.
    """
    _check_sizes(world_size=world_size, k=k, m=m)
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(worker, args=(world_size, free_port(), out_dir, k, m), nprocs=world_size, join=True)
        return [torch.load(os.path.join(out_dir, f"rank{r}.pt")) for r in range(world_size)]
# --8<-- [end:run]
