"""FSDP2 (``fully_shard``) seen from autograd, measured on 2 gloo processes (docs/part7/fsdp.md).

The functions ``f(rank, world_size)`` are rank functions for ``snippets.scale.launch.run_ranks``:
each runs in every process of a job and returns what its rank saw (tensors as lists, shapes as
tuples).

Setting: ``Sequential(Linear(4, 5, bias=False), ReLU(), Linear(5, 2, bias=False))`` in float64,
weights (5, 4) and (2, 5) of small integers (``make_model``); a full batch ``X`` (4, 4) of small
integers, of which rank r holds rows ``2r, 2r + 1`` (``shard``), so the example needs
``world_size == 2``; the loss is the mean of the squared outputs. Each Linear is one FSDP unit
(``shard_model``), on a one-dimensional CPU device mesh over gloo. Every gradient is a sum of
dyadic numbers, exact in float64.

Invariants (tests/test_scale_fsdp.py checks them against a single-process model):

- after ``fully_shard`` each parameter is a new ``DTensor`` with placement ``Shard(0)``: rank r
  holds rows ``torch.chunk(weight, world_size)[r]``; its gradient is sharded the same way;
- the gradients, gathered (``full_tensor()``), equal the single-process full-batch gradient;
- ``clip_grad_norm_`` over the shards returns the norm of the whole unsharded gradient;
- with ``set_requires_gradient_sync(False)`` a backward reduces nothing and the sharded
  ``.grad`` stays as it was: the unsharded gradients are kept until a backward with sync on.
"""

# --8<-- [start:imports]
import math

import torch
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor, distribute_tensor

from snippets.scale.launch import rank_rows
# --8<-- [end:imports]


# --8<-- [start:setting]
X = torch.tensor([[1.0, 2.0, 0.0, -1.0], [0.0, 1.0, 1.0, 2.0],
                  [2.0, -1.0, 1.0, 0.0], [1.0, 1.0, -2.0, 1.0]], dtype=torch.float64)   # (4, 4)
WORLD_SIZE = 2


def make_model(dtype=torch.float64):
    """Linear(4, 5) -> ReLU -> Linear(5, 2), no biases, integer weights in {-1, 0, 1}."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch.dtype, such as torch.float64; got {dtype!r}")
    model = nn.Sequential(nn.Linear(4, 5, bias=False), nn.ReLU(), nn.Linear(5, 2, bias=False)).to(dtype)
    with torch.no_grad():
        model[0].weight.copy_(torch.arange(20.0).reshape(5, 4) * 2 % 3 - 1)   # (5, 4)
        model[2].weight.copy_(torch.arange(10.0).reshape(2, 5) % 3 - 1)   # (2, 5)
    return model


def shard(rank, world_size=WORLD_SIZE):
    """Rank ``rank``'s rows of the full batch: x (2, 4)."""
    return X[rank_rows(rank, world_size, WORLD_SIZE, 2)]


def loss_fn(model, x):
    """The mean of the squared outputs: x (m, 4) -> scalar."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a tensor of shape (m, 4); got {type(x).__name__}")
    if x.dim() != 2 or x.shape[1] != 4 or x.shape[0] == 0:
        raise ValueError(f"x must be a tensor of shape (m, 4), m >= 1; got shape {tuple(x.shape)}")
    return model(x).pow(2).mean()


def shard_model(model, mesh, **options):
    """``fully_shard`` each Linear (one unit each), then the root; ``options`` go to every call."""
    if not isinstance(model, nn.Sequential):
        raise TypeError(f"model must be an nn.Sequential such as make_model(); got {type(model).__name__}")
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh, **options)
    return fully_shard(model, mesh=mesh, **options)
# --8<-- [end:setting]


def _grad_numel(model):
    return sum(p.grad.to_local().numel() for p in model.parameters() if p.grad is not None)


# --8<-- [start:optimizer_order]
def optimizer_order(rank, world_size):
    """One Adam step with the optimizer made before ``fully_shard``, one with it made after, and
    one made after a forward without backward (the root's unit holding the last weight): did
    the weights change, and what state did Adam keep for the first weight?"""
    mesh = init_device_mesh("cpu", (world_size,))
    out = {}
    for order in ("optimizer first", "fully_shard first", "no_grad forward first"):
        model = make_model()
        if order == "optimizer first":
            opt = torch.optim.Adam(model.parameters(), lr=0.1)
            shard_model(model, mesh)
        elif order == "fully_shard first":
            shard_model(model, mesh)
            opt = torch.optim.Adam(model.parameters(), lr=0.1)
        else:
            fully_shard(model[0], mesh=mesh)
            fully_shard(model, mesh=mesh)             # the root: model[2]'s weight is its own
        before = [p.full_tensor() for p in model.parameters()]
        if order == "no_grad forward first":
            with torch.no_grad():
                model(shard(rank, world_size))        # an evaluation: the root's weight stays gathered
            opt = torch.optim.Adam(model.parameters(), lr=0.1)
        loss_fn(model, shard(rank, world_size)).backward()
        opt.step()
        first = opt.param_groups[0]["params"][0]       # what the optimizer holds for 0.weight
        out[order] = {
            "changed": [not torch.equal(b, p.full_tensor()) for b, p in zip(before, model.parameters())],
            "holds": [any(q is p for p in model.parameters()) for q in opt.param_groups[0]["params"]],
            "exp_avg": [(type(v).__name__, tuple(v.to_local().shape)) for k, v in opt.state[first].items()
                        if k == "exp_avg"],
        }
    return out
# --8<-- [end:optimizer_order]


# --8<-- [start:evaluation_first]
def evaluation_first(rank, world_size):
    """An evaluation forward before the first training step: under ``no_grad``, under
    ``inference_mode``, and under ``no_grad`` with ``reshard_after_forward=False`` (then the
    optimizer is made): what the training step did, or raised."""
    mesh = init_device_mesh("cpu", (world_size,))
    out = {}
    for name, mode, keep in (("no_grad", torch.no_grad, None),
                             ("inference_mode", torch.inference_mode, None),
                             ("no_grad, kept gathered", torch.no_grad, False)):
        model = shard_model(make_model(), mesh, reshard_after_forward=keep)
        before = [p.full_tensor() for p in model.parameters()]
        with mode():
            model(shard(rank, world_size))            # the evaluation
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        try:
            loss_fn(model, shard(rank, world_size)).backward()
        except RuntimeError as error:
            out[name] = str(error).split(" outside")[0]
            continue
        opt.step()
        out[name] = [not torch.equal(b, p.full_tensor())
                     for b, p in zip(before, model.parameters())]
    return out
# --8<-- [end:evaluation_first]


# --8<-- [start:sharded]
def sharded_parameters_and_gradients(rank, world_size):
    """What each rank holds: the parameters and gradients (type, placements, global and local
    shapes), the gathered gradients, and ``clip_grad_norm_``'s total norm."""
    mesh = init_device_mesh("cpu", (world_size,))
    model = shard_model(make_model(), mesh)
    params = {name: (type(p).__name__, p.placements, tuple(p.shape), tuple(p.to_local().shape))
              for name, p in model.named_parameters()}
    loss_fn(model, shard(rank, world_size)).backward()
    grads = {name: (type(p.grad).__name__, p.grad.placements, tuple(p.grad.to_local().shape))
             for name, p in model.named_parameters()}
    full = {name: p.grad.full_tensor().tolist() for name, p in model.named_parameters()}  # all-gathers
    local = torch.stack([p.grad.to_local().norm() for p in model.parameters()]).norm()  # this rank's rows only
    largest = nn.utils.get_total_norm([p.grad for p in model.parameters()], norm_type=math.inf)
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    return {"params": params, "grads": grads, "full": full, "local norm": local.item(),
            "inf norm": (largest.placements, largest.to_local().item(), largest.full_tensor().item()),
            "total norm": (type(total).__name__, total.placements, total.full_tensor().item()),
            "clipped": {name: p.grad.full_tensor().tolist() for name, p in model.named_parameters()}}
# --8<-- [end:sharded]


# --8<-- [start:reshard]
def between_forward_and_backward(rank, world_size):
    """For ``reshard_after_forward`` True and False, and for its default (None) with the last
    Linear left in the root's unit: the parameters registered on the model between forward and
    backward (type, shape, elements held on this rank)."""
    mesh = init_device_mesh("cpu", (world_size,))
    out = {}
    for reshard in (True, False, None):
        if reshard is None:
            model = make_model()
            fully_shard(model[0], mesh=mesh)          # a unit of its own
            fully_shard(model, mesh=mesh)             # the root: model[2]'s weight is its own
        else:
            model = shard_model(make_model(), mesh, reshard_after_forward=reshard)
        loss = loss_fn(model, shard(rank, world_size))
        out[reshard] = [(name, type(p).__name__, tuple(p.shape),
                         (p.to_local() if isinstance(p, DTensor) else p).numel())
                        for name, p in model.named_parameters()]
        loss.backward()
    return out
# --8<-- [end:reshard]


# --8<-- [start:accumulate]
def accumulate(rank, world_size):
    """Two micro-batches of one row, the loss divided by 2; the first with gradient sync off.
    After each backward: elements in the sharded ``.grad``; in the next forward (a forward
    pre-hook sees the unsharded weights): the shapes of the unsharded gradients kept."""
    mesh = init_device_mesh("cpu", (world_size,))
    model = shard_model(make_model(), mesh)
    kept = []
    for layer in (model[0], model[2]):
        layer.register_forward_pre_hook(
            lambda layer, args: kept.append(None if layer.weight.grad is None else tuple(layer.weight.grad.shape)))
    x = shard(rank, world_size)                       # (2, 4)
    sharded, registered = [], []
    for j in range(2):
        model.set_requires_gradient_sync(j == 1)      # off for all but the last micro-batch
        (loss_fn(model, x[j:j + 1]) / 2).backward()
        sharded.append(_grad_numel(model))
        registered.append([type(p).__name__ for p in model.parameters()])
    model(x)                                          # one more forward, for the hooks to look
    full = {name: p.grad.full_tensor().tolist() for name, p in model.named_parameters()}
    return {"sharded .grad elements": sharded, "unsharded grads kept": [kept[0:2], kept[2:4], kept[4:6]],
            "registered after backward": registered, "full": full}
# --8<-- [end:accumulate]


# --8<-- [start:mixed_precision]
def mixed_precision(rank, world_size):
    """``param_dtype=bfloat16, reduce_dtype=float32`` on a float32 model: the dtypes each layer
    sees in forward, the dtype of the gradient autograd computes for the unsharded weight, and
    the dtypes of the sharded parameters and gradients; the gathered gradients."""
    mesh = init_device_mesh("cpu", (world_size,))
    model = make_model(torch.float32)
    seen = []

    def look(layer, args):                            # runs with the unsharded (cast) weight
        seen.append(("input", args[0].dtype, "weight", layer.weight.dtype))
        layer.weight.register_hook(lambda g: seen.append(("autograd grad of the weight", g.dtype)))

    for layer in (model[0], model[2]):
        layer.register_forward_pre_hook(look)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    shard_model(model, mesh, mp_policy=policy)
    out = model(shard(rank, world_size).float())      # (2, 2)
    out.float().pow(2).mean().backward()
    return {"seen": seen, "output": out.dtype,
            "sharded": [(p.dtype, p.grad.dtype) for p in model.parameters()],
            "full": {name: p.grad.full_tensor().tolist() for name, p in model.named_parameters()}}
# --8<-- [end:mixed_precision]


# --8<-- [start:hooks]
def hooks_on_a_sharded_parameter(rank, world_size):
    """A tensor hook and a post-accumulate-grad hook on a sharded parameter: which fire, and
    with what, in a backward with gradient sync off and then in one with it on."""
    mesh = init_device_mesh("cpu", (world_size,))
    model = shard_model(make_model(), mesh)
    fired = []
    weight = model[0].weight                          # the sharded parameter, a DTensor
    weight.register_hook(lambda grad: fired.append(("register_hook", tuple(grad.shape))))
    weight.register_post_accumulate_grad_hook(
        lambda p: fired.append(("register_post_accumulate_grad_hook", type(p.grad).__name__,
                                tuple(p.grad.to_local().shape))))
    out = {}
    for sync in (False, True):                        # an accumulation step, then the last one
        model.set_requires_gradient_sync(sync)
        loss_fn(model, shard(rank, world_size)).backward()
        out[f"sync {'on' if sync else 'off'}"], fired = fired, []
    return out
# --8<-- [end:hooks]


# --8<-- [start:hook_in_forward]
def hook_in_forward(rank, world_size):
    """A forward pre-hook puts a tensor hook on the unsharded weight at every step:
    the hook's calls in each of 3 backward passes, kept and removed by the hook."""
    mesh = init_device_mesh("cpu", (world_size,))
    out = {}
    for how in ("kept", "removed"):
        model, calls = make_model(), []

        def look(layer, args, how=how):
            if not (torch.is_grad_enabled() and layer.training):
                return                                # no backward will remove it

            def hook(grad):
                calls.append(1)
                if how == "removed":
                    handle.remove()                   # FSDP keeps this parameter
            handle = layer.weight.register_hook(hook)

        model[0].register_forward_pre_hook(look)
        shard_model(model, mesh)
        out[how] = []
        for _ in range(3):
            loss_fn(model, shard(rank, world_size)).backward()
            out[how].append(len(calls))
            calls.clear()
    return out
# --8<-- [end:hook_in_forward]


# --8<-- [start:local_shapes]
def local_shapes(rank, world_size, sizes):
    """The local shape of the weight of ``Linear(n_in, n_out)``, for each ``(n_in, n_out)`` of
    ``sizes``, after ``fully_shard`` over ``world_size`` ranks."""
    if not all(isinstance(pair, (tuple, list)) and len(pair) == 2 for pair in sizes):
        raise TypeError(f"sizes must be a list of (n_in, n_out) pairs, e.g. [(3, 7)]; got {sizes!r}")
    for n in (n for pair in sizes for n in pair):
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"each size in sizes must be an int, e.g. [(3, 7)]; got {n!r} in {sizes!r}")
        if n < 1:
            raise ValueError(f"each size in sizes must be >= 1, e.g. [(3, 7)]; got {n} in {sizes!r}")
    mesh = init_device_mesh("cpu", (world_size,))
    shapes = []
    for n_in, n_out in sizes:
        layer = fully_shard(nn.Linear(n_in, n_out, bias=False), mesh=mesh)
        shapes.append(tuple(layer.weight.to_local().shape))
    return shapes
# --8<-- [end:local_shapes]


def tour(rank, world_size):
    """Every measurement of fsdp.md in one job: ``{section: what it returns}``."""
    return {
        "optimizer order": optimizer_order(rank, world_size),
        "sharded": sharded_parameters_and_gradients(rank, world_size),
        "reshard": between_forward_and_backward(rank, world_size),
        "accumulate": accumulate(rank, world_size),
        "mixed precision": mixed_precision(rank, world_size),
        "hooks": hooks_on_a_sharded_parameter(rank, world_size),
        "hook in forward": hook_in_forward(rank, world_size),
        "evaluation first": evaluation_first(rank, world_size),
        "mask": edit_gradient_with_a_dtensor(rank, world_size),
        "one element": scale_gradient_with_one_element(rank, world_size),
    }


# --8<-- [start:mixed_error]
def _first_weight_gradient(rank, world_size):
    """One backward of the sharded model: the mesh, and this rank's shard of the first
    Linear's weight gradient (a DTensor of global shape (5, 4))."""
    mesh = init_device_mesh("cpu", (world_size,))
    model = shard_model(make_model(), mesh)
    loss_fn(model, shard(rank, world_size)).backward()
    return mesh, model[0].weight.grad


def edit_gradient_with_a_tensor(rank, world_size):
    """A gradient mask of the weight's full shape, applied to the sharded gradient."""
    mesh, grad = _first_weight_gradient(rank, world_size)
    mask = torch.ones(5, 4, dtype=torch.float64)      # (5, 4), a plain tensor
    grad.mul_(mask)


def edit_gradient_with_a_dtensor(rank, world_size):
    """The same mask, first distributed as the gradient is: this rank's rows of it."""
    mesh, grad = _first_weight_gradient(rank, world_size)
    mask = distribute_tensor(torch.ones(5, 4, dtype=torch.float64), mesh, grad.placements)
    grad.mul_(mask)                                   # DTensor * DTensor, shard by shard
    return tuple(mask.to_local().shape)


def scale_gradient_with_one_element(rank, world_size):
    """A one-element plain tensor times the sharded gradient: whether each rank's rows came out
    halved."""
    mesh, grad = _first_weight_gradient(rank, world_size)
    before = grad.to_local().clone()                  # this rank's rows
    grad.mul_(torch.tensor(0.5, dtype=torch.float64))  # a plain tensor of one element
    return torch.equal(grad.to_local(), before * 0.5)
# --8<-- [end:mixed_error]
