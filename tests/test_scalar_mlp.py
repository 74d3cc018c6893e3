"""The MLP on scalar Values (snippets/scalar_mlp.py) against the same network in torch."""

import math

import pytest
import torch

from snippets.scalar_mlp import MLP, to_torch, train, train_torch

X = [[0.5, -1.0], [-0.3, 0.8], [1.2, 0.1], [-0.9, -0.4]]  # (N, 2) = (4, 2)
T = [[1.0], [-1.0], [1.0], [-1.0]]  # (N, 1)


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("sizes,seed", [((2, 3, 1), 0), ((2, 4, 4, 1), 1), ((2, 1), 2)])
def test_one_backward_gives_torchs_gradient_for_every_parameter(sizes, seed):
    mlp = MLP(sizes, seed)
    params = to_torch(mlp)
    x = torch.tensor(X[0], dtype=torch.float64)
    h = x
    for depth, (W, b) in enumerate(params):
        h = W @ h + b  # (out,)
        if depth < len(params) - 1:
            h = torch.tanh(h)
    h.sum().backward()
    out = sum(mlp(X[0]))
    out.backward()
    assert close(out.data, h.sum().item())
    want = [g for W, b in params for row_w, row_b in zip(W.grad.tolist(), b.grad.tolist()) for g in row_w + [row_b]]
    got = [p.grad for p in mlp.parameters()]
    assert len(got) == len(want) == sum((n_in + 1) * n_out for n_in, n_out in zip(sizes, sizes[1:]))
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


@pytest.mark.parametrize("sizes,seed", [((2, 3, 1), 0), ((2, 4, 2), 5)])
def test_training_follows_torch_step_for_step_and_lowers_the_loss(sizes, seed):
    targets = T if sizes[-1] == 1 else [t * 2 for t in T]
    mlp = MLP(sizes, seed)
    want = train_torch(to_torch(mlp), X, targets, steps=8, lr=0.1)
    got = train(mlp, X, targets, steps=8, lr=0.1)
    assert len(got) == 8 and all(close(g, w) for g, w in zip(got, want)), (got, want)
    assert got[-1] < got[0]


def test_the_same_seed_gives_the_same_network():
    assert [p.data for p in MLP((2, 3, 1), 7).parameters()] == [p.data for p in MLP((2, 3, 1), 7).parameters()]
    assert [p.data for p in MLP((2, 3, 1), 7).parameters()] != [p.data for p in MLP((2, 3, 1), 8).parameters()]


@pytest.mark.parametrize("sizes", [(2,), (2, 0), (2, 1.5), (True, 1)])
def test_bad_sizes_are_rejected(sizes):
    with pytest.raises(ValueError, match="sizes must be two or more positive ints"):
        MLP(sizes)


def test_bad_inputs_are_rejected():
    mlp = MLP((2, 3, 1))
    with pytest.raises(ValueError, match="takes 2 inputs, got 3"):
        mlp([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="as many inputs as targets"):
        train(mlp, X, T[:2], steps=1, lr=0.1)
    with pytest.raises(ValueError, match="each input needs 2 numbers"):
        train(mlp, [[1.0]], [[1.0]], steps=1, lr=0.1)
    with pytest.raises(ValueError, match="steps must be an int"):
        train(mlp, X, T, steps=1.5, lr=0.1)
    with pytest.raises(TypeError, match="expected an MLP"):
        to_torch([1.0])


def test_train_takes_a_numpy_learning_rate():
    import numpy as np

    mlp = MLP((1, 1))
    losses = train(mlp, [[1.0]], [[0.0]], 2, np.float32(0.1))  # refused as not a number before
    assert len(losses) == 2 and losses[1] < losses[0]


def test_train_takes_numpy_rows():
    import numpy as np

    rows = dict(X=[[0.5, -0.5], [1.0, 0.0]], T=[[1.0], [0.0]])
    lists = train(MLP((2, 2, 1)), rows["X"], rows["T"], 2, 0.1)
    arrays = train(MLP((2, 2, 1)), np.array(rows["X"]), np.array(rows["T"]), 2, 0.1)
    assert arrays == lists


def test_train_takes_integer_and_float32_arrays_as_train_torch_does():
    import numpy as np

    X, T = np.array([[0, 0], [0, 1], [1, 0], [1, 1]]), np.array([[0], [1], [1], [0]])  # int64 XOR
    for dtype in (np.int64, np.float32):
        losses = train(MLP((2, 3, 1)), X.astype(dtype), T.astype(dtype), np.int64(2), 0.1)
        torch_losses = train_torch(to_torch(MLP((2, 3, 1))), X.astype(dtype), T.astype(dtype), 2, 0.1)
        assert losses == pytest.approx(torch_losses, rel=1e-12, abs=1e-12)
