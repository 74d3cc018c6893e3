"""A tensor autograd engine on NumPy: the scalar engine's ideas, with shapes and broadcasting.

A ``Tensor`` holds a float64 NumPy array ``data``, a flag ``requires_grad`` and, after
``backward()``, a float64 array ``grad`` of the same shape as ``data``. An operation computes
its output and, right beside it, a closure that sends the output's gradient to its inputs;
``backward()`` runs those closures in reverse topological order, and every gradient is added
into ``.grad`` with ``+=`` (a tensor used twice receives both contributions; leaves keep
accumulating across ``backward()`` calls, as in torch, until they are reset to ``None``).

Invariant: a gradient sent to a tensor has that tensor's shape. The binary operations
broadcast in the forward, as NumPy and torch do, so their backward must undo it: that is
``unbroadcast``, which sums the output's gradient over the dimensions the forward expanded.

Supported: ``+ - * /`` and unary ``-`` with broadcasting (a number is a constant tensor; ``/``
has its own backward, as torch's);
``** c`` for a constant number ``c``; ``@`` for 2-D @ 2-D only, (N, D) @ (D, M) -> (N, M);
``sum`` / ``mean`` over ``axis=None | int | tuple`` with ``keepdims``; ``reshape``;
``transpose(axes)`` and ``.T``; ``exp``, ``log``, ``relu``, ``tanh``; ``logsumexp`` over one
axis (max-shifted, so finite for logits of 1000); ``cross_entropy(logits (N, C), targets (N,))``
-> mean loss (). ``no_grad()`` stops recording. ``Linear``, ``MLP`` and ``SGD`` train a
small network. Float64 throughout; no GPU, no dtype other than float64.

At 0, -0.0, +-inf and NaN every op returns torch's value and gradient (``x ** 0`` has
gradient 0 at 0; ``logsumexp`` of a row of -inf is -inf; relu passes the gradient of a NaN),
and, like torch, prints no NumPy warning for them; except for the sign of a zero (a gradient
is added into zeros, so it is never -0.0, and ``relu(-0.0)`` is 0.0, where torch gives -0.0)
and ``x ** -0.5`` at -0.0 and -inf (C's ``pow``: +inf and 0, where torch gives -inf and NaN).
"""

# --8<-- [start:core]
import numbers

import numpy as np

from snippets.scalar_engine import topological_order  # the same walk: anything with ._inputs

_grad_enabled = True  # the recording switch, for the whole process (torch's grad mode is per thread)
_quiet = np.errstate(all="ignore")  # 1/0 = inf and 0 * inf = NaN, as in torch, without a NumPy warning


class no_grad:
    """``with no_grad():`` operations inside record no graph (used for the SGD update)."""

    def __enter__(self):
        global _grad_enabled
        self._before, _grad_enabled = _grad_enabled, False

    def __exit__(self, *exc):
        global _grad_enabled
        _grad_enabled = self._before


class Tensor:
    """``data``: float64 array, any shape; ``grad``: None or an array of ``data``'s shape."""

    __array_ufunc__ = None  # ndarray (op) Tensor defers to Tensor's reflected operator

    def __init__(self, data, requires_grad=False):
        if data is None:  # np.array(None, dtype=float) would be nan
            raise TypeError("Tensor data is None: pass a number or a (nested) list or array of numbers")
        self.data = _float64(data, "Tensor data")  # a float64 copy, any shape
        if not isinstance(requires_grad, bool):  # as torch: not 1, "no" or np.True_
            raise TypeError(f"requires_grad must be True or False, got {requires_grad!r}")
        self.requires_grad = bool(requires_grad)
        self.grad = None           # None, or an array shaped like data
        self._inputs = ()          # the tensors this one was computed from
        self._backward = None      # sends self.grad to self._inputs

    shape = property(lambda self: self.data.shape)
    ndim = property(lambda self: self.data.ndim)

    def __repr__(self):
        return f"Tensor(shape={self.shape}, requires_grad={self.requires_grad})"

    def _result(self, data, inputs):
        """The output of an op on ``inputs``; recorded only if grad mode is on and one
        input requires grad."""
        out = Tensor(data)
        if _grad_enabled and any(t.requires_grad for t in inputs):
            out.requires_grad, out._inputs = True, inputs
        return out

    def _send(self, grad):
        """Add one contribution to ``self.grad``: the ``+=`` of every fork."""
        if grad.shape != self.shape:  # checked for a constant too, which drops its gradient
            raise ValueError(
                f"a gradient of shape {grad.shape} was sent to a tensor of shape {self.shape}: "
                "the op's backward must sum over broadcast dimensions (unbroadcast)"
            )
        if not self.requires_grad:
            return
        if self.grad is None:
            self.grad = np.zeros(self.shape)
        self.grad += grad

    @_quiet
    def backward(self, grad=None):
        """Fill ``.grad`` of every tensor this one depends on with d(self)/d(tensor)
        (times ``grad``, the seed, shaped like ``self``; 1.0 by default for one element)."""
        if not self.requires_grad:
            raise RuntimeError("backward() from a tensor that does not require grad: no input of "
                               "its graph has requires_grad=True, or it was computed under no_grad()")
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError(
                    f"backward() from a tensor of shape {self.shape} needs a seed gradient: "
                    f"pass grad=np.ones({self.shape}) (or reduce to one number first, e.g. .sum())"
                )
            grad = np.ones(self.shape)
        grad = _float64(grad, "the seed gradient")
        if grad.shape != self.shape:
            raise ValueError(f"the seed gradient has shape {grad.shape}; it must be {self.shape}")
        order = topological_order(self)  # every input before the tensors made from it
        for t in order:
            if t._inputs:
                t.grad = None  # an interior node gets this pass's gradient only
        self._send(grad)
        for t in reversed(order):  # each tensor after every tensor that uses it
            if t._inputs and t.grad is not None:
                t._backward()


def _float64(data, what):
    """``data`` as a new float64 array. Refuses what is not real numbers: float64 would drop
    the imaginary part of a complex number and parse a string."""
    instead = _instead_of(data)
    if instead is not None:
        raise TypeError(f"{what} must be real numbers in a rectangular (nested) list or array, "
                        f"got {type(data).__name__}: {data!r:.60}; {instead}")
    return np.array(data, dtype=np.float64)


def _instead_of(data):
    """None when ``data`` is real numbers that float64 holds; else what to pass instead."""
    if isinstance(data, Tensor):
        return "pass its .data"
    try:
        kind = np.array(data).dtype.kind  # b, i, u, f: bool, integers, floats; c: complex
        if kind == "O":  # an int past int64 or a Fraction, which float() takes, but also None or "3"
            items = np.array(data, dtype=object).ravel()
            kind = "U" if any(v is None or isinstance(v, (str, bytes)) for v in items) else "f"
            np.array(data, dtype=np.float64)  # raises for what float() refuses
    except (TypeError, ValueError, RuntimeError):  # ragged, or a torch tensor that needs grad
        kind = None
    if kind in ("b", "i", "u", "f"):
        return None
    if kind == "c" or getattr(data, "is_complex", lambda: False)():
        return "pass the real part, np.real(x) or t.real"
    if type(data).__module__.startswith("torch"):
        return "pass t.detach().double().numpy()"
    return "pass a number or a (nested) list or array of numbers"


def tensor(x):
    """``x`` itself if it is a Tensor, else a constant Tensor (requires_grad=False)."""
    return x if isinstance(x, Tensor) else Tensor(x)
# --8<-- [end:core]


# --8<-- [start:unbroadcast]
def broadcast_shape(a, b):
    """The shape NumPy and torch broadcast ``a`` and ``b`` to, or a ValueError naming both."""
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        raise ValueError(
            f"shapes {a} and {b} do not broadcast: align them from the right; each pair of "
            "sizes must be equal, or one of them 1 or missing"
        ) from None


@_quiet
def unbroadcast(grad, shape):
    """Sum ``grad`` (shaped like a broadcast result) back to ``shape`` (an input's shape).

    The forward copied the input along two kinds of dimensions: leading dimensions it
    added, and dimensions of size 1 it stretched. Each copy received its own gradient,
    so the input's gradient is their sum (the += of a fork, done as one reduction).
    """
    if not isinstance(shape, tuple):
        raise TypeError(f"shape must be a tuple of ints, an input's .shape; got {type(shape).__name__}")
    grad = np.asarray(grad, dtype=np.float64)
    extra = grad.ndim - len(shape)
    if extra < 0 or broadcast_shape(grad.shape, shape) != grad.shape:
        raise ValueError(f"a gradient of shape {grad.shape} cannot come from broadcasting {shape}")
    grad = grad.sum(axis=tuple(range(extra)))  # leading dims the forward added
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True).reshape(shape)  # dims 1 -> n
# --8<-- [end:unbroadcast]


# --8<-- [start:arithmetic]
@_quiet
def add(a, b):
    a, b = tensor(a), tensor(b)
    broadcast_shape(a.shape, b.shape)
    out = a._result(a.data + b.data, (a, b))

    def backward():  # d(a + b)/da = 1, d(a + b)/db = 1, then undo the broadcast
        a._send(unbroadcast(out.grad, a.shape))
        b._send(unbroadcast(out.grad, b.shape))
    out._backward = backward
    return out


@_quiet
def mul(a, b):
    a, b = tensor(a), tensor(b)
    broadcast_shape(a.shape, b.shape)
    out = a._result(a.data * b.data, (a, b))

    def backward():  # d(a * b)/da = b, d(a * b)/db = a
        a._send(unbroadcast(out.grad * b.data, a.shape))
        b._send(unbroadcast(out.grad * a.data, b.shape))
    out._backward = backward
    return out


@_quiet
def power(a, c):
    if isinstance(c, (Tensor, bool)) or not isinstance(c, numbers.Real):  # np.int64 is one
        raise TypeError("only a constant exponent is supported: t ** 2 or t ** -1.0")
    c = float(c)  # np.int64 or a Fraction, as NumPy would take it
    out = a._result(a.data ** c, (a,))

    def backward():  # d(a ** c)/da = c * a ** (c - 1); for c = 0 exactly 0 (not 0 * 0 ** -1 = NaN)
        a._send(np.zeros(a.shape) if c == 0 else out.grad * (c * a.data ** (c - 1)))
    out._backward = backward
    return out


@_quiet
def div(a, b):  # not a * b ** -1: 1e-310 ** -1 overflows, 1e-10 / 1e-310 does not
    a, b = tensor(a), tensor(b)
    broadcast_shape(a.shape, b.shape)
    out = a._result(a.data / b.data, (a, b))

    def backward():  # d(a / b)/da = 1/b; d(a / b)/db = -a/b**2, as torch computes it, -(a/b)/b
        a._send(unbroadcast(out.grad / b.data, a.shape))
        b._send(unbroadcast(-out.grad * (out.data / b.data), b.shape))
    out._backward = backward
    return out


Tensor.__add__ = Tensor.__radd__ = add                       # 2 + t works too
Tensor.__mul__ = Tensor.__rmul__ = mul
Tensor.__pow__ = power
Tensor.__neg__ = lambda a: a * -1.0                          # -a = a * (-1)
Tensor.__sub__ = lambda a, b: a + (-tensor(b))               # a - b = a + (-b)
Tensor.__rsub__ = lambda a, b: tensor(b) + (-a)
Tensor.__truediv__ = div
Tensor.__rtruediv__ = lambda a, b: tensor(b) * a ** -1.0     # 2 / t = 2 * t^-1
# --8<-- [end:arithmetic]


# --8<-- [start:matmul]
@_quiet
def matmul(a, b):
    """(N, D) @ (D, M) -> (N, M); 2-D only (no batching, no broadcasting)."""
    a, b = tensor(a), tensor(b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul needs (N, D) @ (D, M); got {a.shape} @ {b.shape}")
    out = a._result(a.data @ b.data, (a, b))

    def backward():  # dA = dY @ B.T (N, D), dB = A.T @ dY (D, M)
        a._send(out.grad @ b.data.T)
        b._send(a.data.T @ out.grad)
    out._backward = backward
    return out


Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = lambda b, a: matmul(a, b)
# --8<-- [end:matmul]


# --8<-- [start:reductions]
def _axes(axis, ndim):
    """``axis`` (None, an int or a tuple of ints, negatives allowed) as a sorted tuple. None
    and an empty tuple mean every dimension, as in torch (NumPy reduces none for ())."""
    if axis is None or (isinstance(axis, (tuple, list)) and not axis):
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if not all(isinstance(ax, numbers.Integral) and not isinstance(ax, bool) for ax in axes):
        raise TypeError(f"axis must be None, an int or a tuple of ints, got {axis!r}")
    if ndim == 0 and all(ax in (0, -1) for ax in axes):
        if len(axes) > 1:
            raise ValueError(f"axis {axis} names a dimension twice: a 0-d tensor takes axis=0 or None")
        return ()  # torch reads dim 0 (or -1) of a 0-d tensor as the whole tensor
    if any(not -ndim <= ax < ndim for ax in axes):
        raise ValueError(f"axis {axis} is out of range for a tensor with {ndim} dimensions "
                         "(axis=None reduces every dimension)")
    axes = tuple(sorted(ax % ndim for ax in axes))
    if len(set(axes)) != len(axes):
        raise ValueError(f"axis {axis} names a dimension twice")
    return axes


@_quiet
def sum_(a, axis=None, keepdims=False):
    axes = _axes(axis, a.ndim)
    out = a._result(a.data.sum(axis=axes, keepdims=keepdims), (a,))

    def backward():  # every summed element gets the gradient of its sum: copy it back
        g = out.grad if keepdims else np.expand_dims(out.grad, axes)
        a._send(np.broadcast_to(g, a.shape))
    out._backward = backward
    return out


def mean(a, axis=None, keepdims=False):
    count = int(np.prod([a.shape[ax] for ax in _axes(axis, a.ndim)]))
    return sum_(a, axis, keepdims) / float(count)  # mean = sum / count, as torch; 0 / 0 = NaN if empty


Tensor.sum, Tensor.mean = sum_, mean
# --8<-- [end:reductions]


# --8<-- [start:shapes]
def reshape(a, *shape):
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    out = a._result(a.data.reshape(shape), (a,))  # NumPy raises if the sizes differ

    def backward():  # same elements, old shape
        a._send(out.grad.reshape(a.shape))
    out._backward = backward
    return out


def transpose(a, axes=None, *more):  # NumPy's form: one permutation, (1, 0), not torch's (0, 1)
    if more or isinstance(axes, numbers.Integral):  # a.transpose(0, 1) is torch's swap of two dims
        raise TypeError("transpose takes one tuple of axes, a permutation (NumPy's a.transpose(axes)); for "
                        "torch's t.transpose(i, j), pass range(ndim) with i and j swapped: (1, 0) in 2-D")
    axes = tuple(reversed(range(a.ndim))) if axes is None else tuple(axes)
    if not all(isinstance(ax, numbers.Integral) and not isinstance(ax, bool) and -a.ndim <= ax < a.ndim for ax in axes):
        raise ValueError(f"axes {axes} must be ints in [-{a.ndim}, {a.ndim}), one per dimension")
    if sorted(ax % a.ndim for ax in axes) != list(range(a.ndim)):
        raise ValueError(f"axes {axes} must be a permutation of the {a.ndim} dimensions")
    axes = tuple(ax % a.ndim for ax in axes)  # -1 is the last dimension, as in NumPy
    out = a._result(a.data.transpose(axes), (a,))

    def backward():  # apply the inverse permutation
        a._send(out.grad.transpose(np.argsort(axes)))
    out._backward = backward
    return out


Tensor.reshape, Tensor.transpose = reshape, transpose
Tensor.T = property(lambda a: transpose(a))
# --8<-- [end:shapes]


# --8<-- [start:unary]
@_quiet
def _unary(a, f, local):
    """An elementwise op: ``f(x)`` is the output, ``local(x, y)`` its derivative at x (y = f(x))."""
    out = a._result(f(a.data), (a,))
    out._backward = lambda: a._send(out.grad * local(a.data, out.data))
    return out


def _relu(a):  # the gradient passes where y > 0 or y is NaN, as torch's (y <= 0 ? 0 : grad); 0 at 0
    out = a._result(np.maximum(a.data, 0.0), (a,))  # NaN stays NaN
    out._backward = lambda: a._send(np.where(out.data <= 0, 0.0, out.grad))
    return out


@_quiet
def _log(a):  # (log x)' = 1/x, applied as grad / x, as torch: grad * (1/x) overflows at 1e-310
    out = a._result(np.log(a.data), (a,))
    out._backward = lambda: a._send(out.grad / a.data)
    return out


Tensor.exp = lambda a: _unary(a, np.exp, lambda x, y: y)             # (e^x)' = e^x
Tensor.log = _log
Tensor.tanh = lambda a: _unary(a, np.tanh, lambda x, y: 1.0 - y ** 2)  # 1 - tanh^2
Tensor.relu = _relu
# --8<-- [end:unary]


# --8<-- [start:losses]
@_quiet
def logsumexp(a, axis, keepdims=False):
    """log(sum(exp(a), axis)), computed as m + log(sum(exp(a - m))) with m the max over
    ``axis``: no exp overflows. An infinite max is replaced by 0, as torch does, so a row of
    -inf gives -inf (not -inf - -inf = NaN) and a row holding +inf gives inf; an empty axis
    gives -inf. Backward: g * softmax(a) = g * exp(a - out)."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError("logsumexp reduces over one axis: pass an int")
    axes = _axes(axis, a.ndim)
    ax = axes[0] if axes else None  # None: a 0-d tensor, its one element
    m = a.data.max(axis=ax, keepdims=True, initial=-np.inf)
    m = np.where(np.isinf(m), 0.0, m)
    out_k = m + np.log(np.exp(a.data - m).sum(axis=ax, keepdims=True))  # keepdims shape
    out = a._result(out_k if keepdims else out_k.squeeze(ax), (a,))

    def backward():
        g = out.grad if keepdims or ax is None else np.expand_dims(out.grad, ax)
        a._send(g * np.exp(a.data - out_k))
    out._backward = backward
    return out


@_quiet
def cross_entropy(logits, targets):
    """Mean softmax cross-entropy: logits (N, C), integer targets (N,) in [0, C) -> ().

    loss_n = -log_softmax(logits_n)[targets_n], the log-softmax of the shifted row s = logits - max
    as s - log(sum(exp(s))), as torch: m + log(sum) - logits would lose the log 2 of a tie at
    1e17 (the spacing there is 16). Backward: (softmax - one_hot) / N.
    """
    if not isinstance(logits, Tensor):
        raise TypeError(f"logits must be a Tensor (N, C), got {type(logits).__name__}: wrap it, Tensor(x)")
    targets = np.asarray(targets)
    if logits.ndim != 2:
        raise ValueError(f"logits must be (N, C); got {logits.shape}")
    n, c = logits.shape
    if targets.shape != (n,) or targets.dtype.kind not in "iu":
        raise ValueError(f"targets must be integers of shape ({n},); got {targets.dtype} {targets.shape}")
    if n and (targets.min() < 0 or targets.max() >= c):
        raise ValueError(f"targets must lie in [0, {c}); got {targets.min()}..{targets.max()}")
    s = logits.data - logits.data.max(axis=1, keepdims=True, initial=-np.inf)  # (N, C), <= 0
    logp = s - np.log(np.exp(s).sum(axis=1, keepdims=True))          # log-softmax (N, C)
    rows = np.arange(n)
    out = logits._result((-logp[rows, targets]).sum() / n, (logits,))  # NaN if N = 0, as torch; +0.0

    def backward():
        p = np.exp(logp)                                                 # softmax (N, C)
        p[rows, targets] -= 1.0                                          # minus one-hot
        logits._send(out.grad * p / n)
    out._backward = backward
    return out


Tensor.logsumexp = logsumexp
# --8<-- [end:losses]


# --8<-- [start:nn]
class Linear:
    """y = x @ W + b: x (N, fan_in), W (fan_in, fan_out), b (fan_out,) -> (N, fan_out).

    W is stored (fan_in, fan_out); torch.nn.Linear stores weight (fan_out, fan_in), so
    copying from torch is ``W = weight.T``. Initialised like torch: U(-k, k), k = fan_in^-0.5.
    """

    def __init__(self, fan_in, fan_out, rng):
        if not all(isinstance(n, numbers.Integral) for n in (fan_in, fan_out)):
            raise TypeError(f"Linear sizes must be ints, got {fan_in!r}, {fan_out!r}")
        if min(fan_in, fan_out) < 1:
            raise ValueError(f"Linear needs positive sizes; got {fan_in}, {fan_out}")
        k = fan_in ** -0.5
        self.W = Tensor(rng.uniform(-k, k, (fan_in, fan_out)), requires_grad=True)
        self.b = Tensor(rng.uniform(-k, k, (fan_out,)), requires_grad=True)

    def __call__(self, x):
        return x @ self.W + self.b  # (N, fan_out) + (fan_out,): b is broadcast over N

    def parameters(self):
        return [self.W, self.b]


class MLP:
    """Linear -> relu -> ... -> Linear over ``sizes``, e.g. [32, 64, 10]: no relu at the end."""

    def __init__(self, sizes, seed=0):
        if isinstance(sizes, numbers.Number) or len(sizes) < 2:
            raise ValueError("sizes lists the input size and at least one layer size")
        rng = np.random.default_rng(seed)
        self.layers = [Linear(i, o, rng) for i, o in zip(sizes[:-1], sizes[1:])]

    def __call__(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            x = x.relu() if i < len(self.layers) - 1 else x
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]


class SGD:
    """p <- p - lr * p.grad for every parameter with a gradient; zero_grad() sets grads to None."""

    def __init__(self, params, lr):
        if hasattr(params, "parameters"):
            raise TypeError("SGD takes the parameters, not the model: pass model.parameters()")
        if isinstance(params, Tensor):
            raise TypeError("SGD takes a list of parameters, not one Tensor: pass [x]")
        self.params = list(params)
        if not self.params or not all(isinstance(p, Tensor) and p.requires_grad for p in self.params):
            raise ValueError("SGD needs a non-empty list of Tensors with requires_grad=True")
        if not lr > 0:
            raise ValueError(f"lr must be positive; got {lr}")
        self.lr = lr

    @_quiet
    def step(self):
        with no_grad():
            for p in self.params:
                if p.grad is not None:
                    p.data -= self.lr * p.grad  # in place: p stays the same leaf

    def zero_grad(self):
        for p in self.params:
            p.grad = None
# --8<-- [end:nn]
