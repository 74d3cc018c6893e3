"""Tests of snippets/scale/fsdp.py: what FSDP2 leaves on 2 gloo processes, against
single-process gradients written out here with plain autograd (functional ops, not the
module's loss or model)."""

import math

import pytest
import torch

from snippets.scale import fsdp
from snippets.scale.launch import run_ranks


def reference():
    """The weights of fsdp.make_model() and the gradients of mean((relu(X W1^T) W2^T)^2) over
    the full batch, in float64."""
    model = fsdp.make_model()
    W1 = model[0].weight.detach().clone().requires_grad_()   # (5, 4)
    W2 = model[2].weight.detach().clone().requires_grad_()   # (2, 5)
    out = torch.relu(fsdp.X @ W1.T) @ W2.T                   # (4, 2)
    out.pow(2).mean().backward()
    return {"0.weight": W1.grad, "2.weight": W2.grad}


def t(value, dtype=torch.float64):
    return torch.tensor(value, dtype=dtype)


@pytest.fixture(scope="module")
def tour():
    return run_ranks(fsdp.tour)


def test_parameters_and_gradients_are_row_shards(tour):
    shapes = {"0.weight": (5, 4), "2.weight": (2, 5)}
    for rank, r in enumerate(tour):
        for name, (kind, placements, shape, local) in r["sharded"]["params"].items():
            rows = torch.chunk(torch.empty(shapes[name]), 2, dim=0)[rank]
            assert (kind, str(placements), shape, local) == ("DTensor", "(Shard(dim=0),)", shapes[name], tuple(rows.shape))
            assert r["sharded"]["grads"][name] == ("DTensor", placements, local)


def test_gathered_gradients_equal_the_full_batch_gradient(tour):
    ref = reference()
    assert any(g.abs().sum() > 0 for g in ref.values())
    for r in tour:
        for key in ("sharded", "accumulate"):
            for name, g in ref.items():
                assert torch.equal(t(r[key]["full"][name]), g), (key, name)


def test_clip_grad_norm_over_shards_is_the_whole_models_norm(tour):
    ref = reference()
    total = math.sqrt(sum(g.pow(2).sum().item() for g in ref.values()))
    for rank, r in enumerate(tour):
        kind, placements, value = r["sharded"]["total norm"]
        assert kind == "DTensor" and str(placements) == "(Replicate(),)"
        assert abs(value - total) <= 1e-12
        local = math.sqrt(sum(torch.chunk(g, 2, dim=0)[rank].pow(2).sum().item() for g in ref.values()))
        assert abs(r["sharded"]["local norm"] - local) <= 1e-12 and not abs(local - total) <= 1e-6
        for name, g in ref.items():
            clipped = t(r["sharded"]["clipped"][name])
            assert (clipped - g / total).abs().max() <= 1e-6    # max_norm 1: scaled by 1 / (total + 1e-6)


def test_reshard_after_forward_keeps_shards_or_full_weights(tour):
    for rank, r in enumerate(tour):
        assert r["reshard"][True] == [("0.weight", "DTensor", (5, 4), 12 if rank == 0 else 8),
                                      ("2.weight", "DTensor", (2, 5), 5)]
        assert r["reshard"][False] == [("0.weight", "Parameter", (5, 4), 20), ("2.weight", "Parameter", (2, 5), 10)]
        # the default: model[0]'s unit resharded as with True, the root's own weight kept as with False
        assert r["reshard"][None] == [r["reshard"][True][0], r["reshard"][False][1]]


def test_accumulation_without_sync_keeps_the_full_gradients(tour):
    for rank, r in enumerate(tour):
        a = r["accumulate"]
        assert a["sharded .grad elements"] == [0, 17 if rank == 0 else 13]
        assert a["unsharded grads kept"] == [[None, None], [(5, 4), (2, 5)], [None, None]]
        assert a["registered after backward"] == [["DTensor", "DTensor"]] * 2


def test_mixed_precision_computes_in_bfloat16_and_keeps_float32_shards(tour):
    ref = reference()
    for r in tour:
        m = r["mixed precision"]
        assert m["seen"] == [("input", torch.bfloat16, "weight", torch.bfloat16)] * 2 + \
            [("autograd grad of the weight", torch.bfloat16)] * 2
        assert m["output"] == torch.bfloat16
        assert m["sharded"] == [(torch.float32, torch.float32)] * 2
        for name, g in ref.items():
            err = (t(m["full"][name]) - g).abs().max()
            assert err <= 1e-2 * g.abs().max()


def test_optimizer_order_hooks_and_distributed_masks(tour):
    for rank, r in enumerate(tour):
        first, after = r["optimizer order"]["optimizer first"], r["optimizer order"]["fully_shard first"]
        assert first["changed"] == [False, False] and first["holds"] == [False, False] and first["exp_avg"] == []
        assert after["changed"] == [True, True] and after["holds"] == [True, True]
        late = r["optimizer order"]["no_grad forward first"]    # holds the root's gathered weight
        assert late["changed"] == [True, False] and late["holds"] == [True, False]
        local = (3, 4) if rank == 0 else (2, 4)
        assert after["exp_avg"] == [("DTensor", local)]
        assert r["hooks"] == {"sync off": [], "sync on": [("register_post_accumulate_grad_hook", "DTensor", local)]}
        assert r["mask"] == local
        assert r["one element"] is True                  # a one-element plain tensor is taken as replicated


def test_an_evaluation_first_and_hooks_added_in_forward(tour):
    for r in tour:
        first = r["evaluation first"]
        assert first["no_grad"] == [True, True]                     # every unit resharded
        assert first["inference_mode"].startswith("Inplace update to inference tensor")
        assert first["no_grad, kept gathered"] == [False, False]    # the optimizer holds no shard
        assert r["hook in forward"] == {"kept": [1, 2, 3], "removed": [1, 1, 1]}


def test_a_plain_tensor_with_a_sharded_gradient_raises():
    with pytest.raises(RuntimeError, match="got mixed torch.Tensor and DTensor") as info:
        run_ranks(fsdp.edit_gradient_with_a_tensor)
    assert info.value.__notes__ == ["(raised on rank 0 of 2)"]


def test_rows_are_split_as_torch_chunk_splits_them_on_three_ranks():
    got = run_ranks(fsdp.local_shapes, world_size=3, args=([(3, 7), (3, 2)],))
    want = []
    for rank in range(3):
        row = []
        for n_out in (7, 2):
            chunks = torch.chunk(torch.empty(n_out, 3), 3, dim=0)
            row.append(tuple(chunks[rank].shape) if rank < len(chunks) else (0, 3))   # an empty shard
        want.append(row)
    assert got == want
    assert want[2] == [(1, 3), (0, 3)]
