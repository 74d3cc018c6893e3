"""A scalar autograd engine in miniature, to show why a fork needs ``+=``.

A ``Value`` holds one float and the Values it was computed from; beside each forward is a
closure that sends the output's gradient to the inputs. ``backward(accumulate=True)`` adds
every contribution into ``.grad`` (``+=``, as torch's AccumulateGrad does), so ``v.grad`` is
the sum over every use of ``v`` of upstream x local = d root / d v. ``accumulate=False``
assigns it (``=``): at a fork the last use overwrites the others.
"""


class Value:
    def __init__(self, data, _inputs=()):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise TypeError(f"Value holds an int or float, got {type(data).__name__}")
        self.data, self.grad, self._inputs = float(data), 0.0, _inputs
        self._backward = lambda send: None  # a leaf sends nothing further

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))
        # d(s + o)/ds = 1, d(s + o)/do = 1
        out._backward = lambda send: (send(self, out.grad), send(other, out.grad))
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other))
        # d(s * o)/ds = o, d(s * o)/do = s
        out._backward = lambda send: (send(self, other.data * out.grad), send(other, self.data * out.grad))
        return out

    __radd__, __rmul__ = __add__, __mul__  # 1 + v, 2 * v

    def backward(self, accumulate=True):
        """Set ``.grad`` of every Value this one depends on to d self / d value."""
        if not isinstance(accumulate, bool):
            raise TypeError("accumulate must be True (+=, correct) or False (=, the bug)")
        order, seen, stack = [], set(), [(self, False)]
        while stack:  # depth first, with a stack: a Value's inputs come before it
            v, inputs_done = stack.pop()
            if inputs_done:
                order.append(v)
            elif id(v) not in seen:
                seen.add(id(v))
                stack.append((v, True))
                stack.extend((x, False) for x in reversed(v._inputs))

        def send(node, g):
            if accumulate:
                node.grad += g  # every use adds its share
            else:
                node.grad = g  # the bug: the last use wins

        for v in order:
            v.grad = 0.0
        self.grad = 1.0
        for v in reversed(order):  # each node after every node that uses it
            v._backward(send)

    def __repr__(self):
        return f"Value(data={self.data:g}, grad={self.grad:g})"
