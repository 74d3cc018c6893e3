"""The miniature engine of snippets/fork_engine.py, checked against torch.

With ``+=`` it must agree with torch on expressions with forks; with ``=`` it must not
(the bug the forks page demonstrates), while still agreeing where there is no fork.
"""

import pytest
import torch

from snippets.fork_engine import Value

# (name, expression over leaves, leaf values); each leaf with a fork is used more than once
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


def torch_grads(f, values):
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = f(*leaves)
    out.backward()
    return out.item(), [leaf.grad.item() for leaf in leaves]


def engine_grads(f, values, accumulate):
    leaves = [Value(v) for v in values]
    out = f(*leaves)
    out.backward(accumulate=accumulate)
    return out.data, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize("name,f,values", FORKED + UNFORKED, ids=[c[0] for c in FORKED + UNFORKED])
def test_accumulating_engine_matches_torch(name, f, values):
    want_value, want = torch_grads(f, values)
    value, got = engine_grads(f, values, accumulate=True)
    assert value == pytest.approx(want_value)
    assert got == pytest.approx(want)


@pytest.mark.parametrize("name,f,values", FORKED, ids=[c[0] for c in FORKED])
def test_assigning_engine_is_wrong_at_forks(name, f, values):
    _, want = torch_grads(f, values)
    _, got = engine_grads(f, values, accumulate=False)
    assert got != pytest.approx(want)


@pytest.mark.parametrize("name,f,values", UNFORKED, ids=[c[0] for c in UNFORKED])
def test_assigning_engine_is_right_without_forks(name, f, values):
    _, want = torch_grads(f, values)
    _, got = engine_grads(f, values, accumulate=False)
    assert got == pytest.approx(want)


def test_the_numbers_the_page_shows():
    # d(ab + a)/da = b + 1 = 6 at a=2, b=5; with "=" one path's share survives
    a, b = Value(2.0), Value(5.0)
    (a * b + a).backward(accumulate=False)
    assert a.grad in (5.0, 1.0)
    a, b = Value(2.0), Value(5.0)
    (a * b + a).backward()
    assert (a.grad, b.grad) == (6.0, 2.0)


def test_backward_twice_gives_the_same_gradients_not_the_sum():
    # unlike torch's .grad, this engine resets grads at the start of every backward
    x = Value(3.0)
    y = x * x
    y.backward()
    y.backward()
    assert x.grad == 6.0


@pytest.mark.parametrize("bad", ["3", None, True, [1.0]])
def test_rejects_non_numbers(bad):
    with pytest.raises(TypeError, match="int or float"):
        Value(bad)
    with pytest.raises(TypeError, match="int or float"):
        Value(1.0) + bad


def test_rejects_a_non_bool_switch():
    with pytest.raises(TypeError, match="accumulate must be True"):
        (Value(1.0) * 2).backward(accumulate="+=")
