"""Exercise 2: autograd against central differences on a one-hidden-layer MLP.

The network is ``snippets.two_layer`` (Linear -> ReLU -> Linear -> mean squared error):

    X (N, D_in) @ W1 (D_in, H) + b1 (H,) -> relu -> @ W2 (H, D_out) + b2 (D_out,) -> P (N, D_out)
    L = mean((P - Y)**2), a scalar

A result is a dict: ``dtype``; the checked ``index`` of W1 and its ``autograd`` and
``numeric`` derivatives; ``rel_error`` for that one weight; ``layer_rel_error``, the largest
relative error over every element of W1 (a (D_in, H) comparison).
Relative error: |autograd - numeric| / max(|autograd|, |numeric|, 1e-12).
"""

# --8<-- [start:module]
import math
import numbers

import torch

from snippets.exercises import CheckError, _is_number
from snippets.finite_diff import central_difference
from snippets.two_layer import forward, make_tensors

TOLERANCE = 1e-6  # here float64 with h = 1e-6 stays below 1e-7 (3e-8 at most over W1); float32 reaches 1


def relative_error(a, n):
    """Elementwise |a - n| / max(|a|, |n|, 1e-12) for tensors of one shape and one dtype,
    float32 or float64."""
    if not isinstance(a, torch.Tensor) or not isinstance(n, torch.Tensor):
        raise TypeError(f"a and n must be tensors, got {type(a).__name__} and {type(n).__name__}")
    if a.shape != n.shape:
        raise ValueError(f"shapes differ: {tuple(a.shape)} and {tuple(n.shape)}")
    if a.dtype != n.dtype:
        raise TypeError(f"a and n must have one dtype, got {a.dtype} and {n.dtype}: "
                        "pass a.double() and n.double()")
    if a.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"a and n must be real float32 or float64 tensors, got {a.dtype}: the 1e-12 floor "
                        "is 0 in float16 and integer dtypes (pass a.double() and n.double()); for complex "
                        "tensors pass torch.view_as_real(a) and torch.view_as_real(n)")
    return (a - n).abs() / torch.maximum(torch.maximum(a.abs(), n.abs()), torch.tensor(1e-12, dtype=a.dtype))


def loss_of_W1(tensors):
    """L as a function of W1 alone, every other tensor fixed: what a difference quotient needs."""
    others = {k: v.detach() for k, v in tensors.items()}
    return lambda W1: forward({**others, "W1": W1})["L"]


# --8<-- [start:starter]
def starter(seed=0):
    """The source's recipe: float32, h = 1e-5, one weight, then the whole layer."""
    t = make_tensors(seed=seed, dtype=torch.float32)      # X (4, 3), W1 (3, 5), ..., Y (4, 2)
    forward(t)["L"].backward()                             # autograd fills t["W1"].grad (3, 5)
    i, j = torch.randint(0, 3, (1,), generator=torch.Generator().manual_seed(seed)).item(), 2
    f, h = loss_of_W1(t), 1e-5
    numeric = torch.zeros_like(t["W1"])                    # (3, 5)
    with torch.no_grad():
        for a in range(numeric.shape[0]):
            for b in range(numeric.shape[1]):
                plus, minus = t["W1"].detach().clone(), t["W1"].detach().clone()
                plus[a, b] += h
                minus[a, b] -= h
                numeric[a, b] = (f(plus) - f(minus)) / (2 * h)
    err = relative_error(t["W1"].grad, numeric)            # (3, 5)
    return {"dtype": t["W1"].dtype, "index": (i, j), "autograd": t["W1"].grad[i, j].item(),
            "numeric": numeric[i, j].item(), "rel_error": err[i, j].item(),
            "layer_rel_error": err.max().item()}
# --8<-- [end:starter]


# --8<-- [start:solution]
def solution(seed=0):
    """float64, h = 1e-6, evaluated under no_grad by snippets.finite_diff.central_difference."""
    t = make_tensors(seed=seed, dtype=torch.float64)      # X (4, 3), W1 (3, 5), ..., Y (4, 2)
    forward(t)["L"].backward()                             # autograd fills t["W1"].grad (3, 5)
    i, j = torch.randint(0, 3, (1,), generator=torch.Generator().manual_seed(seed)).item(), 2
    numeric = central_difference(loss_of_W1(t), t["W1"].detach(), h=1e-6)  # (3, 5)
    err = relative_error(t["W1"].grad, numeric)            # (3, 5)
    return {"dtype": t["W1"].dtype, "index": (i, j), "autograd": t["W1"].grad[i, j].item(),
            "numeric": numeric[i, j].item(), "rel_error": err[i, j].item(),
            "layer_rel_error": err.max().item()}
# --8<-- [end:solution]


# --8<-- [start:check]
def check(fn, seeds=(0, 1, 2)):
    """Acceptance: for several seeds, the check is run in float64 and every relative error,
    for the one weight and for the whole layer W1, is below TOLERANCE."""
    if not callable(fn):
        raise TypeError(f"check(fn): pass your function fn(seed) -> dict, got {type(fn).__name__}")
    if not isinstance(seeds, (list, tuple, range)):
        raise ValueError(f"seeds must be a list of seeds, such as (0, 1, 2); got {seeds!r}")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must hold at least one seed: an empty list checks nothing")
    keys = ("dtype", "index", "autograd", "numeric", "rel_error", "layer_rel_error")
    for seed in seeds:
        r = fn(seed=seed)
        if not isinstance(r, dict) or not set(keys) <= set(r):
            raise CheckError(f"fn(seed) must return a dict with the keys {list(keys)}, as "
                              f"solution does; got {r!r:.200}")
        if r.get("dtype") != torch.float64:
            raise CheckError(
                f"the check ran in {r.get('dtype')}: a difference quotient in float32 has a rounding "
                "error of about 1e-7 * |L| / h, too large to tell a right gradient from a wrong one; use float64"
            )
        for key in ("autograd", "numeric", "rel_error", "layer_rel_error"):
            if not _is_number(r[key]):
                raise CheckError(f"seed {seed}: {key} must be a number (.item() of a tensor), "
                                 f"got {r[key]!r:.80}")
        t = make_tensors(seed=seed, dtype=torch.float64)   # the reference, computed here
        shape, index = tuple(t["W1"].shape), r["index"]
        if not (isinstance(index, (tuple, list)) and len(index) == 2
                and all(isinstance(i, numbers.Integral) and not isinstance(i, bool)
                        and 0 <= i < n for i, n in zip(index, shape))):
            raise CheckError(f"seed {seed}: index must be the (row, column) of one weight of W1 "
                             f"{shape}, got {index!r:.80}")
        index = [int(i) for i in index]                # a NumPy integer too
        for key, source in (("autograd", "autograd"), ("numeric", "the central difference")):
            if not math.isfinite(r[key]):
                raise CheckError(f"seed {seed}: {source} gives {r[key]} for W1{index}: not finite")
        for key in ("rel_error", "layer_rel_error"):
            if not r[key] < TOLERANCE:
                raise CheckError(
                    f"seed {seed}: {key} = {r[key]:.2e}, above {TOLERANCE:g}: autograd and the central "
                    "difference disagree; check the dtype, the step h (1e-6 in float64) and the point"
                )
        if not abs(r["autograd"] - r["numeric"]) <= 1e-6 * max(1.0, abs(r["numeric"])):
            raise CheckError(f"seed {seed}: autograd {r['autograd']!r} and numeric {r['numeric']!r} differ")
        forward(t)["L"].backward()
        want = t["W1"].grad[tuple(index)].item()
        if not abs(r["numeric"] - want) <= 1e-6 * max(1.0, abs(want)):
            raise CheckError(f"seed {seed}: the numeric gradient {r['numeric']!r} of W1{index} is "
                              f"not torch's {want!r}: compute it from the network of make_tensors(seed)")
# --8<-- [end:check]
# --8<-- [end:module]


def main(argv=()):
    """``python -m snippets.exercises.gradient_check [--seed S]``: starter and solution, then the check."""
    from snippets._cli import parser, seed

    cli = parser("snippets.exercises.gradient_check", __doc__)
    cli.add_argument("--seed", type=seed, default=0, help="seed of the network's tensors (default 0)")
    args = cli.parse_args(argv)
    for name, fn in (("starter (float32, h=1e-5)", starter), ("solution (float64, h=1e-6)", solution)):
        r = fn(seed=args.seed)
        print(f"{name}: W1{list(r['index'])} autograd {r['autograd']:.10f}, numeric {r['numeric']:.10f}")
        print(f"  relative error: one weight {r['rel_error']:.1e}, all of W1 {r['layer_rel_error']:.1e}")
    check(solution)
    print("check(solution): PASS")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
