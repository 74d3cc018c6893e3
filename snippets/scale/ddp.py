"""DistributedDataParallel seen from autograd, measured on 2 gloo processes (docs/part7/ddp.md).

The functions ``f(rank, world_size)`` are rank functions for ``snippets.scale.launch.run_ranks``:
each runs in every process of a job and returns what its rank saw (tensors as lists).

Setting: ``Linear(2, 1, bias=False)`` in float64, weight (1, 2), and a mean-squared-error loss.
The full batch ``X`` (4, 2), ``Y`` (4, 1) holds small integers; rank r holds rows ``2r, 2r + 1``
(``shard``), so the example needs ``world_size == 2``. Every gradient printed is a sum of
dyadic numbers, exact in float64: the comparisons below are equalities, not tolerances.

Invariants (tests/test_scale_ddp.py checks them against single-process references):

- after ``DDP(model)`` every rank holds rank 0's parameters;
- after DDP's backward every rank's ``.grad`` is the mean over ranks of the local gradients,
  which for shards of equal size is the gradient of the mean loss over the full batch;
- a backward whose forward ran under ``no_sync()`` communicates nothing, and the accumulated
  local gradients are averaged by the first forward and backward outside it;
- buffers are copied from rank 0 before the first forward, and then before a forward only when
  the forward before it prepared a backward;
- the first step all-reduces every gradient in one bucket; later steps cut the buckets at the
  cap, in the order the gradients became ready;
- with ``find_unused_parameters=True`` the output's node is DDP's ``_DDPSinkBackward``;
- a communication hook replaces DDP's all-reduce: one that only sums gives ``world_size``
  times the mean.
"""

import contextlib

from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

# --8<-- [start:imports]
import math
import warnings

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

from snippets.scale.launch import rank_rows
# --8<-- [end:imports]

# --8<-- [start:setting]
X = torch.tensor([[1.0, 2.0], [1.0, 0.0], [3.0, 1.0], [0.0, 1.0]], dtype=torch.float64)  # (4, 2)
Y = torch.tensor([[1.0], [0.0], [2.0], [2.0]], dtype=torch.float64)                      # (4, 1)
WORLD_SIZE = 2


def shard(rank, world_size=WORLD_SIZE):
    """Rank ``rank``'s rows of the full batch: x (2, 2), y (2, 1)."""
    rows = rank_rows(rank, world_size, WORLD_SIZE, 2)
    return X[rows], Y[rows]


def make_model(fill=1.0):
    """``Linear(2, 1, bias=False)`` in float64 with every weight equal to ``fill``."""
    if isinstance(fill, bool) or not isinstance(fill, (int, float)):
        raise TypeError(f"fill must be a number (the value of every weight); got {type(fill).__name__}")
    try:
        fill = float(fill)
    except OverflowError:                             # an int beyond float64's range
        fill = math.inf
    if not math.isfinite(fill):
        raise ValueError(f"fill must be a finite number float64 can hold (the value of every weight); got {fill}")
    model = nn.Linear(2, 1, bias=False).double()
    with torch.no_grad():
        model.weight.fill_(fill)
    return model


def loss_fn(model, x, y):
    """Mean squared error of a (micro-)batch: x (m, 2), y (m, 1), both float64 -> scalar."""
    if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
        raise TypeError(f"x and y must be tensors, (m, 2) and (m, 1); got {type(x).__name__} and {type(y).__name__}")
    if x.dim() != 2 or x.shape[0] == 0 or x.shape[1:] != (2,) or y.shape != (x.shape[0], 1):
        raise ValueError(f"x must be (m, 2) and y (m, 1) with m >= 1; got {tuple(x.shape)} and {tuple(y.shape)}")
    if x.dtype != torch.float64 or y.dtype != torch.float64:
        raise TypeError(f"x and y must be float64, the model's dtype; got {x.dtype} and {y.dtype}: "
                        "pass x.double() and y.double()")
    return (model(x) - y).pow(2).mean()
# --8<-- [end:setting]


# --8<-- [start:hooks]
def counting_mean_hook(state, bucket):
    """A communication hook: count the call, then do what DDP does without a hook (divide the
    bucket's flattened gradients by the world size and all-reduce them, a sum)."""
    state["calls"] += 1
    grads = bucket.buffer().div_(dist.get_world_size())
    future = dist.all_reduce(grads, async_op=True).get_future()
    return future.then(lambda fut: fut.value()[0])  # the bucket's new gradients


def summing_hook(state, bucket):
    """The same without the division: every rank receives the sum of the gradients."""
    future = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
    return future.then(lambda fut: fut.value()[0])
# --8<-- [end:hooks]


# --8<-- [start:construction]
def construction_and_average(rank, world_size):
    """Each rank starts from its own weights and buffer; DDP makes them rank 0's. Then one
    backward: the local gradient (``torch.autograd.grad`` of DDP's loss, which, with DDP's
    default options, communicates nothing) and the one DDP's backward leaves in ``.grad``."""
    model = make_model(fill=rank + 1.0)               # weight: rank 0 [[1, 1]], rank 1 [[2, 2]]
    model.register_buffer("seen", torch.tensor(rank + 10.0))   # a buffer: rank 0 10, rank 1 11
    out = {"weight": [model.weight.tolist()], "buffer": [model.seen.item()]}
    ddp = DDP(model)                                  # broadcasts rank 0's parameters and buffers
    out["weight"].append(model.weight.tolist())
    out["buffer"].append(model.seen.item())
    x, y = shard(rank, world_size)                    # (2, 2), (2, 1): this rank's rows
    local, = torch.autograd.grad(loss_fn(ddp, x, y), model.weight)    # DDP's loss, no all-reduce
    loss_fn(ddp, x, y).backward()                     # DDP's hooks all-reduce during backward
    out["local"], out["ddp"] = local.tolist(), model.weight.grad.tolist()
    model.seen += rank + 1.0                          # a buffer updated from local data...
    out["buffer"].append(model.seen.item())
    ddp(x)                                            # ...is rank 0's again after DDP's next forward
    out["buffer"].append(model.seen.item())
    return out
# --8<-- [end:construction]


# --8<-- [start:buffers_skipped]
def buffers_after_evaluation(rank, world_size):
    """A buffer changed on each rank before the first forward, an evaluation under ``no_grad``;
    changed again, then two training forwards: the buffer after each forward. DDP copies rank
    0's buffers before the first forward, then only when the forward before prepared a backward."""
    model = make_model()
    model.register_buffer("seen", torch.tensor(10.0))
    ddp = DDP(model)
    x, y = shard(rank, world_size)                    # (2, 2), (2, 1)
    model.seen += rank + 1.0                          # rank 0: 11, rank 1: 12
    with torch.no_grad():
        ddp(x)                                        # the first forward, an evaluation
    after = [model.seen.item()]
    model.seen += rank + 1.0                          # rank 0: 12, rank 1: 13
    for _ in range(2):
        loss_fn(ddp, x, y).backward()                 # a training forward (and its backward)
        after.append(model.seen.item())
    return after
# --8<-- [end:buffers_skipped]


# --8<-- [start:buffers_at_construction]
CONSTRUCTION_OPTIONS = {
    "broadcast_buffers=False": {"broadcast_buffers": False},
    "forward_sync_buffers=False": {"forward_sync_buffers": False},
    "both, forward_sync_buffers=True": {"broadcast_buffers": False, "forward_sync_buffers": True},
    "init_sync=False": {"init_sync": False},
}


def buffers_at_construction(rank, world_size):
    """Each rank's own buffer and first weight after ``DDP(model, **options)``, for each of
    CONSTRUCTION_OPTIONS: (buffer, weight)."""
    out = {}
    for name, options in CONSTRUCTION_OPTIONS.items():
        model = make_model(fill=rank + 1.0)                       # rank 0: weights 1, rank 1: 2
        model.register_buffer("seen", torch.tensor(rank + 10.0))  # rank 0: 10, rank 1: 11
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)        # broadcast_buffers is deprecated
            DDP(model, **options)
        out[name] = (model.seen.item(), model.weight[0, 0].item())
    return out
# --8<-- [end:buffers_at_construction]


# --8<-- [start:accumulate]
def accumulate(rank, world_size, use_no_sync=True, static_graph=False, synced_steps=0):
    """Two micro-batches of one row each, the loss scaled by 1/2; count DDP's all-reduces
    (hook calls) after each backward, and record the gradient after each. ``static_graph``
    goes to ``DDP``; ``synced_steps`` plain steps run first, before the hook is registered."""
    x, y = shard(rank, world_size)
    model = make_model()
    ddp = DDP(model, static_graph=static_graph)
    for _ in range(synced_steps):
        loss_fn(ddp, x, y).backward()
    model.zero_grad()
    state = {"calls": 0}
    ddp.register_comm_hook(state, counting_mean_hook)
    calls, grads = [], []
    for j in range(2):
        last = j == 1
        if use_no_sync and not last:
            with ddp.no_sync():                       # no all-reduce: .grad += local gradient
                (loss_fn(ddp, x[j:j + 1], y[j:j + 1]) / 2).backward()
        else:
            (loss_fn(ddp, x[j:j + 1], y[j:j + 1]) / 2).backward()
        calls.append(state["calls"])
        grads.append(model.weight.grad.tolist())
    return {"calls": calls, "grads": grads}
# --8<-- [end:accumulate]


# --8<-- [start:no_sync_static]
def no_sync_at_first_step(rank, world_size, static_graph=False, synced_steps=0):
    """``accumulate`` (the first micro-batch inside ``no_sync()``) after ``synced_steps``
    plain steps: the averaged ``.grad``, or the first words of the error."""
    try:
        return accumulate(rank, world_size, static_graph=static_graph,
                          synced_steps=synced_steps)["grads"][-1]
    except RuntimeError as error:
        return " ".join(str(error).split()[:4])
# --8<-- [end:no_sync_static]


# --8<-- [start:create_graph]
def penalty_after_create_graph(rank, world_size):
    """``backward(create_graph=True)``, then a penalty on ``.grad``: the
    ``.grad`` after each."""
    x, y = shard(rank, world_size)
    model = make_model()
    ddp = DDP(model)
    loss_fn(ddp, x, y).backward(create_graph=True)   # the mean's value, a local graph
    mean = model.weight.grad.detach().tolist()
    model.weight.grad.pow(2).sum().backward()        # differentiated on this rank only
    return mean, model.weight.grad.detach().tolist()
# --8<-- [end:create_graph]


# --8<-- [start:no_sync_forward]
def no_sync_decided_at_forward(rank, world_size):
    """DDP's all-reduces counted after a forward inside ``no_sync()`` with its backward outside,
    after a forward outside with its backward inside, after each of two backward passes of one
    forward (the first with ``retain_graph=True``), then after the backward passes of a loss
    built inside and one built outside, both forwards run first."""
    x, y = shard(rank, world_size)
    ddp = DDP(make_model())
    state = {"calls": 0}
    ddp.register_comm_hook(state, counting_mean_hook)
    with ddp.no_sync():
        loss = loss_fn(ddp, x, y)                     # forward inside
    loss.backward()                                   # backward outside
    calls = [state["calls"]]
    loss = loss_fn(ddp, x, y)                         # forward outside
    with ddp.no_sync():
        loss.backward()                               # backward inside
    calls.append(state["calls"])
    loss = loss_fn(ddp, x, y)                         # one forward, two backward passes
    loss.backward(retain_graph=True)
    calls.append(state["calls"])
    loss.backward()                                   # the second: not reduced, .grad += local
    calls.append(state["calls"])
    with ddp.no_sync():
        inside = loss_fn(ddp, x, y)                   # a forward inside,
    outside = loss_fn(ddp, x, y)                      # then one outside
    for loss in (inside, outside):
        loss.backward()                               # inside's all-reduces, outside's not
        calls.append(state["calls"])
    return calls
# --8<-- [end:no_sync_forward]


# --8<-- [start:summing]
def with_summing_hook(rank, world_size):
    """One backward with ``summing_hook`` registered: ``.grad`` holds the sum over ranks."""
    x, y = shard(rank, world_size)
    model = make_model()
    ddp = DDP(model)
    ddp.register_comm_hook(None, summing_hook)
    loss_fn(ddp, x, y).backward()
    return model.weight.grad.tolist()
# --8<-- [end:summing]


# --8<-- [start:buckets]
def bucket_sizes(rank, world_size, **options):
    """Four ``Linear(16, 16, bias=False)`` layers (256 float32 weights, 1 KiB, each) under DDP
    with buckets capped at 2.5 KiB: the elements of each bucket DDP all-reduced, at three steps.
    ``options`` go to ``DDP``."""
    model = nn.Sequential(*(nn.Linear(16, 16, bias=False) for _ in range(4)))
    ddp = DDP(model, bucket_cap_mb=2.5 / 1024, **options)  # the cap is given in MiB
    sizes, per_step = [], []
    ddp.register_comm_hook(sizes, bucket_sizes_mean_hook)
    for _ in range(3):
        ddp(torch.ones(1, 16)).sum().backward()
        per_step.append(sizes.copy())
        sizes.clear()
    return per_step
# --8<-- [end:buckets]


# --8<-- [start:unused]
class TwoHeads(nn.Module):
    """x (N, 2) -> body Linear(2, 2) -> head_a Linear(2, 1) -> (N, 1). ``head_b`` is a parameter
    of the module that ``forward`` never uses."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(2, 2, bias=False).double()
        self.head_a = nn.Linear(2, 1, bias=False).double()
        self.head_b = nn.Linear(2, 1, bias=False).double()   # never used below
        with torch.no_grad():
            for p in self.parameters():
                p.fill_(1.0)

    def forward(self, x):
        return self.head_a(self.body(x))


def unused_parameter_error(rank, world_size):
    """Two training steps of ``TwoHeads`` under DDP: the second forward raises."""
    ddp = DDP(TwoHeads())
    x, y = shard(rank, world_size)
    for step in range(2):
        loss_fn(ddp, x, y).backward()
# --8<-- [end:unused]


# --8<-- [start:unused_found]
def unused_parameters(rank, world_size, find_unused_parameters):
    """One step of ``TwoHeads`` under DDP: the local gradient of ``head_a`` and the one in
    ``.grad``, whether ``head_b`` got a gradient, and whether a second step runs."""
    model = TwoHeads()
    ddp = DDP(model, find_unused_parameters=find_unused_parameters)
    x, y = shard(rank, world_size)
    local, = torch.autograd.grad(loss_fn(model, x, y), model.head_a.weight)
    loss_fn(ddp, x, y).backward()
    out = {"local": local.tolist(), "grad": model.head_a.weight.grad.tolist(),
           "head_b grad": model.head_b.weight.grad}
    try:
        loss_fn(ddp, x, y).backward()
        out["second step"] = "runs"
    except RuntimeError as error:
        out["second step"] = str(error).split(".")[0]
    return out
# --8<-- [end:unused_found]


# --8<-- [start:ignored_output]
class BothHeads(TwoHeads):
    """``TwoHeads`` whose ``forward`` computes both heads: x (N, 2) -> ((N, 1), (N, 1)). The
    loss of ``ignored_output_steps`` uses only the first output."""

    def forward(self, x):
        h = self.body(x)
        return self.head_a(h), self.head_b(h)


def ignored_output_steps(rank, world_size, steps=3, **options):
    """``steps`` steps of ``BothHeads`` under DDP (``options`` go to ``DDP``), the loss on the
    first output only: ``head_a.weight.grad`` after each step, or the error's first sentence."""
    model = BothHeads()
    ddp = DDP(model, **options)
    x, y = shard(rank, world_size)
    grads = []
    for step in range(steps):
        model.zero_grad()
        try:
            a, b = ddp(x)                   # b is computed, not used by the loss
            (a - y).pow(2).mean().backward()
        except RuntimeError as error:
            grads.append(str(error).split(".")[0])
            break
        grads.append(model.head_a.weight.grad.tolist())
    return grads
# --8<-- [end:ignored_output]


# --8<-- [start:output_node]
def output_nodes(rank, world_size):
    """The node autograd records for the output of ``DDP(TwoHeads())``: with the
    default options, with ``find_unused_parameters=True``, and with
    ``static_graph=True`` at two steps."""
    x, _ = shard(rank, world_size)
    nodes = {}
    for option in ("default", "find_unused_parameters"):
        ddp = DDP(TwoHeads(), find_unused_parameters=option != "default")
        nodes[option] = type(ddp(x).grad_fn).__name__  # the output: (2, 1)
    ddp = DDP(TwoHeads(), static_graph=True)
    steps = nodes["static_graph, steps 1 and 2"] = []
    for _ in range(2):
        out = ddp(x)
        steps.append(type(out.grad_fn).__name__)
        out.sum().backward()
    return nodes
# --8<-- [end:output_node]


# --8<-- [start:checkpointed]
class Checkpointed(nn.Module):
    """x (N, 2) -> block Linear(2, 2) [-> block again, if ``tied``] -> head Linear(2, 1) -> (N, 1),
    each call of ``block`` under activation checkpointing. ``spare`` adds a head that ``forward``
    never uses."""

    def __init__(self, tied=False, spare=False, use_reentrant=True):
        for name, value in (("tied", tied), ("spare", spare), ("use_reentrant", use_reentrant)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False; got {value!r}")
        super().__init__()
        self.tied, self.use_reentrant = tied, use_reentrant
        self.block = nn.Linear(2, 2, bias=False).double()
        self.head = nn.Linear(2, 1, bias=False).double()
        self.spare = nn.Linear(2, 1, bias=False).double() if spare else None
        with torch.no_grad():
            self.block.weight.copy_(torch.tensor([[1.0, 0.0], [1.0, 1.0]]))
            self.head.weight.copy_(torch.tensor([[1.0, 2.0]]))

    def forward(self, x):
        h = checkpoint(self.block, x, use_reentrant=self.use_reentrant)
        if self.tied:
            h = checkpoint(self.block, h, use_reentrant=self.use_reentrant)
        return self.head(h)


def checkpoint_with_find_unused(rank, world_size):
    """Reentrant checkpointing and ``find_unused_parameters=True``: the first backward raises."""
    ddp = DDP(Checkpointed(spare=True), find_unused_parameters=True)
    x, y = shard(rank, world_size)
    loss_fn(ddp, x.requires_grad_(), y).backward()    # reentrant checkpoint: an input requires grad
# --8<-- [end:checkpointed]


# --8<-- [start:static_graph]
def full_batch_gradients(model):
    """Single-process reference: ``{name: .grad}`` of the mean loss over the full batch, as lists
    (the model's ``.grad`` is cleared first, so a second call gives the same answer)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module (such as Checkpointed()); got {type(model).__name__}")
    model.zero_grad()
    loss_fn(model, X.clone().requires_grad_(), Y).backward()
    return {name: p.grad.tolist() for name, p in model.named_parameters() if p.grad is not None}


def checkpointed_steps(rank, world_size, steps=2, **options):
    """``steps`` steps of ``Checkpointed`` under DDP (``options``: the model's and DDP's keyword
    arguments); each rank's ``.grad`` of every parameter after each step."""
    model_options = {k: options.pop(k) for k in ("tied", "spare", "use_reentrant") if k in options}
    model = Checkpointed(**model_options)
    ddp = DDP(model, **options)
    x, y = shard(rank, world_size)
    grads = []
    for step in range(steps):
        model.zero_grad()
        loss_fn(ddp, x.clone().requires_grad_(), y).backward()
        grads.append({name: None if p.grad is None else p.grad.tolist() for name, p in model.named_parameters()})
    return grads


def static_graph_tour(rank, world_size):
    """The same block applied twice under reentrant checkpointing, with DDP's default, with
    ``static_graph=True``, and non-reentrant; then a spare head with ``static_graph=True``, and
    non-reentrant with ``find_unused_parameters=True``."""
    return {
        "tied, default": checkpointed_steps(rank, world_size, tied=True),
        "tied, static_graph": checkpointed_steps(rank, world_size, tied=True, static_graph=True),
        "tied, non-reentrant": checkpointed_steps(rank, world_size, tied=True, use_reentrant=False),
        "spare, static_graph": checkpointed_steps(rank, world_size, spare=True, static_graph=True),
        "spare, find_unused, non-reentrant": checkpointed_steps(
            rank, world_size, spare=True, find_unused_parameters=True, use_reentrant=False),
    }
# --8<-- [end:static_graph]


def tour(rank, world_size):
    """The measurements of ddp.md's middle sections, in one job: ``{section: what it returns}``."""
    return {
        "construction": construction_and_average(rank, world_size),
        "create_graph": penalty_after_create_graph(rank, world_size),
        "no_sync": accumulate(rank, world_size, use_no_sync=True),
        "every micro-batch": accumulate(rank, world_size, use_no_sync=False),
        "no_sync at forward": no_sync_decided_at_forward(rank, world_size),
        "buffers after evaluation": buffers_after_evaluation(rank, world_size),
        "buffers at construction": buffers_at_construction(rank, world_size),
        "summing": with_summing_hook(rank, world_size),
        "buckets": bucket_sizes(rank, world_size),
        "buckets, static_graph": bucket_sizes(rank, world_size, static_graph=True),
        "unused, default": unused_parameters(rank, world_size, find_unused_parameters=False),
        "unused, found": unused_parameters(rank, world_size, find_unused_parameters=True),
        "output node": output_nodes(rank, world_size),
        "ignored output, static_graph": ignored_output_steps(rank, world_size, static_graph=True),
        "ignored output, found": ignored_output_steps(rank, world_size, find_unused_parameters=True),
        "buckets, unused found": bucket_sizes(rank, world_size, find_unused_parameters=True),
        "static_graph": static_graph_tour(rank, world_size),
        "no_sync first, static_graph": no_sync_at_first_step(rank, world_size, static_graph=True),
        "no_sync after a step, static_graph": no_sync_at_first_step(rank, world_size, True, 1),
    }


# The Diagnose drills of docs/reference/drills-scale-distributed.md.

# --8<-- [start:drill_drift]
def accumulation_step(rank, world_size):
    """One SGD step (lr 0.5) over two micro-batches of one row each, under DDP, communicating
    once per step; each rank's weight after the step."""
    x, y = shard(rank, world_size)                    # (2, 2), (2, 1)
    model = make_model()
    ddp = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    with ddp.no_sync():                               # one all-reduce per step, not per micro-batch
        for j in range(2):
            (loss_fn(ddp, x[j:j + 1], y[j:j + 1]) / 2).backward()
    opt.step()
    return model.weight.tolist()
# --8<-- [end:drill_drift]


# --8<-- [start:drill_drift_fixed]
def accumulation_step_fixed(rank, world_size):
    """The same step with the last micro-batch's backward outside ``no_sync()``."""
    x, y = shard(rank, world_size)
    model = make_model()
    ddp = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for j in range(2):
        last = j == 1
        context = contextlib.nullcontext() if last else ddp.no_sync()   # the last one all-reduces
        with context:
            (loss_fn(ddp, x[j:j + 1], y[j:j + 1]) / 2).backward()
    opt.step()
    return model.weight.tolist()
# --8<-- [end:drill_drift_fixed]


# --8<-- [start:drill_hook]
def bucket_sizes_hook(sizes, bucket):
    """Log each bucket's number of elements, then all-reduce the bucket."""
    sizes.append(bucket.buffer().numel())
    future = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
    return future.then(lambda fut: fut.value()[0])


def logged_step(rank, world_size, hook):
    """One backward under DDP with ``hook`` registered: the bucket sizes it logged, ``.grad``."""
    model = make_model()
    ddp = DDP(model)
    sizes = []
    ddp.register_comm_hook(sizes, hook)
    loss_fn(ddp, *shard(rank, world_size)).backward()
    return {"bucket sizes": sizes, "grad": model.weight.grad.tolist()}
# --8<-- [end:drill_hook]


# --8<-- [start:drill_hook_fixed]
def bucket_sizes_mean_hook(sizes, bucket):
    """Log each bucket's number of elements, then do what DDP does without a hook."""
    sizes.append(bucket.buffer().numel())
    return allreduce_hook(None, bucket)               # the mean over the ranks (None: every rank)
# --8<-- [end:drill_hook_fixed]
