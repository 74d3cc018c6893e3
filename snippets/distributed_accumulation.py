"""Gradient accumulation across processes, with the all-reduce written by hand.

Setting: a linear model ``Linear(D, 1)`` in float64 and a mean-squared-error loss on a batch of
``N = world_size * k * m`` examples, shape ``(N, D)``. Rank ``r`` owns the contiguous shard
``r*k*m : (r+1)*k*m`` and splits it into ``k`` micro-batches of ``m`` rows.

Invariant (tests/test_distributed_accumulation.py): scaling each micro-batch's mean loss by
``1/k``, accumulating ``k`` backward passes into ``.grad`` (a ``+=``), summing across ranks with
``all_reduce`` and dividing by ``world_size`` gives the gradient of the mean loss over all ``N``
examples, which ``full_batch_gradient`` computes in one process.

``by_hand`` is a rank function for ``snippets.scale.launch.run_ranks``, which starts the
processes; DistributedDataParallel does the same with ``no_sync()`` (snippets/scale/ddp.py).
"""

import torch
import torch.distributed as dist

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
    if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
        raise TypeError(f"x and y must be tensors, x (m, {D}) and y (m, 1); got {type(x).__name__} and "
                        f"{type(y).__name__}: make them with make_data(n)")
    if x.shape[1:] != (D,) or y.shape != (x.shape[0], 1):
        raise ValueError(f"x must be (m, {D}) and y (m, 1); got {tuple(x.shape)} and {tuple(y.shape)}")
    if x.shape[0] == 0:   # the mean of nothing is nan, and its backward adds nothing to .grad
        raise ValueError(f"x has 0 rows: a micro-batch needs m >= 1 rows; slicing k micro-batches of m "
                         f"rows from N needs k * m <= N")
    return ((model(x) - y) ** 2).mean()


def full_batch_gradient(world_size=2, k=2, m=2):
    """Single-process reference: gradients of the mean loss over all N examples."""
    _check_sizes(world_size=world_size, k=k, m=m)
    X, Y = make_data(world_size * k * m)
    model = make_model()
    loss_fn(model, X, Y).backward()
    return [p.grad for p in model.parameters()]


# --8<-- [start:by_hand]
def by_hand(rank, world_size, k=2, m=2):
    """One rank: the all-reduce of ``rank + 1`` (summed, then averaged), then accumulation over ``k`` micro-batches of
    ``m`` rows and one all-reduce per parameter."""
    _check_sizes(world_size=world_size, k=k, m=m)
    out = {}
    # 1. all_reduce sums (its default op): every rank ends with the same total; AVG divides too.
    for op in ("SUM", "AVG"):
        t = torch.tensor([float(rank + 1)], dtype=torch.float64)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        out[op] = t.item()

    X, Y = make_data(world_size * k * m)
    shard = slice(rank * k * m, (rank + 1) * k * m)
    Xs, Ys = X[shard], Y[shard]  # (k*m, D), (k*m, 1): this rank's examples

    # 2. k backward passes add into .grad, then one all_reduce per parameter.
    model = make_model()
    for j in range(k):
        x, y = Xs[j * m:(j + 1) * m], Ys[j * m:(j + 1) * m]  # (m, D), (m, 1)
        (loss_fn(model, x, y) / k).backward()  # .grad += (1/k) * grad of this micro-batch
    out["local"] = [p.grad.clone() for p in model.parameters()]
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
        p.grad /= world_size  # all_reduce sums; the mean over ranks is ours to take
    out["manual"] = [p.grad.clone() for p in model.parameters()]
    return out
# --8<-- [end:by_hand]
