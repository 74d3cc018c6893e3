"""Tests of snippets/distributed_accumulation.py: two gloo processes, checked against a
single-process full-batch gradient computed with plain autograd."""

import multiprocessing

import pytest
import torch

from snippets.distributed_accumulation import D, full_batch_gradient, make_data, make_model, run


@pytest.fixture(scope="module")
def results():
    before = set(multiprocessing.active_children())  # e.g. the worker that runs the pages' blocks
    out = run(world_size=2, k=2, m=2)
    assert set(multiprocessing.active_children()) <= before  # every process run started has exited
    return out


def test_all_reduce_sums(results):
    assert [r["all_reduce"] for r in results] == [1.0 + 2.0, 1.0 + 2.0]


def test_manual_and_ddp_equal_the_full_batch_gradient(results):
    # the reference written out here with plain autograd, not with the module's helpers' loop
    X, Y = make_data(8)
    model = make_model()
    ((model(X) - Y) ** 2).mean().backward()
    ref = [p.grad for p in model.parameters()]
    for g_ref, g_fb in zip(ref, full_batch_gradient(2, 2, 2)):
        assert torch.equal(g_ref, g_fb)
    for r in results:
        for key in ("manual", "ddp"):
            for g, want in zip(r[key], ref):
                assert g.shape == want.shape
                torch.testing.assert_close(g, want, rtol=0, atol=1e-14)


def test_no_sync_defers_communication_to_the_last_micro_batch(results):
    assert [r["all_reduce_calls"] for r in results] == [1, 1]
    a, b = (r["local_after_first"] for r in results)
    assert a.shape == (1, D)
    assert not torch.allclose(a, b)  # local gradients differ before the all-reduce
    assert torch.equal(results[0]["ddp"][0], results[1]["ddp"][0])  # identical after it


def test_without_scaling_by_k_the_gradient_is_k_times_too_large():
    X, Y = make_data(8)
    model = make_model()
    for j in range(4):
        ((model(X[2 * j:2 * j + 2]) - Y[2 * j:2 * j + 2]) ** 2).mean().backward()  # no 1/k
    for g, want in zip((p.grad for p in model.parameters()), full_batch_gradient(1, 4, 2)):
        torch.testing.assert_close(g, 4 * want)


def test_run_checks_its_input():
    with pytest.raises(ValueError, match="positive int"):
        run(world_size=0)
