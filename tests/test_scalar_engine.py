"""The scalar engine of snippets/scalar_engine.py, checked against torch (float64).

The main property: on random expression graphs with shared subexpressions (forks), the
engine's value and every leaf gradient equal torch's. The same properties show that the
engine's ``accumulate=False`` variant (``=`` instead of ``+=``) disagrees with torch on
forked graphs, found by hypothesis, while agreeing on graphs without forks: the tests bite,
and they bite exactly where the bug lives.
"""

import math
import re

import pytest
import torch
from hypothesis import find, given, settings
from hypothesis import strategies as st

from snippets.scalar_engine import Value, topological_order

# Reproducible and fast: the same examples on every run, no per-example deadline.
EXAMPLES = 300
FIXED = settings(max_examples=EXAMPLES, deadline=None, derandomize=True)

# ---------------------------------------------------------------------------------------------
# Random expression graphs: a list of leaf values and a list of steps; step k defines node
# len(leaves) + k from earlier nodes. The root is the last node. Every node can be used any
# number of times, so nodes (leaves or not) are shared: forks.
# ---------------------------------------------------------------------------------------------

BINARY = ["add", "sub", "mul", "div"]
WITH_NUMBER = ["radd", "rsub", "rmul", "rdiv", "add_c", "sub_c", "mul_c", "div_c", "pow"]
UNARY = ["neg", "exp", "log", "tanh", "relu"]
NUMBERS = [-2.0, -0.5, 0.5, 1.0, 3.0]
EXPONENTS = [0, 2, 3, -1, 0.5, 1.5, -0.5]
KINDS = BINARY * 3 + WITH_NUMBER + UNARY  # binary ops weighted up: they make forks
POLE_AT_ZERO = {"div", "rdiv", "log"}  # derivative unbounded near 0: keep |x| >= 0.1


def apply(step, nodes):
    """Node ``step`` over ``nodes``, for engine Values and torch tensors alike."""
    op, i, j, c = step
    x, y = nodes[i], nodes[j]
    return {
        "add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y,
        "radd": lambda: c + x, "rsub": lambda: c - x, "rmul": lambda: c * x, "rdiv": lambda: c / x,
        "add_c": lambda: x + c, "sub_c": lambda: x - c, "mul_c": lambda: x * c, "div_c": lambda: x / c,
        "pow": lambda: x ** c, "neg": lambda: -x, "exp": lambda: x.exp(), "log": lambda: x.log(),
        "tanh": lambda: x.tanh(), "relu": lambda: x.relu(),
    }[op]()


def safe(step, values):
    """Keep the graph in safe domains: finite, |value| <= 1e3, no input near a pole.

    Only chooses which graphs are drawn: the expected values always come from torch."""
    op, i, j, c = step
    near_pole = (op == "div" and abs(values[j]) < 0.1) or (
        (op in POLE_AT_ZERO - {"div"} or (op == "pow" and c < 1 and c != 0)) and abs(values[i]) < 0.1
    )
    if near_pole:
        return False
    try:
        out = apply(step, [Value(v) for v in values]).data
    except (ValueError, ZeroDivisionError, OverflowError):  # log(-1), (-1) ** 0.5, 1 / 0, exp(1e3)
        return False
    return math.isfinite(out) and abs(out) <= 1e3


@st.composite
def graphs(draw, forks=True, max_leaves=3, max_steps=8):
    """``(leaves, steps)``. With ``forks=False`` every node is used at most once (a tree)."""
    leaves = draw(st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=max_leaves))
    values, steps, unused = list(leaves), [], list(range(len(leaves)))
    for _ in range(draw(st.integers(3, max_steps))):
        pool = range(len(values)) if forks else unused
        if not pool:
            break
        kind = draw(st.sampled_from(KINDS))
        pool = list(pool)
        i = pool[draw(st.integers(max(0, len(pool) - 3), len(pool) - 1))]  # one of the newest
        rest = [k for k in pool if forks or k != i]
        if kind in BINARY and not rest:
            kind = "tanh"
        j = rest[draw(st.integers(0, len(rest) - 1))] if kind in BINARY else i
        c = draw(st.sampled_from(EXPONENTS if kind == "pow" else NUMBERS))
        step = (kind, i, j, c)
        if not safe(step, values):
            step = ("tanh", i, i, c)  # always defined, bounded
        if not forks:
            unused = [k for k in unused if k not in (step[1], step[2])]
        values.append(apply(step, [Value(v) for v in values]).data)
        unused.append(len(values) - 1)
        steps.append(step)
    return leaves, steps


def uses(leaves, steps):
    """How many times each node is used by the steps the root depends on."""
    n = len(leaves) + len(steps)
    needed, count = {n - 1}, [0] * n
    for k in range(len(steps) - 1, -1, -1):
        if len(leaves) + k in needed:
            op, i, j, _ = steps[k]
            operands = (i, j) if op in BINARY else (i,)
            for m in operands:
                count[m] += 1
                needed.add(m)
    return count


def has_fork(graph):
    return max(uses(*graph)) >= 2


def run_torch(leaves, steps):
    nodes = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in leaves]
    for step in steps:
        nodes.append(apply(step, nodes))
    nodes[-1].backward()
    grads = [0.0 if leaf.grad is None else leaf.grad.item() for leaf in nodes[: len(leaves)]]
    return nodes[-1].item(), grads


def run_engine(leaves, steps, accumulate=True):
    nodes = [Value(v) for v in leaves]
    for step in steps:
        nodes.append(apply(step, nodes))
    nodes[-1].backward(accumulate=accumulate)
    return nodes[-1].data, [leaf.grad for leaf in nodes[: len(leaves)]]


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def agrees(graph, accumulate=True):
    want_value, want = run_torch(*graph)
    value, got = run_engine(*graph, accumulate=accumulate)
    return close(value, want_value) and all(close(g, w) for g, w in zip(got, want))


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


def test_engine_matches_torch_on_random_graphs_with_forks():
    forked = []

    @FIXED
    @given(graphs())
    def engine_matches_torch(graph):
        forked.append(has_fork(graph))
        want_value, want = run_torch(*graph)
        value, got = run_engine(*graph)
        assert close(value, want_value), (value, want_value)
        for k, (g, w) in enumerate(zip(got, want)):
            assert close(g, w), f"leaf {k}: engine {g!r}, torch {w!r}"

    engine_matches_torch()
    # the property is about forks: most of the graphs it ran on must have one
    assert sum(forked) >= 0.5 * len(forked) >= 0.5 * EXAMPLES, (sum(forked), len(forked))


@FIXED
@given(graphs(forks=False))
def test_without_forks_even_the_assigning_engine_matches_torch(graph):
    assert not has_fork(graph)
    assert agrees(graph, accumulate=False)


def test_hypothesis_finds_a_forked_graph_where_the_assigning_engine_is_wrong():
    graph = find(
        graphs(),
        lambda g: not agrees(g, accumulate=False),
        settings=settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None),
    )
    assert has_fork(graph)
    assert agrees(graph, accumulate=True)  # the same graph, with +=, is right
    # what the page reports: the shrunk graph's root is x + x, one leaf at 0; torch 2, "=" 1
    assert graph[0] == [0.0] and graph[1][-1][:3] == ("add", 0, 0)
    assert run_torch(*graph)[1] == [2.0] and run_engine(*graph, accumulate=False)[1] == [1.0]


def test_assigning_engine_fails_the_fixed_fork_a_times_b_plus_a():
    # L = a*b + a at a=2, b=5: dL/da = b + 1 = 6, dL/db = a = 2
    graph = ([2.0, 5.0], [("mul", 0, 1, 0.0), ("add", 2, 0, 0.0)])
    assert run_torch(*graph)[1] == [6.0, 2.0]
    assert run_engine(*graph)[1] == [6.0, 2.0]
    assert run_engine(*graph, accumulate=False)[1][0] in (1.0, 5.0)  # one use survives


# The fixed expressions of the forks pages (docs/part1/forks.md, shared-weights.md): each leaf
# with a fork is used more than once; the unforked ones use every leaf once.
FORKED = [
    ("a*b + a", lambda a, b: a * b + a, (2.0, 5.0)),
    ("x*x", lambda x: x * x, (3.0,)),
    ("w*(w*x)", lambda w, x: w * (w * x), (2.0, 3.0)),
    ("residual x + w*x", lambda x, w: x + w * x, (2.0, 0.5)),
    ("(a+b)*(a+b)", lambda a, b: (a + b) * (a + b), (1.5, -2.0)),
    ("a*a*a + 2*a", lambda a: a * a * a + 2 * a, (-1.25,)),
]
UNFORKED = [
    ("(a+b)*d", lambda a, b, d: (a + b) * d, (2.0, 3.0, 4.0)),
    ("w*x + b", lambda w, x, b: w * x + b, (3.0, 2.0, 1.0)),
]


def fixed_grads(f, values, accumulate=None):
    """(value, leaf gradients) of f at values: torch's if accumulate is None, else the engine's."""
    if accumulate is None:
        leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
        out = f(*leaves)
        out.backward()
        return out.item(), [leaf.grad.item() for leaf in leaves]
    leaves = [Value(v) for v in values]
    out = f(*leaves)
    out.backward(accumulate=accumulate)
    return out.data, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize("name,f,values", FORKED + UNFORKED, ids=[c[0] for c in FORKED + UNFORKED])
def test_fixed_expressions_match_torch(name, f, values):
    want_value, want = fixed_grads(f, values)
    value, got = fixed_grads(f, values, accumulate=True)
    assert value == pytest.approx(want_value, rel=1e-12)
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("name,f,values", FORKED, ids=[c[0] for c in FORKED])
def test_the_assigning_engine_is_wrong_on_each_fixed_fork(name, f, values):
    assert fixed_grads(f, values, accumulate=False)[1] != pytest.approx(fixed_grads(f, values)[1])


@pytest.mark.parametrize("name,f,values", UNFORKED, ids=[c[0] for c in UNFORKED])
def test_the_assigning_engine_is_right_on_each_fixed_expression_without_a_fork(name, f, values):
    assert fixed_grads(f, values, accumulate=False)[1] == pytest.approx(fixed_grads(f, values)[1], rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Each operation against torch, including the points where conventions matter
# ---------------------------------------------------------------------------------------------

POINTS = [
    ("relu at 0", lambda x: x.relu(), 0.0),
    ("relu below 0", lambda x: x.relu(), -1.5),
    ("x ** 0 at 0", lambda x: x ** 0, 0.0),
    ("x ** 3 below 0", lambda x: x ** 3, -1.5),
    ("x ** -1", lambda x: x ** -1, -0.25),
    ("x ** 0.5", lambda x: x ** 0.5, 2.0),
    ("tanh", lambda x: x.tanh(), 0.7),
    ("exp", lambda x: x.exp(), -1.2),
    ("log", lambda x: x.log(), 0.3),
    ("3 / x", lambda x: 3 / x, 0.4),
    ("1 - x / 2", lambda x: 1 - x / 2, 0.4),
    ("-x", lambda x: -x, 0.4),
    ("x * x * x - x", lambda x: x * x * x - x, 1.1),
]


@pytest.mark.parametrize("name,f,x", POINTS, ids=[p[0] for p in POINTS])
def test_each_operation_matches_torch(name, f, x):
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    f(t).backward()
    v = Value(x)
    out = f(v)
    out.backward()
    assert close(out.data, f(torch.tensor(x, dtype=torch.float64)).item())
    assert close(v.grad, t.grad.item()), (v.grad, t.grad.item())


def test_leaf_gradients_add_up_across_backward_calls_as_in_torch():
    t = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    y = t * t + t
    y.backward(retain_graph=True)
    y.backward()
    x = Value(3.0)
    z = x * x + x
    z.backward()
    z.backward()
    assert x.grad == t.grad.item() == 2 * (2 * 3.0 + 1)
    z.zero_grad()
    assert [v.grad for v in topological_order(z)] == [0.0] * len(topological_order(z))
    z.backward()
    assert x.grad == 7.0


def test_a_long_chain_does_not_hit_the_recursion_limit():
    x = Value(0.5)
    y = x
    for _ in range(3000):
        y = y + x  # y = 3001 * x
    y.backward()
    assert x.grad == 3001.0 and close(y.data, 1500.5)


def test_topological_order_puts_inputs_first_and_lists_each_value_once():
    a, b = Value(1.0), Value(2.0)
    c = a * b
    d = c + a
    L = d * c
    order = topological_order(L)
    assert len(order) == len({id(v) for v in order}) == 5
    position = {id(v): k for k, v in enumerate(order)}
    for v in order:
        assert all(position[id(x)] < position[id(v)] for x in v._inputs)


# ---------------------------------------------------------------------------------------------
# Errors on misuse
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["3", None, True, [1.0], torch.tensor(1.0)])
def test_non_numbers_are_rejected_with_a_type_error(bad):
    with pytest.raises(TypeError, match="Value holds an int or float"):
        Value(bad)
    x = Value(1.0)
    for combine in (
        lambda: x + bad, lambda: x - bad, lambda: x * bad, lambda: x / bad,
    ):
        with pytest.raises(TypeError, match="combines only with Values, ints and floats"):
            combine()


@pytest.mark.parametrize("bad", ["3", None, [1.0]])
def test_non_numbers_on_the_left_are_rejected_too(bad):
    x = Value(1.0)
    for combine in (lambda: bad + x, lambda: bad - x, lambda: bad * x, lambda: bad / x):
        with pytest.raises(TypeError):
            combine()


def test_a_value_exponent_is_a_type_error_that_says_what_is_supported():
    a, b = Value(2.0), Value(3.0)
    for combine in (lambda: a ** b, lambda: 2 ** a, lambda: a ** True):
        with pytest.raises(TypeError, match="only a constant int or float exponent"):
            combine()
    # the workaround the message gives is right: 2 ** 3 = exp(3 log 2)
    assert close((b * a.log()).exp().data, 8.0)


@pytest.mark.parametrize("x", [-1.5, -math.inf])
def test_log_of_a_negative_number_names_the_value(x):
    # torch returns NaN; the engine raises (log 0 is -inf, as torch: tests/test_engine_edges.py)
    with pytest.raises(ValueError, match=rf"log needs a value >= 0 \(log 0 = -inf\), got {x:g}"):
        Value(x).log()


def test_fractional_power_of_a_negative_number_is_a_value_error():
    with pytest.raises(ValueError, match="not a real number"):
        Value(-8.0) ** 0.5


def test_backward_rejects_a_non_bool_switch():
    with pytest.raises(TypeError, match="accumulate must be True"):
        (Value(1.0) * 2).backward(accumulate="+=")


# ---------------------------------------------------------------------------------------------
# to_mermaid
# ---------------------------------------------------------------------------------------------

NODE = re.compile(r'^    (\w+)\(\("(.*)"\)\)$')
BOX = re.compile(r'^    (\w+)\["(.*)"\]$')
EDGE = re.compile(r"^    (\w+) --> (\w+)$")


def parse(text):
    lines = text.splitlines()
    circles, boxes, edges = {}, {}, []
    for line in lines[1:]:
        for pattern, store in ((NODE, circles), (BOX, boxes)):
            m = pattern.match(line)
            if m:
                store[m.group(1)] = m.group(2)
                break
        else:
            m = EDGE.match(line)
            assert m, f"not a mermaid node or edge: {line!r}"
            edges.append(m.groups())
    return lines[0], circles, boxes, edges


def test_to_mermaid_of_x_times_x_written_out():
    x = Value(3.0, label="x")
    y = x * x
    y.backward()
    assert y.to_mermaid() == "\n".join([
        "flowchart LR",
        '    v0(("x = 3; grad 6"))',
        '    v1(("9; grad 1"))',
        '    f1["*"]',
        "    v0 --> f1",
        "    v0 --> f1",
        "    f1 --> v1",
    ])


def test_to_mermaid_draws_every_value_operation_and_edge_deterministically():
    def build():
        a, b = Value(2.0, label="a"), Value(5.0, label="b")
        L = (a * b + a).tanh() - b / 4
        L.backward()
        return L

    L = build()
    text = L.to_mermaid("TB")
    assert text == build().to_mermaid("TB")
    header, circles, boxes, edges = parse(text)
    order = topological_order(L)
    assert header == "flowchart TB"
    assert len(circles) == len(order)
    assert len(boxes) == sum(1 for v in order if v._inputs)
    assert len(edges) == sum(len(v._inputs) + 1 for v in order if v._inputs)
    # a's circle says its value and gradient; a feeds two operations (the fork)
    a_id = next(k for k, label in circles.items() if label.startswith("a = "))
    assert circles[a_id] == f"a = 2; grad {order[0].grad:g}"
    assert len({dst for src, dst in edges if src == a_id}) == 2
    assert sorted(set(boxes.values())) == sorted({"*", "+", "tanh", "/"})


def test_to_mermaid_rejects_an_unknown_direction():
    with pytest.raises(ValueError, match="direction must be one of"):
        Value(1.0).to_mermaid("sideways")


def test_the_engine_stays_under_240_lines_as_the_page_says():
    from pathlib import Path

    import snippets.scalar_engine as engine

    assert len(Path(engine.__file__).read_text(encoding="utf-8").splitlines()) < 240


def test_numpy_numbers_are_refused_on_either_side_with_what_to_pass():
    """NumPy would turn its scalar into a float before a reflected operator saw it."""
    np = pytest.importorskip("numpy", reason="NumPy is installed with torch; this guards a bare install")
    a = Value(2.0)
    for combine in (lambda: a + np.float32(1), lambda: np.float32(1) + a, lambda: np.int64(3) * a,
                    lambda: a * np.int64(3)):
        with pytest.raises(TypeError, match=r"got (float32|int64): .*pass float\(x\) for a NumPy number"):
            combine()


def test_a_labels_quotes_are_escaped_for_mermaid_and_any_label_is_written_as_text():
    text = (Value(2.0, label='say "a"') * 3).to_mermaid()
    assert '(("say #quot;a#quot; = 2; grad 0"))' in text and text.count('"') % 2 == 0
    v = Value(1.0)
    v.label = 3                                   # set by assignment, as the pages do
    assert '(("3 = 1; grad 0"))' in v.to_mermaid()
    v.label = 0
    assert '(("0 = 1; grad 0"))' in v.to_mermaid() and '(("1; grad 0"))' in Value(1.0, label=None).to_mermaid()
