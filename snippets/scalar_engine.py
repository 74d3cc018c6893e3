"""A scalar autograd engine: one float per ``Value``, the graph recorded as you compute.

A ``Value`` holds ``data`` and ``grad`` (floats), the Values it was computed from
(``_inputs``), its operation's name (``_op``) and ``_backward``, written beside the forward:
it returns one ``(input, upstream x local derivative)`` pair per input. ``backward()`` walks
the graph in reverse topological order and adds each pair into the input's ``.grad`` with
``+=``, so a Value used k times (a fork) gets k contributions. Non-leaf gradients restart at
0 on each ``backward()``; leaf gradients add up across calls, as torch's ``.grad`` does, until
``zero_grad()``. ``accumulate=False`` assigns with ``=``: the bug that keeps one use per fork.

Operations are functions attached to ``Value`` a few at a time, so the engine can be read
and run step by step: ``+ - * /`` and unary ``-`` with Values, ints and floats; ``** c`` for
a constant int or float ``c``; ``exp``, ``log``, ``tanh``, ``relu``. ``-`` is built from
the primitives; ``/`` has its own backward, as torch's (``a * b ** -1`` overflows where
``a / b`` does not). Where Python's float arithmetic raises and torch returns +-inf or NaN
(``0.0 ** -1``, ``1.0 / 0.0``, ``exp(1000)``, the gradient of ``x ** 0.5`` at 0), the engine
returns torch's value; it raises only where no real number exists (``log(-1)``,
``(-8) ** (1/3)``).
"""

# --8<-- [start:value]
import math


class Value:
    """One float and how it was computed. ``Value(2.0, label="a")``."""
    __array_ufunc__ = None  # np.float32(1) + a: NumPy defers to Value, which refuses it

    def __init__(self, data, _inputs=(), _op="", label=""):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise TypeError(f"Value holds an int or float, got {type(data).__name__}: {data!r}")
        self.data, self.grad = float(data), 0.0
        self._inputs, self._op, self.label = tuple(_inputs), _op, label
        self._backward = lambda: ()  # a leaf sends nothing further

    def __repr__(self):
        return f"Value(data={self.data:g}, grad={self.grad:g})"


def as_value(x):
    """``x`` itself if it is a Value, a constant leaf Value if it is an int or float."""
    if isinstance(x, Value):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(
            f"a Value combines only with Values, ints and floats, got {type(x).__name__}: {x!r}; "
            "pass float(x) for a NumPy number"
        )
    return Value(x)
# --8<-- [end:value]


# --8<-- [start:add_mul]
def add(self, other):
    other = as_value(other)
    out = Value(self.data + other.data, (self, other), "+")
    out._backward = lambda: ((self, out.grad), (other, out.grad))  # d(s+o)/ds = d(s+o)/do = 1
    return out


def mul(self, other):
    other = as_value(other)
    out = Value(self.data * other.data, (self, other), "*")
    # d(s*o)/ds = o, d(s*o)/do = s
    out._backward = lambda: ((self, other.data * out.grad), (other, self.data * out.grad))
    return out


Value.__add__ = Value.__radd__ = add  # a + b, a + 2, 2 + a
Value.__mul__ = Value.__rmul__ = mul  # a * b, a * 2, 2 * a
# --8<-- [end:add_mul]


# --8<-- [start:backward]
def topological_order(root):
    """Every Value ``root`` depends on, once each, inputs before the Values made from them."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:  # depth first, without recursion (deep graphs do not hit the recursion limit)
        v, inputs_done = stack.pop()
        if inputs_done:
            order.append(v)
        elif v not in seen:
            seen.add(v)
            stack.append((v, True))
            stack.extend((x, False) for x in reversed(v._inputs))
    return order


def backward(self, accumulate=True):
    """Add d self / d v into ``v.grad`` for every Value ``v`` that ``self`` depends on."""
    if not isinstance(accumulate, bool):
        raise TypeError("accumulate must be True (+=, correct) or False (=, the fork bug)")
    order = topological_order(self)
    for v in order:
        if v._inputs:
            v.grad = 0.0  # non-leaves start fresh; leaves keep adding up, as in torch

    def send(x, g):
        if accumulate:
            x.grad += g  # every use adds its share
        else:
            x.grad = g  # the bug: the last use wins

    send(self, 1.0)  # the seed: d self / d self = 1
    for v in reversed(order):  # a Value runs only after every Value that uses it
        for x, g in v._backward():
            send(x, g)


def zero_grad(self):
    """Set ``.grad`` to 0 on ``self`` and every Value it depends on (parameters included)."""
    for v in topological_order(self):
        v.grad = 0.0


Value.backward, Value.zero_grad = backward, zero_grad
# --8<-- [end:backward]


# --8<-- [start:more_ops]
def _pow(x, k):
    """x ** k as torch computes it: +-inf where Python raises (0.0 ** -1, 1e200 ** 2)."""
    try:
        return x ** k
    except (ZeroDivisionError, OverflowError):  # the sign of x survives an odd integer k
        return math.copysign(math.inf, x) if float(k).is_integer() and int(k) % 2 else math.inf


def _exponent_error(k):
    return TypeError(
        f"Value ** supports only a constant int or float exponent, got {type(k).__name__}; "
        "for a Value exponent e and a base > 0 write (e * base.log()).exp()"
    )


def power(self, k):
    if isinstance(k, bool) or not isinstance(k, (int, float)):
        raise _exponent_error(k)
    if self.data < 0 and math.isfinite(k) and not float(k).is_integer():
        raise ValueError(f"({self.data:g}) ** {k:g} is not a real number: the base must be >= 0")
    out = Value(_pow(self.data, k), (self,), f"** {k:g}")
    # d(s**k)/ds = k * s**(k-1); for k = 0 exactly 0, as torch (not 0 * 0**-1)
    out._backward = lambda: ((self, out.grad * (k * _pow(self.data, k - 1)) if k else 0.0),)
    return out


def exp(self):
    try:
        e = math.exp(self.data)
    except OverflowError:  # e ** 710 is beyond the largest float: inf, as torch
        e = math.inf
    out = Value(e, (self,), "exp")
    out._backward = lambda: ((self, out.data * out.grad),)  # d(e**s)/ds = e**s
    return out


def log(self):
    if self.data < 0:
        raise ValueError(f"log needs a value >= 0 (log 0 = -inf), got {self.data:g}")
    out = Value(math.log(self.data) if self.data else -math.inf, (self,), "log")
    out._backward = lambda: ((self, out.grad / self.data if self.data  # 1/s as g / s, as torch:
                              else out.grad * _pow(self.data, -1)),)  # 1e-310 ** -1 overflows
    return out


def tanh(self):
    out = Value(math.tanh(self.data), (self,), "tanh")
    out._backward = lambda: ((self, (1 - out.data ** 2) * out.grad),)  # d(tanh s)/ds = 1 - tanh(s)**2
    return out


def relu(self):
    out = Value(max(self.data, 0.0), (self,), "relu")
    out._backward = lambda: ((self, 0.0 if out.data <= 0 else out.grad),)  # 0 at 0 and below, as torch
    return out


def rpower(self, base):  # 2 ** a: the exponent is a Value
    raise _exponent_error(self)


Value.__pow__, Value.__rpow__ = power, rpower
Value.exp, Value.log, Value.tanh, Value.relu = exp, log, tanh, relu
# --8<-- [end:more_ops]


# --8<-- [start:derived]
Value.__neg__ = lambda self: self * -1  # -a = a * (-1)
Value.__sub__ = lambda self, other: self + (-as_value(other))  # a - b = a + (-b)
Value.__rsub__ = lambda self, other: as_value(other) + (-self)  # 2 - a = 2 + (-a)


def _div(x, y):
    """x / y as torch computes it: +-inf or NaN where Python raises (1.0 / 0.0, 0.0 / 0.0)."""
    try:
        return x / y
    except ZeroDivisionError:  # the sign of the infinity is the product of the signs
        return math.nan if x == 0 or x != x else math.copysign(math.inf, x) * math.copysign(1.0, y)


def div(self, other):  # not self * other ** -1: 1e-310 ** -1 overflows, 1e-10 / 1e-310 does not
    other = as_value(other)
    out = Value(_div(self.data, other.data), (self, other), "/")
    # d(s/o)/ds = 1/o; d(s/o)/do = -s/o**2, computed as torch does, -(s/o)/o
    out._backward = lambda: ((self, _div(out.grad, other.data)), (other, -out.grad * _div(out.data, other.data)))
    return out


Value.__truediv__ = div  # a / b, a / 2
Value.__rtruediv__ = lambda self, other: as_value(other) * self ** -1  # 2 / a = 2 * a**-1
# --8<-- [end:derived]


# --8<-- [start:mermaid]
def to_mermaid(self, direction="LR"):
    """The graph of ``self`` as mermaid flowchart text: circles are Values (``label = data;
    grad g``), boxes are operations, arrows point from inputs to outputs. Deterministic:
    nodes are numbered in topological order."""
    if direction not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"direction must be one of LR, RL, TB, BT, got {direction!r}")
    order = topological_order(self)
    ids = {v: f"v{i}" for i, v in enumerate(order)}
    lines = [f"flowchart {direction}"]
    for v in order:
        text = f"{v.data:g}; grad {v.grad:g}"
        labelled = v.label not in ("", None)   # a label 0 is drawn; #quot; is mermaid's escape
        name = str(v.label).replace('"', "#quot;") + " = " if labelled else ""
        lines.append(f'    {ids[v]}(("{name}{text}"))')
        if v._inputs:
            op = "f" + ids[v][1:]  # the box of the operation that made v
            lines.append(f'    {op}["{v._op}"]')
            lines += [f"    {ids[x]} --> {op}" for x in v._inputs]
            lines.append(f"    {op} --> {ids[v]}")
    return "\n".join(lines)


Value.to_mermaid = to_mermaid
# --8<-- [end:mermaid]
