"""Tests of snippets/saved_bytes.py: byte counts checked against arithmetic on shapes and
dtypes, not against numbers taken from the code."""

import warnings

import pytest
import torch
from torch.utils.checkpoint import checkpoint

from snippets.saved_bytes import saved_bytes, track_saved

N, D, H = 8, 16, 64
F32 = 4  # bytes per float32 element


def test_relu_saves_its_output_once():
    x = torch.randn(N, D, requires_grad=True)
    out, nbytes = saved_bytes(torch.relu, x)
    assert nbytes == N * D * F32


def test_mul_of_two_grad_inputs_saves_both():
    a = torch.randn(N, D, requires_grad=True)
    b = torch.randn(N, D, requires_grad=True)
    out, nbytes = saved_bytes(torch.mul, a, b)
    assert nbytes == 2 * N * D * F32


def test_dtype_sets_the_bytes():
    x = torch.randn(N, D, dtype=torch.float64, requires_grad=True)
    _, nbytes = saved_bytes(torch.relu, x)
    assert nbytes == N * D * 8


def test_a_tensor_saved_twice_counts_once_and_parameters_are_excluded():
    torch.manual_seed(0)
    lin = torch.nn.Linear(D, D)
    x = torch.randn(N, D, requires_grad=True)
    with track_saved(exclude=lin.parameters()) as rec:
        h = torch.relu(x)  # saves h
        out = lin(h)  # saves h again (for the weight's gradient) and the weight
    assert rec.calls >= 3
    assert rec.alive_bytes() == N * D * F32
    with track_saved() as rec_all:
        out2 = lin(torch.relu(x))
    assert rec_all.alive_bytes() == N * D * F32 + D * D * F32
    del out, out2


def test_backward_frees_what_was_saved():
    x = torch.randn(N, D, requires_grad=True)
    with track_saved() as rec:
        loss = (torch.relu(x) * 3).exp().sum()
    assert rec.alive_bytes() > 0
    loss.backward()
    assert rec.alive_bytes() == 0


def test_a_backward_through_part_of_the_graph_frees_only_that_part():
    # what the nodes it does not run saved stays (training memory: measuring after backward)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(D, D), torch.nn.ReLU(), torch.nn.Linear(D, 1))
    with track_saved(exclude=model.parameters()) as rec:
        loss = model(torch.randn(N, D)).pow(2).mean()
    full = rec.alive_bytes()
    torch.autograd.grad(loss, model[2].weight)  # runs the loss's nodes and the last Linear's
    assert 0 < rec.alive_bytes() < full         # the first Linear's input is still saved
    del loss
    assert rec.alive_bytes() == 0


def test_exclude_none_excludes_nothing():
    x = torch.randn(N, D, requires_grad=True)
    with track_saved(exclude=None) as rec:
        y = torch.relu(x)
    assert rec.alive_bytes() == N * D * F32
    del y


def test_a_kept_loss_keeps_its_graph_and_dropping_it_frees_it():
    w = torch.randn(D, requires_grad=True)
    kept = []
    with track_saved() as rec:
        for _ in range(5):
            kept.append(torch.tanh(torch.randn(N, D) * w).sum())  # tanh saves (N, D)
    assert rec.alive_bytes() == 5 * N * D * F32 + 5 * N * D * F32  # mul saves the random input too
    kept.clear()
    assert rec.alive_bytes() == 0


def mlp_blocks():
    torch.manual_seed(0)
    return torch.nn.ModuleList(
        torch.nn.Sequential(torch.nn.Linear(D, H), torch.nn.ReLU(), torch.nn.Linear(H, D)) for _ in range(3)
    )


def run(blocks, x, ckpt):
    h = x
    for b in blocks:
        h = checkpoint(b, h, use_reentrant=False) if ckpt else b(h)
    return h.pow(2).mean()


def test_checkpointing_saves_less_and_gives_the_same_gradients():
    blocks = mlp_blocks()
    x = torch.randn(N, D)
    params = list(blocks.parameters())
    with track_saved(exclude=params) as plain:
        loss_plain = run(blocks, x, ckpt=False)
    with track_saved(exclude=params) as ckpt:
        loss_ckpt = run(blocks, x, ckpt=True)
    # plain: per block its input (N, D), the ReLU output (N, H); then pow saves the output
    assert plain.alive_bytes() == 3 * (N * D + N * H) * F32 + N * D * F32
    # checkpointed: per block only its input; the block output is saved by pow
    assert ckpt.alive_bytes() == 3 * N * D * F32 + N * D * F32
    g_plain = torch.autograd.grad(loss_plain, params)
    g_ckpt = torch.autograd.grad(loss_ckpt, params)
    for a, b in zip(g_plain, g_ckpt):
        assert torch.equal(a, b)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: saved_bytes(3, torch.ones(1)), TypeError, "fn must be callable"),
        (lambda: saved_bytes(torch.relu, torch.ones(2)), ValueError, "no tensor that requires grad"),
        (lambda: track_saved(exclude=[1.0]).__enter__(), TypeError, "exclude must hold tensors"),
    ],
)
def test_bad_input_says_what_to_do(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_tracking_changes_neither_gradients_nor_the_inplace_check():
    torch.manual_seed(0)
    x = torch.randn(N, D, requires_grad=True)
    (g_plain,) = torch.autograd.grad(torch.sigmoid(x).pow(2).sum(), x)
    with track_saved():
        y = torch.sigmoid(x).pow(2).sum()
    (g_tracked,) = torch.autograd.grad(y, x)
    assert torch.equal(g_plain, g_tracked)
    with track_saved():
        s = torch.sigmoid(x)  # saves its output
    s.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()


@pytest.mark.parametrize("op", ["relu_", "sigmoid_", "exp_", "tanh_"])
def test_inplace_ops_that_save_their_result_still_backward(op):
    torch.manual_seed(0)
    x = torch.randn(N, D, requires_grad=True)
    (g_plain,) = torch.autograd.grad(getattr(x * 1, op)().pow(2).sum(), x)
    with track_saved():
        y = getattr(x * 1, op)().pow(2).sum()
    (g_tracked,) = torch.autograd.grad(y, x)
    assert torch.equal(g_plain, g_tracked)
