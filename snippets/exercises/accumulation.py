"""Exercise 4: gradients add up across backward calls; micro-batches use that on purpose.

Part A, on the graph of the hand trace, L = (w*x + b)**2 at x = 2, w = 3, b = 1
(dL/dw = 28): two backward passes without zero_grad() leave w.grad = 28 + 28 = 56.
A function ``two_passes()`` returns the list of w.grad values (floats) after each pass.

Part B: a batch of N examples split into k micro-batches of N/k. With each micro-batch's
mean loss scaled by 1/k, the accumulated .grad equals the full batch's gradient.
A function ``micro_batches(k)`` returns ``(accumulated, full)``: dicts
{parameter name: gradient}, each gradient of its parameter's shape.
"""

# --8<-- [start:module]
import torch
import torch.nn.functional as F
from torch import nn

from snippets.exercises import CheckError, _is_number


def hand_trace_leaves():
    """x, w, b of the hand trace (0-d float32 tensors that require grad)."""
    return (torch.tensor(v, requires_grad=True) for v in (2.0, 3.0, 1.0))


def make_batch(N=8, D=3, seed=0):
    """A Linear(D, 1) model and a batch X (N, D), y (N, 1); the global RNG is untouched."""
    gen = torch.Generator().manual_seed(seed)
    X, y = torch.randn(N, D, generator=gen), torch.randn(N, 1, generator=gen)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = nn.Linear(D, 1)
    return model, X, y


# --8<-- [start:starter]
def starter_two_passes():
    """The source's words read literally: run backward twice and read w.grad after each."""
    x, w, b = hand_trace_leaves()
    L = (w * x + b) ** 2
    grads = []
    for _ in range(2):
        L.backward()
        grads.append(w.grad.item())
    return grads


def starter_micro_batches(k=4, seed=0):
    """Accumulate over k micro-batches; return the accumulated and the full-batch gradients."""
    model, X, y = make_batch(seed=seed)                # X (N, D), y (N, 1)
    model.zero_grad()
    for Xm, ym in zip(X.chunk(k), y.chunk(k)):        # k pieces of (N/k, D), (N/k, 1)
        F.mse_loss(model(Xm), ym).backward()
    accumulated = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    F.mse_loss(model(X), y).backward()                 # the full batch, for comparison
    return accumulated, {n: p.grad.clone() for n, p in model.named_parameters()}
# --8<-- [end:starter]


# --8<-- [start:solution]
def solution_two_passes():
    """Two forward passes, each building its own graph, and no zero_grad() between them."""
    x, w, b = hand_trace_leaves()
    grads = []
    for _ in range(2):
        L = (w * x + b) ** 2         # a new graph each time
        L.backward()                 # adds 28 into w.grad
        grads.append(w.grad.item())
    return grads


def solution_two_passes_retained():
    """One forward pass; the first backward keeps the graph for the second."""
    x, w, b = hand_trace_leaves()
    L = (w * x + b) ** 2
    L.backward(retain_graph=True)
    first = w.grad.item()
    L.backward()
    return [first, w.grad.item()]


def solution_micro_batches(k=4, seed=0):
    """Each micro-batch's mean loss scaled by 1/k: the sum of k scaled means is the full mean."""
    model, X, y = make_batch(seed=seed)                # X (N, D), y (N, 1)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, the number of micro-batches; got {k!r}")
    if X.shape[0] % k:
        raise ValueError(f"N = {X.shape[0]} is not divisible by k = {k}: the 1/k scaling needs equal pieces")
    model.zero_grad()
    for Xm, ym in zip(X.chunk(k), y.chunk(k)):        # k pieces of (N/k, D), (N/k, 1)
        (F.mse_loss(model(Xm), ym) / k).backward()     # .grad += gradient of (mean / k)
    accumulated = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    F.mse_loss(model(X), y).backward()                 # the full batch, for comparison
    return accumulated, {n: p.grad.clone() for n, p in model.named_parameters()}
# --8<-- [end:solution]


def starter():
    """Both parts of the starter: (grads of two passes, micro-batch gradients)."""
    return starter_two_passes(), starter_micro_batches()


def solution():
    """Both parts of the solution: (grads of two passes, micro-batch gradients)."""
    return solution_two_passes(), solution_micro_batches()


# --8<-- [start:check]
def _call(fn, *args, **kwargs):
    if not callable(fn):
        raise TypeError(f"pass your function (e.g. solution_two_passes), got {type(fn).__name__}")
    try:
        return fn(*args, **kwargs)
    except RuntimeError as exc:
        first = str(exc).splitlines()[0]
        if "backward through the graph a second time" not in first:
            raise  # not the freed graph of part A: torch's own message says what is wrong
        raise CheckError(
            f"{fn.__name__} raised RuntimeError: {first.split('.')[0]}. Run the forward pass "
            "again before the second backward(), or pass retain_graph=True to the first"
        ) from None


def _check_grads(grads):
    if not isinstance(grads, (list, tuple)) or not all(_is_number(g) for g in grads):
        raise CheckError(f"two_passes must return a list of floats, w.grad.item() after each "
                          f"pass; got {grads!r}")
    if [round(g, 6) for g in grads] != [28.0, 56.0]:
        raise CheckError(f"w.grad after each pass should be [28.0, 56.0] (28 + 28), got {grads}")


def _full_batch_gradients():
    """The reference: the gradient of the full batch's mean loss, computed here, not by the code
    under check (whose full-batch gradient could share the error, or the tensors, of its loop)."""
    model, X, y = make_batch()
    F.mse_loss(model(X), y).backward()
    return {n: p.grad for n, p in model.named_parameters()}


def _check_same(result, k):
    expected = _full_batch_gradients()
    form = (f"micro_batches must return (accumulated, full): two dicts {{parameter name: gradient}} "
            f"with the keys {sorted(expected)}")
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise CheckError(f"{form}; got {type(result).__name__}")
    accumulated, full = result
    for d in (accumulated, full):
        if not isinstance(d, dict) or sorted(d) != sorted(expected) \
                or not all(isinstance(t, torch.Tensor) for t in d.values()):
            raise CheckError(f"{form}; got {d!r:.200}")
    for name, g in expected.items():
        if accumulated[name].shape != g.shape:
            raise CheckError(f"{name}: shape {tuple(accumulated[name].shape)}, expected {tuple(g.shape)}")
        if accumulated[name].data_ptr() == full[name].data_ptr():
            raise CheckError(f"accumulated and full share the {name} tensor: clone each .grad "
                              "(p.grad.clone()) before the next backward writes into it")
        if not torch.isfinite(accumulated[name]).all():
            raise CheckError(f"k={k}: accumulated {name}.grad holds NaN or inf: {accumulated[name].tolist()}")
    for name, g in expected.items():
        if not torch.allclose(accumulated[name].double(), g.double(), rtol=1e-5, atol=1e-6):
            ratio = (accumulated[name].norm() / g.norm()).item()
            raise CheckError(
                f"k={k}: accumulated {name}.grad is {ratio:.3g} times the full batch's: "
                "scale each micro-batch's mean loss by 1/k before backward()"
            )
    for name, g in expected.items():
        if full[name].shape != g.shape or not torch.allclose(full[name].double(), g.double(), rtol=1e-5, atol=1e-6):
            raise CheckError(f"full {name}.grad is not the gradient of make_batch()'s full batch (seed 0): "
                              "call zero_grad() before its backward, on the same model and batch")


def check_two_passes(two_passes):
    """Acceptance A: two_passes() returns w.grad after each pass: 28, then 28 + 28 = 56."""
    _check_grads(_call(two_passes))


def check_micro_batches(micro_batches, ks=(2, 4)):
    """Acceptance B: for each k, micro_batches(k=k) accumulates the full batch's gradient.

    ks: the micro-batch counts to try, each dividing N = 8 (make_batch's batch size)."""
    if not isinstance(ks, (tuple, list)) or not ks or not all(
            isinstance(k, int) and not isinstance(k, bool) and k >= 1 and 8 % k == 0 for k in ks):
        raise ValueError(f"ks must be a non-empty tuple of divisors of N = 8 (1, 2, 4, 8), got {ks!r}")
    for k in ks:
        _check_same(_call(micro_batches, k=k), k)


def check(fn):
    """Acceptance A and B for fn() -> (w.grad after each pass, (accumulated, full) at k = 4)."""
    if not callable(fn):
        raise TypeError(f"check(fn): pass a function such as solution, got {type(fn).__name__}")
    result = _call(fn)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise CheckError(f"fn must return (w.grad after each pass, (accumulated, full)); "
                          f"got {result!r:.200}")
    _check_grads(result[0])
    _check_same(result[1], k=4)
# --8<-- [end:check]
# --8<-- [end:module]


def main(argv=()):
    """``python -m snippets.exercises.accumulation [-k K]``: both parts, then the check."""
    from snippets._cli import parser

    cli = parser("snippets.exercises.accumulation", __doc__)
    cli.add_argument("-k", type=int, default=4, help="number of micro-batches; must divide N = 8 (default 4)")
    k = cli.parse_args(argv).k
    if k < 1 or 8 % k:
        cli.error(f"-k {k}: k must be a positive divisor of N = 8 (1, 2, 4 or 8)")
    print("two passes, two forwards:   w.grad after each:", solution_two_passes())
    print("two passes, retain_graph:   w.grad after each:", solution_two_passes_retained())
    for name, fn in (("unscaled", starter_micro_batches), ("scaled by 1/k", solution_micro_batches)):
        accumulated, full = fn(k=k)
        diff = max((accumulated[n] - full[n]).abs().max().item() for n in full)
        ratio = (accumulated["weight"].norm() / full["weight"].norm()).item()
        print(f"micro-batches k={k}, {name:13}: |accumulated| / |full| = {ratio:.4f}, max difference {diff:.1e}")
    check(solution)
    check_micro_batches(solution_micro_batches, ks=(k,))
    print("check(solution): PASS")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
