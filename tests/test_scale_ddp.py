"""Tests of snippets/scale/ddp.py: what DDP leaves on 2 gloo processes, against single-process
gradients written out here with plain autograd (not with the module's loss or models)."""

import pytest
import torch

from snippets.scale import ddp
from snippets.scale.launch import run_ranks

X = torch.tensor([[1.0, 2.0], [1.0, 0.0], [3.0, 1.0], [0.0, 1.0]], dtype=torch.float64)
Y = torch.tensor([[1.0], [0.0], [2.0], [2.0]], dtype=torch.float64)


def grad_of(weight, x, y):
    """d/dW of mean((x @ W.T - y)^2), W (1, 2)."""
    w = torch.tensor(weight, dtype=torch.float64, requires_grad=True)
    ((x @ w.T - y) ** 2).mean().backward()
    return w.grad


def rows(rank):
    return X[2 * rank:2 * rank + 2], Y[2 * rank:2 * rank + 2]


def t(value):
    return torch.tensor(value, dtype=torch.float64)


@pytest.fixture(scope="module")
def tour():
    return run_ranks(ddp.tour)


def test_the_module_uses_this_files_data():
    assert torch.equal(ddp.X, X) and torch.equal(ddp.Y, Y)
    for rank in range(2):
        assert all(torch.equal(a, b) for a, b in zip(ddp.shard(rank), rows(rank)))


def test_construction_copies_rank_0s_weights_and_buffers(tour):
    r0, r1 = (r["construction"] for r in tour)
    assert r0["weight"] == [[[1.0, 1.0]], [[1.0, 1.0]]]
    assert r1["weight"] == [[[2.0, 2.0]], [[1.0, 1.0]]]
    assert r0["buffer"][:2] == [10.0, 10.0] and r1["buffer"][:2] == [11.0, 10.0]
    # each rank changed its buffer locally; the next forward copies rank 0's again
    assert r0["buffer"][2:] == [11.0, 11.0] and r1["buffer"][2:] == [12.0, 11.0]


def test_a_forward_under_no_grad_skips_the_next_forwards_buffer_copy(tour):
    # after the evaluation forward each rank holds 10 + rank + 1; the first training forward
    # keeps that, the second copies rank 0's
    for rank, r in enumerate(tour):
        assert r["buffers after evaluation"] == [11.0, 11.0 + rank + 1, 12.0]


def test_only_broadcast_buffers_false_alone_or_init_sync_false_skips_the_copy_at_construction(tour):
    for rank, r in enumerate(tour):
        # (buffer, weight): rank r starts with buffer 10 + r and weight 1 + r
        assert r["buffers at construction"] == {"broadcast_buffers=False": (10.0 + rank, 1.0),
                                                "forward_sync_buffers=False": (10.0, 1.0),
                                                "both, forward_sync_buffers=True": (10.0, 1.0),
                                                "init_sync=False": (10.0 + rank, 1.0 + rank)}


def test_ddp_grad_is_the_mean_of_the_local_gradients_and_the_full_batch_gradient(tour):
    local = [grad_of([[1.0, 1.0]], *rows(rank)) for rank in range(2)]
    full = grad_of([[1.0, 1.0]], X, Y)
    assert not torch.equal(local[0], local[1])
    assert torch.equal((local[0] + local[1]) / 2, full)
    for rank, r in enumerate(tour):
        assert torch.equal(t(r["construction"]["local"]), local[rank])
        assert torch.equal(t(r["construction"]["ddp"]), full)


def test_a_summing_hook_gives_world_size_times_the_mean(tour):
    full = grad_of([[1.0, 1.0]], X, Y)
    for r in tour:
        assert torch.equal(t(r["summing"]), 2 * full)


def test_buckets_are_one_at_the_first_step_then_cut_at_the_cap_in_the_order_gradients_came(tour):
    layer, cap = 16 * 16, 2.5 * 1024 / 4              # elements of one layer; the cap in float32 elements
    for r in tour:
        first, *later = r["buckets"]
        assert first == [4 * layer]
        assert later[0] == later[1] and sum(later[0]) == 4 * layer and len(later[0]) > 1
        for size in later[0][:-1]:                    # a bucket closes at the first layer that fills the cap
            assert size >= cap and size - layer < cap
        # static_graph waits one more step before it cuts, and cuts the same way
        assert r["buckets, static_graph"] == [first, first, later[0]]


def test_create_graph_gives_the_mean_with_a_local_graph(tour):
    full = grad_of([[1.0, 1.0]], X, Y)
    penalties = []
    for r in tour:
        mean, after = r["create_graph"]
        assert torch.equal(t(mean), full)                          # the value is averaged
        penalties.append(after)
    assert penalties[0] != penalties[1]                            # the penalty's gradient is not


def test_no_sync_is_decided_by_where_the_forward_ran(tour):
    for r in tour:
        # a second backward of one forward: no all-reduce; the last forward decides, not the loss's
        assert r["no_sync at forward"] == [0, 1, 2, 2, 3, 3]


def test_no_sync_all_reduces_once_and_gives_the_same_gradient(tour):
    full = grad_of([[1.0, 1.0]], X, Y)
    first = [grad_of([[1.0, 1.0]], X[2 * r:2 * r + 1], Y[2 * r:2 * r + 1]) / 2 for r in range(2)]
    for rank, r in enumerate(tour):
        assert r["no_sync"]["calls"] == [0, 1]
        assert torch.equal(t(r["no_sync"]["grads"][0]), first[rank])   # local, not averaged
        assert torch.equal(t(r["no_sync"]["grads"][1]), full)
        assert r["every micro-batch"]["calls"] == [1, 2]
        assert torch.equal(t(r["every micro-batch"]["grads"][0]), (first[0] + first[1]) / 2)
        assert torch.equal(t(r["every micro-batch"]["grads"][1]), full)


def two_heads_local_grad(rank):
    """d/d head_a.weight of the mean squared error of head_a(body(x)), every weight 1."""
    x, y = rows(rank)
    body = torch.ones(2, 2, dtype=torch.float64)
    head = torch.ones(1, 2, dtype=torch.float64, requires_grad=True)
    (((x @ body.T) @ head.T - y) ** 2).mean().backward()
    return head.grad


def test_unused_parameters_leave_local_gradients_then_raise(tour):
    local = [two_heads_local_grad(rank) for rank in range(2)]
    for rank, r in enumerate(tour):
        default, found = r["unused, default"], r["unused, found"]
        assert torch.equal(t(default["local"]), local[rank])
        assert torch.equal(t(default["grad"]), local[rank])            # never averaged
        assert default["second step"].startswith("Expected to have finished reduction in the prior iteration")
        assert torch.equal(t(found["grad"]), (local[0] + local[1]) / 2)
        assert found["head_b grad"] is None and found["second step"] == "runs"


def test_find_unused_parameters_puts_a_node_of_ddps_own_on_the_output(tour):
    own = type(ddp.TwoHeads()(X[:2]).grad_fn).__name__   # the module alone, without DDP
    for r in tour:
        assert r["output node"] == {"default": own, "find_unused_parameters": "_DDPSinkBackward",
                                    "static_graph, steps 1 and 2": ["_DDPSinkBackward", own]}


def checkpointed_reference(tied, x, y):
    """Gradients of block and head for Checkpointed's weights, written out: the block's two
    applications get separate leaves, so each part can be read."""
    W = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    H = torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    first, second = W.clone().requires_grad_(), W.clone().requires_grad_()
    h = x @ first.T
    if tied:
        h = h @ second.T
    ((h @ H.T - y) ** 2).mean().backward()
    return {"first": first.grad, "second": second.grad, "head": H.grad}


def test_static_graph_gives_the_full_batch_gradient_under_reentrant_checkpointing(tour):
    ref = checkpointed_reference(True, X, Y)
    block = ref["first"] + ref["second"]
    parts = [checkpointed_reference(True, *rows(rank)) for rank in range(2)]
    for rank, r in enumerate(tour):
        sg = r["static_graph"]
        for key in ("tied, static_graph", "tied, non-reentrant"):
            for step in sg[key]:
                assert torch.equal(t(step["block.weight"]), block)
                assert torch.equal(t(step["head.weight"]), ref["head"])
        # the default: the mean of the second application's parts plus this rank's own first part
        wrong = t(sg["tied, default"][0]["block.weight"])
        assert torch.equal(wrong, (parts[0]["second"] + parts[1]["second"]) / 2 + parts[rank]["first"])
        assert not torch.equal(wrong, block)
        spare = checkpointed_reference(False, X, Y)
        for step in sg["spare, static_graph"]:
            assert torch.equal(t(step["block.weight"]), spare["first"])
            assert step["spare.weight"] is None
    assert tour[0]["static_graph"]["tied, default"] != tour[1]["static_graph"]["tied, default"]


def test_the_reference_helper_agrees_with_the_written_out_gradients():
    ref = checkpointed_reference(True, X, Y)
    model = ddp.Checkpointed(tied=True)
    got = ddp.full_batch_gradients(model)
    assert torch.equal(t(got["block.weight"]), ref["first"] + ref["second"])
    assert torch.equal(t(got["head.weight"]), ref["head"])
    assert ddp.full_batch_gradients(model) == got     # a second call: cleared, not added


def errors(rank, world_size):
    """Both DDP errors of the page, caught on each rank: their first sentences."""
    out = []
    for fn in (ddp.unused_parameter_error, ddp.checkpoint_with_find_unused):
        try:
            fn(rank, world_size)
            out.append(None)
        except RuntimeError as error:
            out.append(str(error).split(".")[0])
    return out


def drills(rank, world_size):
    return {"drift": ddp.accumulation_step(rank, world_size),
            "fixed": ddp.accumulation_step_fixed(rank, world_size),
            "sum": ddp.logged_step(rank, world_size, ddp.bucket_sizes_hook),
            "mean": ddp.logged_step(rank, world_size, ddp.bucket_sizes_mean_hook)}


def test_the_two_errors_are_raised_on_every_rank():
    assert run_ranks(errors) == [["Expected to have finished reduction in the prior iteration before starting a new one",
                                  "Expected to mark a variable ready only once"]] * 2


def test_the_drills_show_their_symptoms_and_the_fixes_remove_them():
    out = run_ranks(drills)
    full = grad_of([[1.0, 1.0]], X, Y)
    one = torch.ones(1, 2, dtype=torch.float64)
    for rank, r in enumerate(out):
        assert torch.equal(t(r["drift"]), one - 0.5 * grad_of([[1.0, 1.0]], *rows(rank)))   # its own gradient
        assert torch.equal(t(r["fixed"]), one - 0.5 * full)
        assert torch.equal(t(r["sum"]["grad"]), 2 * full) and r["sum"]["bucket sizes"] == [2]
        assert torch.equal(t(r["mean"]["grad"]), full) and r["mean"]["bucket sizes"] == [2]
    assert out[0]["drift"] != out[1]["drift"]
