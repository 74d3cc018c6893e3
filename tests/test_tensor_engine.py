"""snippets/tensor_engine.py against torch (float64), on shapes hypothesis generates.

Every value and every gradient is compared with what torch computes for the same
expression; nothing expected is copied from the engine. The same properties, run against
an engine without ``unbroadcast`` or with ``=`` instead of ``+=``, must fail (the tests bite).
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import snippets.tensor_engine as te
from snippets.engine_vs_torch import copy_weights, torch_mlp, train_both
from snippets.tensor_engine import MLP, SGD, Tensor, cross_entropy, no_grad

ATOL = 1e-10
SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------- strategies


@st.composite
def broadcastable_pair(draw, max_dims=4):
    """A result shape, then two input shapes that broadcast to it: each input drops some
    leading dimensions and sets some of the remaining ones to 1."""
    result = draw(st.lists(st.integers(1, 4), min_size=0, max_size=max_dims))
    shapes = []
    for _ in range(2):
        drop = draw(st.integers(0, len(result)))
        kept = result[drop:]
        ones = draw(st.lists(st.booleans(), min_size=len(kept), max_size=len(kept)))
        shapes.append(tuple(1 if one else n for n, one in zip(kept, ones)))
    return tuple(result), shapes[0], shapes[1]


def arrays(seed, *shapes, positive=False):
    rng = np.random.default_rng(seed)
    out = [rng.standard_normal(s) for s in shapes]
    return [np.abs(a) + 0.5 if positive else a for a in out]


def leaves(*arrays_):
    """The same data as engine leaves and as torch leaves."""
    return ([Tensor(a, requires_grad=True) for a in arrays_],
            [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays_])


def assert_same(engine_out, torch_out, engine_leaves, torch_leaves):
    """Values and every gradient equal to torch's within ATOL, and of the right shape."""
    np.testing.assert_allclose(engine_out.data, torch_out.detach().numpy(), rtol=0, atol=ATOL)
    for i, (e, t) in enumerate(zip(engine_leaves, torch_leaves)):
        want = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
        got = e.grad if e.grad is not None else np.zeros(e.shape)
        assert got.shape == tuple(t.shape), f"leaf {i}: gradient shape {got.shape}, want {tuple(t.shape)}"
        np.testing.assert_allclose(got, want, rtol=0, atol=ATOL, err_msg=f"gradient of leaf {i}")


# ----------------------------------------------------------------------------- properties

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


def check_binary(shapes, op, seed):
    """op(a, b) with broadcasting, weighted by a random constant and summed to a scalar."""
    result, sa, sb = shapes
    a, b, w = arrays(seed, sa, sb, result)
    b = np.abs(b) + 0.5 if op == "div" else b  # keep the divisor away from 0
    (ea, eb), (ta, tb) = leaves(a, b)
    eo = (BINARY[op](ea, eb) * w).sum()
    to = (BINARY[op](ta, tb) * torch.tensor(w)).sum()
    eo.backward()
    to.backward()
    assert_same(eo, to, [ea, eb], [ta, tb])


def check_chain(shapes, unary, axis_pick, keepdims, seed):
    """(a op b), then unary ops, a fork (z * tanh(z)), a reduction over drawn axes, a
    transpose, and a weighted sum: every kind of node in one graph."""
    result, sa, sb = shapes
    a, b = arrays(seed, sa, sb)
    (ea, eb), (ta, tb) = leaves(a, b)
    outs = []
    for lib, x, y in (("engine", ea, eb), ("torch", ta, tb)):
        z = x * y + x  # x used twice: a fork across broadcasting
        for name in unary:
            z = {"tanh": lambda t: t.tanh(), "relu": lambda t: t.relu(), "exp": lambda t: t.tanh().exp(),
                 "log": lambda t: (t * t + 1.0).log(), "cube": lambda t: t.tanh() ** 3, "neg": lambda t: -t,
                 "rsub": lambda t: 1.0 - t}[name](z)
        z = z * z.tanh()  # a fork on an interior node
        axes = tuple(ax for ax in range(z.ndim) if axis_pick[ax]) or None
        if lib == "engine":
            z = z.sum(axis=axes, keepdims=keepdims) if axes else z.mean()
            z = z.T if z.ndim == 2 else z.transpose() if z.ndim > 2 else z
        else:
            z = z.sum(dim=axes, keepdim=keepdims) if axes else z.mean()
            z = z.T if z.ndim == 2 else z.permute(*reversed(range(z.ndim))) if z.ndim > 2 else z
        if z.ndim >= 1:
            z = z.reshape(-1)
        w = arrays(seed + 1, tuple(z.shape))[0]
        outs.append((z * (w if lib == "engine" else torch.tensor(w))).sum())
    outs[0].backward()
    outs[1].backward()
    assert_same(outs[0], outs[1], [ea, eb], [ta, tb])


def check_matmul(n, d, m, seed):
    """relu(X @ W + b) @ V, mean: a layer with a broadcast bias and both matmul gradients."""
    x, w, b, v = arrays(seed, (n, d), (d, m), (m,), (m, 2))
    (ex, ew, eb, ev), (tx, tw, tb, tv) = leaves(x, w, b, v)
    eo = ((ex @ ew + eb).relu() @ ev).mean()
    to = ((tx @ tw + tb).relu() @ tv).mean()
    eo.backward()
    to.backward()
    assert_same(eo, to, [ex, ew, eb, ev], [tx, tw, tb, tv])


seeds = st.integers(0, 2**16)
unary_chains = st.lists(st.sampled_from(["tanh", "relu", "exp", "log", "cube", "neg", "rsub"]), max_size=4)


@settings(max_examples=150, **SETTINGS)
@given(broadcastable_pair(), st.sampled_from(sorted(BINARY)), seeds)
def test_binary_ops_broadcast_like_torch(shapes, op, seed):
    check_binary(shapes, op, seed)


@settings(max_examples=150, **SETTINGS)
@given(broadcastable_pair(), unary_chains, st.lists(st.booleans(), min_size=4, max_size=4), st.booleans(), seeds)
def test_op_chains_match_torch(shapes, unary, axis_pick, keepdims, seed):
    check_chain(shapes, unary, axis_pick, keepdims, seed)


@settings(max_examples=60, **SETTINGS)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), seeds)
def test_matmul_layer_matches_torch(n, d, m, seed):
    check_matmul(n, d, m, seed)


@settings(max_examples=60, **SETTINGS)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data(), st.booleans(),
       st.sampled_from([1.0, 1000.0, -1000.0]), seeds)
def test_logsumexp_matches_torch(shape, data, keepdims, scale, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    (x,) = arrays(seed, tuple(shape))
    x = x + scale  # logits around 1000 overflow a naive exp
    (ex,), (tx,) = leaves(x)
    eo, to = ex.logsumexp(axis, keepdims=keepdims), torch.logsumexp(tx, axis, keepdim=keepdims)
    assert np.all(np.isfinite(eo.data))
    w = arrays(seed + 1, tuple(to.shape))[0]
    (eo * w).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    assert_same(eo, to, [ex], [tx])


@settings(max_examples=60, **SETTINGS)
@given(st.integers(1, 6), st.integers(1, 5), st.sampled_from([1.0, 10.0, 1000.0]), seeds)
def test_cross_entropy_matches_torch(n, c, scale, seed):
    (x,) = arrays(seed, (n, c))
    x = x * scale
    targets = np.random.default_rng(seed).integers(0, c, n)
    (ex,), (tx,) = leaves(x)
    eo = cross_entropy(ex, targets)
    to = F.cross_entropy(tx, torch.tensor(targets))
    eo.backward()
    to.backward()
    assert np.isfinite(eo.data)
    assert_same(eo, to, [ex], [tx])


@settings(max_examples=40, **SETTINGS)
@given(st.permutations([0, 1, 2]), st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)), seeds)
def test_transpose_and_reshape_match_torch(axes, shape, seed):
    x, w = arrays(seed, shape, tuple(shape[a] for a in axes))
    (ex,), (tx,) = leaves(x)
    eo = ex.transpose(axes) * w                  # weights make every position count differently
    to = tx.permute(*axes) * torch.tensor(w)
    eo = eo.reshape(-1).tanh().sum()
    to = to.reshape(-1).tanh().sum()
    eo.backward()
    to.backward()
    assert_same(eo, to, [ex], [tx])


def test_losses_at_1000():
    logits = np.array([[1000.0, 1000.0, 0.0], [1000.0, 0.0, -1000.0]])  # (N, C) = (2, 3)
    (ex,), (tx,) = leaves(logits)
    lse = ex.logsumexp(1)
    np.testing.assert_allclose(lse.data, torch.logsumexp(tx, 1).detach().numpy(), rtol=0, atol=ATOL)
    assert lse.data[0] == pytest.approx(1000.0 + np.log(2.0), abs=1e-12)
    with np.errstate(over="ignore"):
        assert np.isinf(np.log(np.exp(logits).sum(1))[0])  # the naive formula overflows
    loss = cross_entropy(ex, np.array([0, 1]))
    tloss = F.cross_entropy(tx, torch.tensor([0, 1]))
    loss.backward()
    tloss.backward()
    assert_same(loss, tloss, [ex], [tx])


def test_losses_match_the_custom_functions():
    """The engine's losses against snippets/custom_losses.py (the torch Function versions)."""
    losses = pytest.importorskip("snippets.custom_losses")
    for seed, scale in [(0, 1.0), (1, 30.0), (2, 1000.0)]:
        (x,) = arrays(seed, (5, 4))
        x = x * scale
        targets = np.random.default_rng(seed).integers(0, 4, 5)
        (ex,), (tx,) = leaves(x)
        eo, to = ex.logsumexp(-1), losses.StableLogSumExp.apply(tx)
        eo.backward(np.arange(5.0))
        to.backward(torch.arange(5.0, dtype=torch.float64))
        assert_same(eo, to, [ex], [tx])
        (ex,), (tx,) = leaves(x)
        eo, to = cross_entropy(ex, targets), losses.SoftmaxCrossEntropy.apply(tx, torch.from_numpy(targets))
        eo.backward()
        to.backward()
        assert_same(eo, to, [ex], [tx])


# ----------------------------------------------------------------------------- the tests bite


def run_property(check, strategy, max_examples=100):
    """Run ``check`` as a hypothesis property (generation only, no shrinking)."""
    prop = settings(max_examples=max_examples, phases=[Phase.generate], database=None, **SETTINGS)(
        given(*strategy)(check))
    prop()


def test_without_unbroadcast_the_properties_fail(monkeypatch):
    run_property(check_binary, (broadcastable_pair(), st.sampled_from(sorted(BINARY)), seeds))  # passes
    monkeypatch.setattr(te, "unbroadcast", lambda grad, shape: grad)
    with pytest.raises(ValueError, match="must sum over broadcast dimensions"):
        run_property(check_binary, (broadcastable_pair(), st.sampled_from(sorted(BINARY)), seeds))
    # also when the gradient's shape is not checked: then the values differ from torch
    monkeypatch.setattr(Tensor, "_send", _send_unchecked)
    with pytest.raises((AssertionError, ValueError)):
        run_property(check_binary, (broadcastable_pair(), st.sampled_from(sorted(BINARY)), seeds))


def test_a_bias_only_unbroadcast_fails(monkeypatch):
    """The rule for a bias (sum over axis 0) gives the right shape, wrong values elsewhere."""
    def bias_rule(grad, shape):
        return grad.sum(axis=0).reshape(shape) if grad.shape != shape else grad
    monkeypatch.setattr(te, "unbroadcast", bias_rule)
    check_binary(((4, 3), (4, 3), (3,)), "add", 0)  # (N, D) + (D,): the bias case works
    with pytest.raises(AssertionError, match="gradient of leaf 0"):
        check_binary(((3, 3), (3, 1), (1, 3)), "mul", 0)  # (N, 1) * (1, N): it does not
    with pytest.raises((AssertionError, ValueError)):  # and the property finds it on its own
        run_property(check_binary, (broadcastable_pair(), st.sampled_from(sorted(BINARY)), seeds))


def _send_unchecked(self, grad):
    if self.requires_grad:
        self.grad = grad if self.grad is None else self.grad + grad


def _send_assign(self, grad):
    if self.requires_grad:
        self.grad = grad  # = instead of +=


def test_with_assignment_instead_of_accumulation_the_properties_fail(monkeypatch):
    strategy = (broadcastable_pair(), unary_chains, st.lists(st.booleans(), min_size=4, max_size=4),
                st.booleans(), seeds)
    run_property(check_chain, strategy, 50)  # passes
    monkeypatch.setattr(Tensor, "_send", _send_assign)
    with pytest.raises(AssertionError):
        run_property(check_chain, strategy, 50)


# ----------------------------------------------------------------------------- training


def test_mlp_trains_like_torch():
    losses, tlosses, mlp, net = train_both(steps=20, lr=0.1)
    assert len(losses) == len(tlosses) == 20
    assert np.abs(losses - tlosses).max() < 1e-10
    assert losses[-1] < losses[0] - 0.1  # it learns
    for layer, lin in zip(mlp.layers, [net[0], net[2]]):
        np.testing.assert_allclose(layer.W.data, lin.weight.detach().numpy().T, rtol=0, atol=1e-10)
        np.testing.assert_allclose(layer.b.data, lin.bias.detach().numpy(), rtol=0, atol=1e-10)


# ----------------------------------------------------------------------------- API and errors


def test_unbroadcast_against_torch_sum_to_size():
    g = torch.randn(2, 3, 4, dtype=torch.float64)
    for shape in [(3, 4), (4,), (1, 4), (3, 1), (2, 1, 4), (1, 1, 1), ()]:
        want = g.sum_to_size(shape) if shape else g.sum()
        np.testing.assert_allclose(te.unbroadcast(g.numpy(), shape), want.numpy(), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="cannot come from broadcasting"):
        te.unbroadcast(g.numpy(), (2, 3, 4, 5))


def test_errors_say_what_to_do():
    a = Tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"needs a seed gradient: pass grad=np.ones\(\(2, 3\)\)"):
        (a * 2).backward()
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(2,\) do not broadcast"):
        a + Tensor(np.ones(2))
    with pytest.raises(ValueError, match=r"got \(2, 3\) @ \(2, 3\)"):
        a @ a
    with pytest.raises(RuntimeError, match="does not require grad"):
        Tensor(1.0).backward()
    with pytest.raises(TypeError, match="constant exponent"):
        a ** a
    with pytest.raises(ValueError, match="targets must be integers"):
        cross_entropy(a, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="lr must be positive"):
        SGD([a], 0.0)


def test_seeded_backward_accumulation_and_no_grad():
    a = Tensor(np.arange(3.0), requires_grad=True)
    (a * a).backward(np.ones(3))
    (a * a).backward(np.ones(3))  # leaves accumulate across calls, as in torch
    np.testing.assert_array_equal(a.grad, 2 * 2 * np.arange(3.0))
    with no_grad():
        b = a * 2
    assert not b.requires_grad and te._grad_enabled
    t = torch.arange(3.0, dtype=torch.float64, requires_grad=True)
    e = Tensor(t.detach().numpy(), requires_grad=True)
    e.T.reshape(3, 1).transpose((1, 0)).sum().backward()
    assert e.grad.shape == (3,)


def test_copy_weights_checks_shapes():
    with pytest.raises(ValueError, match="layer shapes differ"):
        copy_weights(torch_mlp((3, 4, 2), 0), MLP([3, 5, 2]))
    with pytest.raises(ValueError, match="Linear layers"):
        copy_weights(torch_mlp((3, 2), 0), MLP([3, 5, 2]))


def test_benchmark_runs():
    from snippets.bench_engine import bench

    result = bench(repeats=2, warmup=0, batch=4, sizes=(3, 5, 2))
    assert set(result) == {"engine", "torch", "ratio"}
    assert result["engine"] > 0 and result["torch"] > 0


def test_division_and_mean_round_as_torchs():
    # torch divides (a / b, and a mean as sum / count); multiplying by the reciprocal rounds
    # otherwise in the last bit on these three numbers, and overflows for a tiny divisor
    x = [0.1257302210933933, -0.1321048632913019, 0.6404226504432821]  # (3,)
    t = torch.tensor(x, dtype=torch.float64)
    assert Tensor(x).mean().data.item() == t.mean().item() != t.sum().item() * (1 / 3)
    assert (Tensor(x) / 3.0).data.tolist() == (t / 3.0).tolist()
    assert (Tensor([1e-10]) / Tensor([1e-310])).data.tolist() == (torch.tensor([1e-10], dtype=torch.float64) /
                                                                  torch.tensor([1e-310], dtype=torch.float64)).tolist()


def test_the_page_states_the_engine_s_length_to_within_ten_lines():
    import ast
    import re
    from pathlib import Path

    source = Path(te.__file__).read_text(encoding="utf-8")
    lines = source.splitlines()
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    code = sum(1 for i, line in enumerate(lines, 1)
               if line.strip() and not line.strip().startswith("#") and i not in docstrings)
    page = (Path(__file__).parent.parent / "docs/part3/tensor-engine.md").read_text(encoding="utf-8")
    stated = re.search(r"about (\d+) lines, (\d+) of them code", page)
    assert stated, "the page no longer states the engine's length"
    assert abs(len(lines) - int(stated[1])) <= 10 and abs(code - int(stated[2])) <= 10, (len(lines), code)


def test_an_int_past_int64_and_a_fraction_exponent_are_taken():
    from fractions import Fraction

    assert Tensor(2 ** 64).data == 2.0 ** 64 and Tensor([1, 2 ** 64]).data.dtype == np.float64
    x = Tensor([4.0], requires_grad=True)
    y = x ** Fraction(1, 2)                          # NumPy holds a Fraction as an object
    y.backward(np.ones(1))
    assert y.data.tolist() == [2.0] and x.grad.tolist() == [0.25]


def test_a_certain_row_gives_a_loss_of_plus_zero_and_a_none_inside_a_list_is_refused():
    assert str(cross_entropy(Tensor([[40.0, 0.0]]), [0]).data) == str(
        F.cross_entropy(torch.tensor([[40.0, 0.0]], dtype=torch.float64), torch.tensor([0])).item())
    for bad in ([None, 1.0], [2 ** 64, "3"]):
        with pytest.raises(TypeError, match="must be real numbers"):
            Tensor(bad)


def test_torch_s_two_dim_transpose_is_refused_by_name_and_a_reshape_takes_a_list():
    # NumPy's a.transpose(0, 1) is the identity on 2-D; a reader who means torch's swap gets an error
    t = te.Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    for call in (lambda: t.transpose(0, 1), lambda: t.transpose(1)):
        with pytest.raises(TypeError, match=r"one tuple of axes.*torch's t\.transpose\(i, j\)"):
            call()
    y = t.reshape([3, 2])  # a list, as torch takes
    y.sum().backward()
    assert y.shape == (3, 2) and t.grad.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("name", ["sum", "mean", "logsumexp"])
@pytest.mark.parametrize("axis", [0, -1])
def test_a_0d_tensor_reduces_over_dim_0_or_minus_1_as_torch_does(name, axis):
    x = Tensor(3.0, requires_grad=True)
    y = getattr(x, name)(axis=axis)
    y.backward()
    t = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    ty = getattr(t, name)(axis)
    ty.backward()
    assert y.data.shape == tuple(ty.shape) and float(y.data) == ty.item() and float(x.grad) == t.grad.item()
    with pytest.raises(ValueError, match=r"axis 1 is out of range for a tensor with 0 dimensions \(axis=None"):
        getattr(Tensor(3.0), name)(axis=1)
    if name != "logsumexp":      # it takes one axis; torch refuses a dimension named twice
        with pytest.raises(ValueError, match=r"axis \(0, -1\) names a dimension twice"):
            getattr(Tensor(3.0), name)(axis=(0, -1))
