"""Per-sample gradients two ways, and the cost of jacrev against jacfwd.

``per_sample_grads_loop(model, x, y)`` and ``per_sample_grads_vmap(model, x, y)`` both return
{parameter name: tensor of shape (N, *parameter.shape)}: the gradient of the loss of example
n alone, for every n. x is (N, D_in), y is (N,) int64 class indices, and the loss of one
example is ``cross_entropy(model(x[n:n+1]), y[n:n+1])``. The loop makes N backward passes;
the vmap version evaluates ``grad`` of a one-example loss, batched by ``vmap``, with the
parameters passed explicitly through ``functional_call``. Neither touches ``.grad``. Both
differentiate the parameters that require grad (a frozen layer has no row), and a parameter
the loss does not use gets zeros.

Run ``python -m snippets.func_transforms`` to time both, and jacrev against jacfwd on a tall
and a wide Jacobian, on your machine.
"""

import timeit

import torch
import torch.nn.functional as F

import snippets.jvp_rules  # noqa: E402,F401 - jacfwd/jvp/hessian without torch 2.13's warning

from torch.func import functional_call, grad, jacfwd, jacrev, vmap  # noqa: E402

from snippets.guards import batch_statistics_layer, require_module  # noqa: E402


def _check(model, x, y):
    require_module(model)
    if not any(True for _ in model.parameters()):
        raise ValueError("model has no parameters: there is no gradient to compute")
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError("model has no parameter that requires grad: unfreeze the ones to "
                         "differentiate (p.requires_grad_(True))")
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[0] == 0:
        got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"x must be a (N, D_in) tensor with N >= 1, got {got}")
    if not isinstance(y, torch.Tensor) or y.dtype != torch.int64 or y.shape != x.shape[:1]:
        got = f"{y.dtype} {tuple(y.shape)}" if isinstance(y, torch.Tensor) else type(y).__name__
        raise ValueError(f"y must be an int64 tensor of shape ({x.shape[0]},), one class per row of x; got {got}")
    if (y < 0).any():
        raise ValueError(f"y holds a negative class index, {int(y.min())}: pass classes 0..C-1 (cross_entropy "
                         "skips -100, its ignore_index, and gives that example a gradient of zeros, silently)")
    found = batch_statistics_layer(model)
    if found:
        name, layer = found
        raise ValueError(f"{'model.' + name if name else 'model'} ({type(layer).__name__}) normalises with "
                         "the statistics of its batch, so "
                         "one example's gradient depends on the others: call model.eval() first if it keeps "
                         "running statistics, or use a norm of one example (LayerNorm, GroupNorm)")


# --8<-- [start:per_sample]
def per_sample_grads_loop(model, x, y):
    """N backward passes, one example each. Returns {name: (N, *param.shape)}."""
    _check(model, x, y)
    names, params = zip(*[(name, p) for name, p in model.named_parameters() if p.requires_grad])
    rows = []
    for n in range(x.shape[0]):
        loss = F.cross_entropy(model(x[n:n + 1]), y[n:n + 1])   # the loss of example n alone
        rows.append(torch.autograd.grad(loss, params, materialize_grads=True))  # unused: zeros
    return {name: torch.stack([r[i] for r in rows]) for i, name in enumerate(names)}


def per_sample_grads_vmap(model, x, y, randomness="error"):
    """grad of a one-example loss, vmapped over the examples. Returns {name: (N, *param.shape)}.

    ``randomness`` is vmap's: "error" (raise at a random op such as dropout), "different"
    (one draw per example) or "same" (one draw shared by the batch)."""
    _check(model, x, y)
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}

    def loss_one(params, x_n, y_n):                      # x_n (D_in,), y_n () inside vmap
        logits = functional_call(model, params, (x_n.unsqueeze(0),))   # (1, C)
        return F.cross_entropy(logits, y_n.unsqueeze(0))               # ()

    # grad differentiates w.r.t. the first argument (the dict); vmap maps x and y over dim 0
    return vmap(grad(loss_one), in_dims=(None, 0, 0), randomness=randomness)(params, x, y)
# --8<-- [end:per_sample]


def _median_seconds(fn, number=5, repeat=5):
    return sorted(t / number for t in timeit.repeat(fn, number=number, repeat=repeat))[repeat // 2]


def measure(n=64, d_in=32, hidden=64, classes=10, seed=0):
    """Median seconds of the loop and of vmap, and jacrev/jacfwd on tall and wide maps."""
    for name, value in {"n": n, "d_in": d_in, "hidden": hidden, "classes": classes}.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {seed!r}")
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ValueError(f"seed {seed} is outside torch's range of seeds, -2**63 to 2**64 - 1")
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, classes))
    x = torch.randn(n, d_in, generator=gen)
    y = torch.randint(0, classes, (n,), generator=gen)
    out = {"loop": _median_seconds(lambda: per_sample_grads_loop(model, x, y)),
           "vmap": _median_seconds(lambda: per_sample_grads_vmap(model, x, y))}
    for shape, (m_out, n_in) in {"tall": (1000, 10), "wide": (10, 1000)}.items():
        a = torch.randn(m_out, n_in, generator=gen)
        u = torch.randn(n_in, generator=gen)

        def f(v, a=a):
            return torch.tanh(a @ v)                      # R^n_in -> R^m_out
        out[f"jacrev {shape}"] = _median_seconds(lambda f=f, u=u: jacrev(f)(u))
        out[f"jacfwd {shape}"] = _median_seconds(lambda f=f, u=u: jacfwd(f)(u))
    return out


def main(argv=None):
    from snippets._cli import parser as make_parser, seed

    parser = make_parser("snippets.func_transforms", __doc__)
    parser.add_argument("--n", type=int, default=64, help="examples for the per-sample gradients")
    parser.add_argument("--seed", type=seed, default=0)
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error(f"--n must be a positive int, got {args.n}")
    torch.set_num_threads(1)
    for key, seconds in measure(n=args.n, seed=args.seed).items():
        print(f"{key:12s} {seconds * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
