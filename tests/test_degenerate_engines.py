"""Degenerate but valid input to the two engines: each public name against torch.

``ROWS`` is the table: ``(module, name, thunk, expected)``, with ``module`` as in
tests/test_bad_input.py (``"tensor_engine"``, ``"scalar_engine"``) and ``name`` a public name
of it (defined in the module, not starting with ``_``). ``thunk()`` calls the engine on a
degenerate input (zero, -0.0, empty, a tie, a row of -inf or inf, exponent 0, ...).
``expected`` is either

- a callable: ``expected()`` computes the reference with torch (or exact math where torch has
  no such function) and returns what ``thunk()`` returns, compared by ``same``: NaN where the
  reference has NaN, each infinity in its place, finite numbers to 1e-12 relative; or
- a tuple ``(exception type, message pattern)``: the engine raises it, naming the input
  (a documented difference from torch, which returns NaN there).

``EXEMPT`` maps ``(module, name)`` to the reason a public name has no row. Every public name
of the two modules has a row or an exemption (``test_every_public_name_has_a_row``).
"""

import importlib
import inspect
import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from snippets import scalar_engine as se
from snippets import tensor_engine as te
from test_engine_edges import assert_same

INF, NAN = math.inf, math.nan
MODULES = ("tensor_engine", "scalar_engine")


def same(got, want, what=""):
    """Equal structure; arrays and floats equal with NaN and infinities in the same places."""
    if isinstance(want, (tuple, list)) and not isinstance(want, np.ndarray):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), f"{what}: {got!r} vs {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{what}[{i}]")
        return
    if isinstance(want, (bool, str)) or want is None:
        assert got == want, f"{what}: {got!r}, want {want!r}"
        return
    assert_same(got, want, what)  # arrays and numbers: the edge tests' one comparison


# ---------------------------------------------------------------------------------------------
# Running one expression in an engine and in torch: the value and every input's gradient
# ---------------------------------------------------------------------------------------------

def engine_grads(f, *arrays):
    """f over tensor-engine leaves: (value, gradient of each leaf), backward seeded with ones."""
    xs = [te.Tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = f(*xs)
    out.backward(np.ones(out.shape))
    return out.data, [x.grad if x.grad is not None else np.zeros(x.shape) for x in xs]


def torch_grads(f, *arrays):
    xs = [torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = f(*xs)
    out.backward(torch.ones_like(out))
    return out.detach().numpy(), [x.grad.numpy() if x.grad is not None else np.zeros(x.shape) for x in xs]


def value_grads(f, *values):
    """f over scalar-engine leaves: (value, gradient of each leaf)."""
    xs = [se.Value(v) for v in values]
    out = f(*xs)
    out.backward()
    return out.data, [x.grad for x in xs]


def scalar_torch_grads(f, *values):
    xs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = f(*xs)
    out.backward()
    return out.item(), [x.grad.item() if x.grad is not None else 0.0 for x in xs]


def both(module, name, f_engine, f_torch, *inputs):
    """A row comparing f_engine in the engine with f_torch in torch on the same inputs."""
    if module == "tensor_engine":
        return (module, name, lambda: engine_grads(f_engine, *inputs), lambda: torch_grads(f_torch, *inputs))
    return (module, name, lambda: value_grads(f_engine, *inputs), lambda: scalar_torch_grads(f_torch, *inputs))


def same_f(f):
    return f, f


# ---------------------------------------------------------------------------------------------
# Rows whose reference needs a few lines
# ---------------------------------------------------------------------------------------------

def engine_no_grad_nested_and_raising():
    """Grad mode inside nested no_grad, after leaving it by an exception, and whether an op
    recorded: the same sequence as torch.no_grad gives."""
    x = te.Tensor([1.0], requires_grad=True)
    seen = []
    with te.no_grad():
        with te.no_grad():
            seen.append(te._grad_enabled)
        seen.append((x * 2).requires_grad)
    try:
        with te.no_grad():
            raise KeyError
    except KeyError:
        pass
    seen.append(te._grad_enabled)
    seen.append((x * 2).requires_grad)
    return seen


def torch_no_grad_nested_and_raising():
    x = torch.ones(1, requires_grad=True)
    seen = []
    with torch.no_grad():
        with torch.no_grad():
            seen.append(torch.is_grad_enabled())
        seen.append((x * 2).requires_grad)
    try:
        with torch.no_grad():
            raise KeyError
    except KeyError:
        pass
    seen.append(torch.is_grad_enabled())
    seen.append((x * 2).requires_grad)
    return seen


def copy_linear(layer):
    """A torch nn.Linear holding the engine layer's weights (W is stored transposed)."""
    fan_in, fan_out = layer.W.shape
    t = torch.nn.Linear(fan_in, fan_out, dtype=torch.float64)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(layer.W.data.T))
        t.bias.copy_(torch.tensor(layer.b.data))
    return t


def engine_linear_empty_batch():
    layer = te.Linear(3, 2, np.random.default_rng(0))
    y = layer(te.Tensor(np.zeros((0, 3))))
    y.sum().backward()
    return y.data, layer.W.grad.T, layer.b.grad


def torch_linear_empty_batch():
    t = copy_linear(te.Linear(3, 2, np.random.default_rng(0)))
    y = t(torch.zeros(0, 3, dtype=torch.float64))
    y.sum().backward()
    return y.detach().numpy(), t.weight.grad.numpy(), t.bias.grad.numpy()


MLP_X = np.array([[0.0, -0.0, 0.0], [1.0, -2.0, 0.5]])  # a row of zeros: every relu at its tie


def engine_mlp_at_zero():
    mlp = te.MLP([3, 4, 2], seed=0)
    y = mlp(te.Tensor(MLP_X))
    y.sum().backward()
    return y.data, [p.grad for p in mlp.parameters()]


def torch_mlp_at_zero():
    first, second = (copy_linear(layer) for layer in te.MLP([3, 4, 2], seed=0).layers)
    y = second(torch.relu(first(torch.tensor(MLP_X))))
    y.sum().backward()
    return y.detach().numpy(), [first.weight.grad.numpy().T, first.bias.grad.numpy(),
                                second.weight.grad.numpy().T, second.bias.grad.numpy()]


SGD_P, SGD_G = np.array([1.0, -2.0, 0.0]), np.array([0.0, -0.0, 0.0])  # a zero gradient


def engine_sgd_zero_gradient_and_none():
    p, q = te.Tensor(SGD_P, requires_grad=True), te.Tensor(SGD_P, requires_grad=True)
    p.grad = SGD_G.copy()  # q.grad stays None: skipped, as torch skips a parameter without .grad
    te.SGD([p, q], lr=0.1).step()
    return p.data, q.data


def torch_sgd_zero_gradient_and_none():
    p, q = torch.tensor(SGD_P, requires_grad=True), torch.tensor(SGD_P, requires_grad=True)
    p.grad = torch.tensor(SGD_G)
    torch.optim.SGD([p, q], lr=0.1).step()
    return p.detach().numpy(), q.detach().numpy()


def scalar_backward_twice_from_a_leaf():
    x = se.Value(-0.0)
    x.backward()
    x.backward()
    return x.grad


def torch_backward_twice_from_a_leaf():
    x = torch.tensor(-0.0, dtype=torch.float64, requires_grad=True)
    x.backward()
    x.backward()
    return x.grad.item()


def scalar_zero_grad_after_inf():
    x = se.Value(0.0)
    y = x ** -1  # gradient -inf at 0
    y.backward()
    y.zero_grad()
    return x.grad, y.grad


def torch_zero_grad_after_inf():
    x = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    y = x ** -1
    y.retain_grad()
    y.backward()
    x.grad.zero_(), y.grad.zero_()
    return x.grad.item(), y.grad.item()


def scalar_order_of_x_minus_x():
    """x - x: x is used twice; the order lists each Value once (exact: 4 Values, x first)."""
    x = se.Value(0.0)
    order = se.topological_order(x - x)
    return len(order), order[0] is x, len({id(v) for v in order})


def scalar_mermaid_of_one_leaf_with_nan():
    """One leaf, no operation: one circle, no box and no arrow; the NaN is written as nan."""
    text = se.Value(NAN, label="x").to_mermaid()
    return text.count("((") , text.count("-->"), "nan" in text


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

T = "tensor_engine"
S = "scalar_engine"
ROWS_IN = np.array([[-INF, -INF, -INF], [INF, 1.0, 2.0], [2.0, 2.0, -1.0]])  # masked, +inf, tie

ROWS = [
    # tensor_engine
    (T, "Tensor", lambda: te.Tensor([]).data, lambda: torch.tensor([], dtype=torch.float64).numpy()),
    (T, "Tensor", lambda: te.Tensor(np.array([-0.0, INF, NAN], dtype=np.float32)).data,
     lambda: torch.tensor(np.array([-0.0, INF, NAN], dtype=np.float32)).double().numpy()),
    (T, "Tensor", lambda: te.Tensor(-0.0).data, lambda: torch.tensor(-0.0, dtype=torch.float64).numpy()),
    (T, "tensor", lambda: (lambda t: te.tensor(t) is t)(te.Tensor([])),
     lambda: (lambda t: torch.as_tensor(t) is t)(torch.tensor([]))),
    (T, "no_grad", engine_no_grad_nested_and_raising, torch_no_grad_nested_and_raising),
    (T, "broadcast_shape", lambda: tuple(te.broadcast_shape((0, 3), (1, 3))),
     lambda: tuple(torch.broadcast_shapes((0, 3), (1, 3)))),
    (T, "broadcast_shape", lambda: tuple(te.broadcast_shape((), ())), lambda: tuple(torch.broadcast_shapes((), ()))),
    (T, "unbroadcast", lambda: te.unbroadcast(np.zeros((0, 3)), (1, 3)),
     lambda: torch.zeros(0, 3, dtype=torch.float64).sum_to_size(1, 3).numpy()),
    (T, "unbroadcast", lambda: te.unbroadcast(np.array([[INF, 1.0], [-INF, NAN]]), (2,)),
     lambda: torch.tensor([[INF, 1.0], [-INF, NAN]], dtype=torch.float64).sum_to_size(2).numpy()),
    both(T, "add", *same_f(lambda a, b: a + b), [INF, 0.0, -0.0], [-INF, -0.0, -0.0]),
    both(T, "add", *same_f(lambda a, b: a + b), np.zeros((0, 3)), [1.0, 2.0, 3.0]),
    both(T, "mul", *same_f(lambda a, b: a * b), [0.0, -0.0, INF], [INF, INF, 0.0]),
    both(T, "mul", *same_f(lambda a, b: a * b), np.zeros((0, 1)), [1.0, NAN]),
    both(T, "power", *same_f(lambda a: a ** 0), [0.0, 2.0]),  # the exponent-0 polynomial term
    both(T, "power", *same_f(lambda a: a ** 0.5), [0.0, 4.0]),
    both(T, "power", *same_f(lambda a: a ** -1), [0.0, -0.0, INF]),
    # division is its own op, as torch's: a * b ** -1 gives inf at 1e-10 / 1e-310 and NaN for d(0 / b)/db
    both(T, "div", *same_f(lambda a, b: a / b), [1e-10, 0.0, 1.0, 0.0, -1.0, INF], [1e-310, 1e-300, 0.0, 0.0, -0.0, 1e-310]),
    both(T, "div", *same_f(lambda a, b: a / b), [[1e-10], [0.0]], [1e-310, 1e-300]),  # broadcast: (2, 1) / (2,)
    # a number over a tensor: torch computes reciprocal, then multiply (inf here), and so do the engines
    both(T, "div", *same_f(lambda a: 1e-10 / a), [1e-310, 0.0, -0.0]),
    both(T, "matmul", *same_f(lambda a, b: a @ b), np.zeros((2, 0)), np.zeros((0, 3))),
    both(T, "matmul", *same_f(lambda a, b: a @ b), np.zeros((1, 2)), [[INF], [1.0]]),
    both(T, "sum_", lambda a: a.sum(), lambda a: a.sum(), np.zeros((0, 3))),
    both(T, "sum_", lambda a: a.sum(axis=()), lambda a: a.sum(dim=()), [[1.0, 2.0], [3.0, 4.0]]),
    both(T, "sum_", lambda a: a.sum(axis=1), lambda a: a.sum(dim=1), ROWS_IN),
    both(T, "mean", lambda a: a.mean(), lambda a: a.mean(), np.zeros((0, 3))),
    both(T, "mean", lambda a: a.mean(axis=1), lambda a: a.mean(dim=1), np.zeros((2, 0))),
    both(T, "mean", lambda a: a.mean(axis=0), lambda a: a.mean(dim=0), ROWS_IN),
    both(T, "reshape", *same_f(lambda a: a.reshape(3, 0)), np.zeros((0, 3))),
    both(T, "transpose", lambda a: a.transpose(), lambda a: a.permute(()), 5.0),  # 0-d
    both(T, "logsumexp", lambda a: a.logsumexp(1), lambda a: torch.logsumexp(a, 1), ROWS_IN),
    both(T, "logsumexp", lambda a: a.logsumexp(1), lambda a: torch.logsumexp(a, 1), np.zeros((2, 0))),
    both(T, "cross_entropy", lambda a: te.cross_entropy(a, [0, 0, 1]),
         lambda a: F.cross_entropy(a, torch.tensor([0, 0, 1])), [[-INF, 1.0], [2.0, 2.0], [0.0, -INF]]),
    both(T, "cross_entropy", lambda a: te.cross_entropy(a, np.zeros(0, dtype=int)),
         lambda a: F.cross_entropy(a, torch.zeros(0, dtype=torch.long)), np.zeros((0, 3))),
    (T, "Linear", engine_linear_empty_batch, torch_linear_empty_batch),
    (T, "MLP", engine_mlp_at_zero, torch_mlp_at_zero),
    (T, "SGD", engine_sgd_zero_gradient_and_none, torch_sgd_zero_gradient_and_none),
    # scalar_engine
    (S, "Value", lambda: [se.Value(v).data for v in (-0.0, INF, NAN, np.float64(0.5))],
     lambda: torch.tensor([-0.0, INF, NAN, 0.5], dtype=torch.float64).tolist()),
    (S, "as_value", lambda: (lambda v: se.as_value(v) is v)(se.Value(0.0)),
     lambda: (lambda t: torch.as_tensor(t) is t)(torch.tensor(0.0))),
    (S, "as_value", lambda: se.as_value(-0.0).data, lambda: torch.as_tensor(-0.0).item()),
    both(S, "add", *same_f(lambda a, b: a + b), INF, -INF),
    both(S, "add", *same_f(lambda a, b: a + b), -0.0, -0.0),
    both(S, "mul", *same_f(lambda a, b: a * b), 0.0, INF),
    both(S, "mul", *same_f(lambda a, b: a * b), -0.0, NAN),
    *[both(S, "div", *same_f(lambda a, b: a / b), a, b)
      for a, b in ((1e-10, 1e-310), (0.0, 1e-300), (1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (NAN, 0.0), (INF, -0.0))],
    both(S, "div", *same_f(lambda a: 1e-10 / a), 1e-310),  # a number over a Value: 1e-10 * inf, as torch
    (S, "topological_order", scalar_order_of_x_minus_x, lambda: (4, True, 4)),  # x, -1, x * -1, x + (-x)
    both(S, "backward", *same_f(lambda a: a - a), NAN),  # a fork: each use sends its share
    (S, "backward", scalar_backward_twice_from_a_leaf, torch_backward_twice_from_a_leaf),
    (S, "zero_grad", scalar_zero_grad_after_inf, torch_zero_grad_after_inf),
    both(S, "power", *same_f(lambda a: a ** 0), 0.0),
    both(S, "power", *same_f(lambda a: a ** 0.5), 0.0),  # sqrt at 0: gradient inf
    both(S, "power", *same_f(lambda a: a ** -1), -0.0),
    both(S, "power", *same_f(lambda a: a ** 2), 1e200),  # overflows to inf
    (S, "power", lambda: se.Value(-8.0) ** (1 / 3), (ValueError, r"\(-8\) \*\* 0\.333333 is not a real number")),
    *[both(S, "power", *same_f(lambda a, k=k: a ** k), base)   # C's pow: a limit, not an error
      for base, k in ((-2.0, INF), (-0.5, INF), (-2.0, -INF), (-2.0, NAN))],
    both(S, "exp", lambda a: a.exp(), torch.exp, 1000.0),
    both(S, "exp", lambda a: a.exp(), torch.exp, -INF),
    both(S, "log", lambda a: a.log(), torch.log, 0.0),
    both(S, "log", lambda a: a.log(), torch.log, INF),
    (S, "log", lambda: se.Value(-INF).log(), (ValueError, r"log needs a value >= 0 \(log 0 = -inf\), got -inf")),
    both(S, "tanh", lambda a: a.tanh(), torch.tanh, INF),
    both(S, "tanh", lambda a: a.tanh(), torch.tanh, -0.0),
    both(S, "relu", lambda a: a.relu(), torch.relu, 0.0),
    both(S, "relu", lambda a: a.relu(), torch.relu, -0.0),
    both(S, "relu", lambda a: a.relu(), torch.relu, NAN),
    (S, "rpower", lambda: 0 ** se.Value(0.0), (TypeError, "for a Value exponent e and a base > 0 write")),
    (S, "to_mermaid", scalar_mermaid_of_one_leaf_with_nan, lambda: (1, 0, True)),
]

EXEMPT = {}


def _public_names():
    found = set()
    for short in MODULES:
        module = importlib.import_module(f"snippets.{short}")
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(value) or inspect.isclass(value):
                found.add((short, name))
    return found


def run_row(thunk, expected):
    """Run one row: compare with the reference, or expect the exception."""
    if isinstance(expected, tuple):
        error, pattern = expected
        with pytest.raises(error) as caught:
            thunk()
        assert type(caught.value) is error and re.search(pattern, str(caught.value)), caught.value
        return
    same(thunk(), expected(), "engine vs reference")


@pytest.mark.parametrize("module, name, thunk, expected", ROWS,
                         ids=[f"{m}.{n}-{i}" for i, (m, n, _t, _e) in enumerate(ROWS)])
def test_degenerate_input_gives_torchs_answer(module, name, thunk, expected):
    run_row(thunk, expected)


def test_every_public_name_has_a_row():
    names = _public_names()
    assert len(names) >= 30  # both modules were found
    covered = {(m, n) for m, n, *_ in ROWS} | set(EXEMPT)
    assert not sorted(names - covered), f"add rows (or a reason to EXEMPT) for: {sorted(names - covered)}"
    assert not sorted(covered - names), f"rows for names that are not public: {sorted(covered - names)}"
