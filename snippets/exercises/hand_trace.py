"""Exercise 1: a hand trace of L = (w1*x + w2*x**2)**2, checked against torch at two points.

A trace is a function ``trace(x, w1, w2) -> dict`` of Python floats, with keys ``"L"``,
``"dL/dw1"``, ``"dL/dw2"`` and ``"dL/dx"``, computed by hand (the chain rule written out,
no autograd), with u = w1*x + w2*x**2 and L = u**2.

The check compares at x = 1 (the source's point) and at x = 2, so that one point where
two intermediate values coincide cannot hide a wrong trace. The derivation is in
``solution`` and in the model report.
"""

# --8<-- [start:module]
import math

import torch

from snippets.exercises import CheckError, _is_number

POINTS = ((1.0, 2.0, 3.0), (2.0, 2.0, 3.0))  # (x, w1, w2)
KEYS = ("L", "dL/dw1", "dL/dw2", "dL/dx")


# --8<-- [start:starter]
def starter(x, w1, w2):
    """A first attempt at the trace. It matches torch at x = 1 and is wrong."""
    u = w1 * x + w2 * x ** 2       # forward: the inner sum
    L = u ** 2
    dL_du = 2 * u                  # backward: d(u**2)/du
    dL_dw1 = dL_du * x ** 2
    dL_dw2 = dL_du * x
    dL_dx = dL_du * (w1 + 2 * w2 * x)
    return {"L": L, "dL/dw1": dL_dw1, "dL/dw2": dL_dw2, "dL/dx": dL_dx}
# --8<-- [end:starter]


# --8<-- [start:solution]
def solution(x, w1, w2):
    """The trace: each gradient is upstream (2u) times the local derivative of u."""
    u = w1 * x + w2 * x ** 2       # forward: the inner sum
    L = u ** 2
    dL_du = 2 * u                  # backward: d(u**2)/du
    dL_dw1 = dL_du * x             # du/dw1 = x
    dL_dw2 = dL_du * x ** 2        # du/dw2 = x**2
    dL_dx = dL_du * (w1 + 2 * w2 * x)  # du/dx = w1 + 2*w2*x: x is used twice
    return {"L": L, "dL/dw1": dL_dw1, "dL/dw2": dL_dw2, "dL/dx": dL_dx}
# --8<-- [end:solution]


# --8<-- [start:check]
def with_torch(x, w1, w2):
    """The same four numbers from autograd (float64), as Python floats."""
    x, w1, w2 = (torch.tensor(float(v), dtype=torch.float64, requires_grad=True) for v in (x, w1, w2))
    L = (w1 * x + w2 * x ** 2) ** 2
    L.backward()
    return {"L": L.item(), "dL/dw1": w1.grad.item(), "dL/dw2": w2.grad.item(), "dL/dx": x.grad.item()}


def check(trace, points=POINTS):
    """Acceptance: ``trace`` agrees with torch on all four numbers at every point."""
    if not callable(trace):
        raise TypeError(f"check(trace): pass your function trace(x, w1, w2), got {type(trace).__name__}")
    wrong = ValueError(f"points must be a non-empty list of (x, w1, w2), finite numbers at which torch's "
                       f"results are finite; got {points!r} (an empty one checks nothing)")
    if not isinstance(points, (list, tuple)):
        raise wrong
    points = list(points)
    if not points or not all(isinstance(p, (tuple, list)) and len(p) == 3
                             and all(_is_number(v) and math.isfinite(v) for v in p) for p in points):
        raise wrong
    wants = [with_torch(*p) for p in points]
    if not all(math.isfinite(v) for want in wants for v in want.values()):
        raise wrong
    for (x, w1, w2), want in zip(points, wants):
        got = trace(x, w1, w2)
        if not isinstance(got, dict) or set(got) != set(KEYS):
            raise CheckError(f"trace must return a dict with keys {KEYS}, got {got!r}")
        for key in KEYS:
            value = got[key]
            if not _is_number(value):
                raise CheckError(f"{key} must be a number (use .item() on a tensor), got {value!r}")
            value = float(value)                       # a NumPy number too
            if not math.isfinite(value):
                raise CheckError(
                    f"at x={x:g}, w1={w1:g}, w2={w2:g}: {key} is {value} in your trace (torch gives "
                    f"{want[key]:g}): a finite input gives a finite result; look for a 0/0 or an overflow"
                )
            if not abs(value - want[key]) <= 1e-9 * max(1.0, abs(want[key])):
                raise CheckError(
                    f"at x={x:g}, w1={w1:g}, w2={w2:g}: {key} is {value:g}, torch gives {want[key]:g}; "
                    "write the local derivative of each input of u = w1*x + w2*x**2 again"
                )
# --8<-- [end:check]
# --8<-- [end:module]


def main(argv=()):
    """``python -m snippets.exercises.hand_trace``: the solution's trace beside torch's, then the check."""
    from snippets._cli import parser

    parser("snippets.exercises.hand_trace", __doc__).parse_args(argv)
    for x, w1, w2 in POINTS:
        mine, torch_ = solution(x, w1, w2), with_torch(x, w1, w2)
        print(f"x = {x:g}, w1 = {w1:g}, w2 = {w2:g}")
        for key in KEYS:
            print(f"  {key:7} hand {mine[key]:5g}   torch {torch_[key]:5g}")
    check(solution)
    print("check(solution): PASS")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
