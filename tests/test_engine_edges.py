"""Every op of the two engines against torch, at random points and at the edge values.

Edge values: 0, -0.0, +inf, -inf, NaN, and ties (relu at 0; rows whose maximum is shared, for
logsumexp and cross_entropy). For each op the forward value and every input's gradient must
equal torch's (float64): NaN where torch gives NaN, the same infinity where torch gives one,
and the finite numbers to 1e-12 relative (the engines use their own exp, log and tanh, so
the last bits may differ). The sign of a zero is not
compared. The tensor engine's backward is also seeded with random and edge gradients (NaN and
inf arriving from later ops); the scalar engine, whose seed is always 1, gets them through a
multiply by a constant.

Dtypes: both engines compute in float64 only. A float32 array given to the tensor engine is
converted to float64, so the engine matches torch's float64 result on the float32 values
(tested for every op); the scalar engine takes Python floats (float64) and refuses a NumPy
float32. Where the engines deliberately differ from torch, the test asserts the difference that
their pages state: the scalar engine raises for ``log`` of a negative number and for a
fractional power of a negative number (torch returns NaN), and at -0.0 both engines compute
``x ** 0.5``'s gradient and ``x ** -0.5`` as C's ``pow`` does (+inf; torch's rsqrt gives -inf).
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from snippets import scalar_engine as se
from snippets import tensor_engine as te

INF, NAN = math.inf, math.nan
EDGES = [-0.0, 0.0, INF, -INF, NAN]
RANDOM = [float(v) for v in np.random.default_rng(0).uniform(-3, 3, 6)] + [0.25, 1e-3, 2.0, 1e-310]  # subnormal
POINTS = EDGES + RANDOM
POWERS = [0, 1, 2, 3, -1, -2, 0.5, -0.5, 1.5, 2.5, -1.5]
DTYPES = [np.float32, np.float64]


def assert_same(got, want, what):
    """NaN and each infinity where torch has them; finite values to 1e-12 relative."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, torch {want.shape}"
    for name, test in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
        assert np.array_equal(test(got), test(want)), f"{what}: {name} at\n{got}\ntorch:\n{want}"
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-14, err_msg=what)


def seeds(shape):
    """Upstream gradients: ones, random numbers, and the edge values in turn."""
    n = int(np.prod(shape))
    return {
        "ones": np.ones(shape),
        "random": np.random.default_rng(1).standard_normal(shape),
        "edges": np.resize(np.array(EDGES + [1.0]), n).reshape(shape),
    }


def torch_leaf(a):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def engine_leaf(a, dtype):
    t = te.Tensor(np.asarray(a, dtype=dtype), requires_grad=True)
    assert t.data.dtype == np.float64  # float32 in, float64 inside
    return t


def run_tensor(f_engine, f_torch, arrays, dtype, seed_name):
    """Forward and backward in both; compare the value and every gradient with torch's."""
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]  # the values the engine receives
    e_in = [engine_leaf(a, dtype) for a in arrays]
    t_in = [torch_leaf(a) for a in arrays]
    e_out, t_out = f_engine(*e_in), f_torch(*t_in)
    assert_same(e_out.data, t_out.detach().numpy(), "value")
    seed = seeds(e_out.shape)[seed_name]
    e_out.backward(seed)
    t_out.backward(torch.tensor(seed))
    for i, (e, t) in enumerate(zip(e_in, t_in)):
        want = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
        got = e.grad if e.grad is not None else np.zeros(e.shape)
        assert_same(got, want, f"gradient of input {i} (seed {seed_name})")


# ---------------------------------------------------------------------------------------------
# Tensor engine
# ---------------------------------------------------------------------------------------------

X = np.array(POINTS)

UNARY = {
    "exp": lambda t: t.exp(),
    "log": lambda t: t.log(),
    "tanh": lambda t: t.tanh(),
    "relu": lambda t: t.relu(),
    "-x": lambda t: -t,
    "x + 1": lambda t: t + 1.0,
    "x - 2": lambda t: t - 2.0,
    "2 - x": lambda t: 2.0 - t,
    "3 * x": lambda t: 3.0 * t,
    "x / 2": lambda t: t / 2.0,
    "2 / x": lambda t: 2.0 / t,
    **{f"x ** {c}": (lambda c: lambda t: t ** c)(c) for c in POWERS},
}


RSQRT = {"x ** 0.5", "x ** -0.5"}  # torch: sqrt and rsqrt, which differ from pow at -0.0, -inf


def points_for(name):
    """POINTS, less -0.0 and -inf for the two powers torch computes with sqrt and rsqrt
    (test_square_root_powers_at_negative_zero_and_minus_inf_follow_c_pow)."""
    return [x for x in POINTS if not (name in RSQRT and x in (0.0, -INF) and math.copysign(1, x) < 0)]


@pytest.mark.parametrize("seed", ["ones", "random", "edges"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", UNARY)
def test_tensor_engine_elementwise_ops_match_torch(name, dtype, seed):
    run_tensor(UNARY[name], UNARY[name], [np.array(points_for(name))], dtype, seed)


@pytest.mark.parametrize("x, c_pow_rsqrt, torch_rsqrt", [(-0.0, INF, -INF), (-INF, 0.0, NAN)])
@pytest.mark.parametrize("engine", ["tensor", "scalar"])
def test_square_root_powers_at_negative_zero_and_minus_inf_follow_c_pow(engine, x, c_pow_rsqrt, torch_rsqrt):
    # torch computes x ** -0.5 as rsqrt(x) = 1 / sqrt(x): -inf at -0.0 and NaN at -inf; the
    # engines use pow, whose C rules give +inf and 0. The gradient of x ** 0.5 is 0.5 * x ** -0.5.
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (t ** 0.5).backward()
    assert_same([(t.detach() ** -0.5).item(), t.grad.item()], [torch_rsqrt, 0.5 * torch_rsqrt], "torch")
    if engine == "scalar" and x < 0:  # -inf: a fractional power of a negative number raises
        with pytest.raises(ValueError, match="is not a real number"):
            se.Value(x) ** 0.5
        return
    if engine == "tensor":
        v = te.Tensor([x], requires_grad=True)
        (v ** 0.5).sum().backward()
        got = (te.Tensor([x]) ** -0.5).data[0], v.grad[0]
    else:
        v = se.Value(x)
        (v ** 0.5).backward()
        got = (se.Value(x) ** -0.5).data, v.grad
    assert_same(got, [c_pow_rsqrt, 0.5 * c_pow_rsqrt], engine)


BINARY = {
    "a + b": lambda a, b: a + b,
    "a - b": lambda a, b: a - b,
    "a * b": lambda a, b: a * b,
    "a / b": lambda a, b: a / b,
}


@pytest.mark.parametrize("seed", ["ones", "random", "edges"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", BINARY)
def test_tensor_engine_binary_ops_match_torch_on_every_pair_of_points(name, dtype, seed):
    # (P, 1) op (1, P) -> (P, P): every pair, and the backward sums inf and NaN over a broadcast
    run_tensor(BINARY[name], BINARY[name], [X[:, None], X[None, :]], dtype, seed)


ROWS = np.array([
    [0.0, 0.0, 0.0],        # a tie at 0
    [-0.0, 0.0, -1.0],
    [-INF, -INF, -INF],     # the fully masked row of attention
    [-INF, 1.0, 2.0],
    [INF, 1.0, 2.0],
    [INF, INF, 0.0],
    [INF, -INF, 0.0],
    [NAN, 1.0, 2.0],
    [1.0, 1.0, 1.0],        # all tied
    [2.0, 2.0, -1.0],       # tied maximum
    [1000.0, 1000.0, 0.0],  # large, tied
    [1e17, 1e17, 0.0],      # tied, and log 2 is below the spacing of 1e17
    *np.random.default_rng(2).standard_normal((3, 3)),
])

# name -> (method, axis, keepdims): the engine's call and torch's (axis -> dim, keepdims -> keepdim)
REDUCTION_CALLS = {
    "sum": ("sum", None, False),
    "sum axis 0": ("sum", 0, False),
    "sum axis 1 keepdims": ("sum", 1, True),
    "mean": ("mean", None, False),
    "mean axis 1": ("mean", 1, False),
    "mean axis (0, 1) keepdims": ("mean", (0, 1), True),
}


def _engine_reduction(method, axis, keepdims):
    return lambda t: getattr(t, method)(**({} if axis is None else {"axis": axis, "keepdims": keepdims}))


def _torch_reduction(method, axis, keepdims):
    return lambda t: getattr(t, method)(**({} if axis is None else {"dim": axis, "keepdim": keepdims}))


REDUCTIONS = {n: _engine_reduction(*c) for n, c in REDUCTION_CALLS.items()}
TORCH_REDUCTIONS = {n: _torch_reduction(*c) for n, c in REDUCTION_CALLS.items()}
for table in (REDUCTIONS, TORCH_REDUCTIONS):  # the same calls in both
    table["reshape"] = lambda t: t.reshape(3, -1)
    table["transpose"] = lambda t: t.T


@pytest.mark.parametrize("seed", ["ones", "random", "edges"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_tensor_engine_reductions_and_shapes_match_torch(name, dtype, seed):
    run_tensor(REDUCTIONS[name], TORCH_REDUCTIONS[name], [ROWS], dtype, seed)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0,)])
@pytest.mark.parametrize("name", ["sum", "mean", "sum axis 0", "mean axis 0"])
def test_tensor_engine_reductions_of_an_empty_tensor_match_torch(name, shape):
    axis = 0 if "axis" in name else None
    op = name.split()[0]
    run_tensor(lambda t: getattr(t, op)(axis=axis),
               lambda t: getattr(t, op)() if axis is None else getattr(t, op)(dim=axis),
               [np.zeros(shape)], np.float64, "ones")


@pytest.mark.parametrize("seed", ["ones", "random", "edges"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("axis, keepdims", [(1, False), (-1, True), (0, False)])
def test_tensor_engine_logsumexp_matches_torch_on_inf_nan_and_tied_rows(axis, keepdims, dtype, seed):
    run_tensor(lambda t: t.logsumexp(axis, keepdims=keepdims),
               lambda t: torch.logsumexp(t, dim=axis, keepdim=keepdims), [ROWS], dtype, seed)


@pytest.mark.parametrize("shape, axis", [((2, 0), 1), ((0, 3), 1), ((0, 3), 0)])
def test_tensor_engine_logsumexp_over_an_empty_axis_is_minus_inf_as_in_torch(shape, axis):
    run_tensor(lambda t: t.logsumexp(axis), lambda t: torch.logsumexp(t, dim=axis),
               [np.zeros(shape)], np.float64, "ones")


@pytest.mark.parametrize("seed", ["ones", "random", "edges"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("target", [0, 1, 2])
def test_tensor_engine_cross_entropy_matches_torch_on_each_row(target, dtype, seed):
    # one row at a time, so a NaN row does not hide what the other rows give
    for row in ROWS:
        run_tensor(lambda t: te.cross_entropy(t, [target]),
                   lambda t: F.cross_entropy(t, torch.tensor([target])), [row[None, :]], dtype, seed)


def test_tensor_engine_cross_entropy_of_an_empty_batch_is_nan_as_in_torch():
    run_tensor(lambda t: te.cross_entropy(t, np.zeros(0, dtype=int)),
               lambda t: F.cross_entropy(t, torch.zeros(0, dtype=torch.long)),
               [np.zeros((0, 3))], np.float64, "ones")


MATRICES = {
    "edges in A": (np.resize(X, (4, 7)), np.random.default_rng(3).standard_normal((7, 2))),
    "edges in B": (np.random.default_rng(4).standard_normal((2, 7)), np.resize(X[::-1], (7, 3))),
    "zeros against inf": (np.zeros((2, 2)), np.array([[INF, 1.0], [1.0, -INF]])),
    "empty inner": (np.zeros((2, 0)), np.zeros((0, 3))),
}


@pytest.mark.parametrize("seed", ["ones", "random", "edges"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", MATRICES)
def test_tensor_engine_matmul_matches_torch(name, dtype, seed):
    run_tensor(lambda a, b: a @ b, lambda a, b: a @ b, MATRICES[name], dtype, seed)


def test_tensor_engine_is_silent_where_torch_is(recwarn):
    x = te.Tensor(X, requires_grad=True)
    loss = (x.log() + (x ** -1) + x.exp() * 0.0 + x.relu() + (x ** 0.5)).sum()
    loss = loss + te.Tensor(ROWS).logsumexp(1).sum() + te.cross_entropy(te.Tensor(np.zeros((0, 3))), np.zeros(0, int))
    loss.backward()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_the_zero_exponent_example_of_the_page():
    # (Tensor([0.0, 2.0]) ** 0).sum().backward() gave [nan, 0]; torch gives [0, 0]
    x = te.Tensor([0.0, 2.0], requires_grad=True)
    (x ** 0).sum().backward()
    t = torch.tensor([0.0, 2.0], dtype=torch.float64, requires_grad=True)
    (t ** 0).sum().backward()
    assert x.grad.tolist() == t.grad.tolist()


# ---------------------------------------------------------------------------------------------
# Scalar engine
# ---------------------------------------------------------------------------------------------

def scalar_raises(name, x):
    """The documented differences: no real value, so the engine raises where torch gives NaN."""
    if name == "log":
        return x < 0
    if name.startswith("x ** "):
        return x < 0 and not float(name.removeprefix("x ** ")).is_integer()
    return False


SCALAR_SEEDS = [1.0, -0.7, *EDGES]


@pytest.mark.parametrize("name", UNARY)
def test_scalar_engine_ops_match_torch_at_every_point_and_upstream_gradient(name):
    f = UNARY[name]
    for x in points_for(name):
        for s in SCALAR_SEEDS:
            t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
            t_out = f(t) * s
            t_out.backward()
            v = se.Value(x)
            if scalar_raises(name, x):
                assert math.isnan(t_out.item()) or x == -INF  # torch: NaN (at -inf, C's pow)
                with pytest.raises(ValueError, match="log needs a value >= 0|is not a real number"):
                    f(v)
                continue
            out = f(v) * s
            out.backward()
            where = f"{name} at x = {x}, upstream {s}"
            assert_same(out.data, t_out.item(), f"value of {where}")
            assert_same(v.grad, t.grad.item(), f"gradient of {where}")


@pytest.mark.parametrize("name", BINARY)
def test_scalar_engine_binary_ops_match_torch_on_every_pair_of_points(name):
    f = BINARY[name]
    for x in POINTS:
        for y in POINTS:
            a, b = torch_leaf(x), torch_leaf(y)
            t_out = f(a, b)
            t_out.backward()
            va, vb = se.Value(x), se.Value(y)
            out = f(va, vb)
            out.backward()
            where = f"{name} at a = {x}, b = {y}"
            assert_same(out.data, t_out.item(), f"value of {where}")
            assert_same([va.grad, vb.grad], [a.grad.item(), b.grad.item()], f"gradients of {where}")


def test_scalar_engine_sqrt_at_zero_has_torchs_infinite_gradient():
    # Value(0.0) ** 0.5 ran forward, and its backward raised a bare ZeroDivisionError
    x = se.Value(0.0)
    (x ** 0.5).backward()
    t = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    torch.sqrt(t).backward()
    assert x.grad == t.grad.item() == INF


def test_scalar_engine_takes_python_floats_and_refuses_numpy_float32():
    assert se.Value(np.float64(0.5)).data == 0.5  # np.float64 is a Python float
    with pytest.raises(TypeError, match="Value holds an int or float, got float32"):
        se.Value(np.float32(0.5))


def test_log_divides_the_gradient_by_x_as_torch_so_a_subnormal_x_does_not_overflow():
    # grad * (1 / x) overflows at x = 1e-310; grad / x, torch's formula, gives 1e300
    run_tensor(lambda t: t.log() * 1e-10, lambda t: t.log() * 1e-10, [np.array([1e-310, 0.5])],
               np.float64, "ones")
    v = se.Value(1e-310)
    (v.log() * 1e-10).backward()
    assert v.grad == pytest.approx(1e300, rel=1e-12)
