"""Tests of snippets/distributed_accumulation.py: two gloo processes, checked against a
single-process full-batch gradient computed with plain autograd."""

import multiprocessing

import pytest
import torch

from snippets.distributed_accumulation import D, by_hand, full_batch_gradient, make_data, make_model
from snippets.scale.launch import run_ranks


@pytest.fixture(scope="module")
def results():
    before = set(multiprocessing.active_children())  # e.g. the worker that runs the pages' blocks
    out = run_ranks(by_hand, world_size=2, args=(2, 2))
    assert set(multiprocessing.active_children()) <= before  # every process run started has exited
    return out


def test_all_reduce_sums(results):
    assert [r["SUM"] for r in results] == [1.0 + 2.0, 1.0 + 2.0]
    assert [r["AVG"] for r in results] == [(1.0 + 2.0) / 2, (1.0 + 2.0) / 2]


def test_the_manual_all_reduce_gives_the_full_batch_gradient(results):
    # the reference written out here with plain autograd, not with the module's helpers' loop
    X, Y = make_data(8)
    model = make_model()
    ((model(X) - Y) ** 2).mean().backward()
    ref = [p.grad for p in model.parameters()]
    for g_ref, g_fb in zip(ref, full_batch_gradient(2, 2, 2)):
        assert torch.equal(g_ref, g_fb)
    for r in results:
        for g, want in zip(r["manual"], ref):
            assert g.shape == want.shape
            torch.testing.assert_close(g, want, rtol=0, atol=1e-14)


def test_before_the_all_reduce_each_rank_holds_its_own_shards_gradient(results):
    X, Y = make_data(8)
    for rank, r in enumerate(results):
        model = make_model()
        rows = slice(4 * rank, 4 * rank + 4)  # this rank's k * m = 4 examples
        ((model(X[rows]) - Y[rows]) ** 2).mean().backward()
        assert r["local"][0].shape == (1, D)
        torch.testing.assert_close(r["local"][0], model.weight.grad, rtol=0, atol=1e-14)
    assert not torch.allclose(results[0]["local"][0], results[1]["local"][0])


def test_without_scaling_by_k_the_gradient_is_k_times_too_large():
    X, Y = make_data(8)
    model = make_model()
    for j in range(4):
        ((model(X[2 * j:2 * j + 2]) - Y[2 * j:2 * j + 2]) ** 2).mean().backward()  # no 1/k
    for g, want in zip((p.grad for p in model.parameters()), full_batch_gradient(1, 4, 2)):
        torch.testing.assert_close(g, 4 * want)


def test_by_hand_checks_its_sizes():
    with pytest.raises(ValueError, match="k must be a positive int; got 0"):
        by_hand(0, 2, k=0)
