"""Time one training step of snippets/tensor_engine.py against torch on the same MLP.

One step = forward, softmax cross-entropy, backward, SGD update, on a batch of 64 with a
32-64-10 MLP in float64 (both). Prints the median time per step of each and their ratio.
Run it as ``python -m snippets.bench_engine`` (``--batch 256 --sizes 256 512 10`` for
another size); timings vary from run to run and machine to
machine, so nothing here is asserted about speed.
"""

import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

from snippets.tensor_engine import MLP, SGD, Tensor, cross_entropy


def _median_seconds(step, repeats, warmup):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench(repeats=200, warmup=20, batch=64, sizes=(32, 64, 10), seed=0):
    """Median seconds per training step: {"engine": s, "torch": s, "ratio": engine / torch}."""
    for name, value in (("repeats", repeats), ("warmup", warmup), ("batch", batch), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}: {value!r}")
    if repeats < 1 or warmup < 0 or batch < 1:
        raise ValueError("repeats and batch must be at least 1, warmup at least 0")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0]))          # (N, D_in)
    y = rng.integers(0, sizes[-1], batch)               # (N,)

    mlp = MLP(list(sizes), seed=seed)
    opt = SGD(mlp.parameters(), lr=0.01)
    xe = Tensor(x)

    def engine_step():
        loss = cross_entropy(mlp(xe), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    layers = []
    for i, o in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(i, o, dtype=torch.float64), torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers[:-1])
    topt = torch.optim.SGD(net.parameters(), lr=0.01)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def torch_step():
        loss = F.cross_entropy(net(xt), yt)
        topt.zero_grad()
        loss.backward()
        topt.step()

    engine = _median_seconds(engine_step, repeats, warmup)
    torch_ = _median_seconds(torch_step, repeats, warmup)
    return {"engine": engine, "torch": torch_, "ratio": engine / torch_}


def main(argv=None):
    from snippets._cli import parser as make_parser

    parser = make_parser("snippets.bench_engine", __doc__)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 10])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args(argv)
    r = bench(repeats=args.repeats, batch=args.batch, sizes=tuple(args.sizes))
    print(f"batch {args.batch}, sizes {args.sizes}, median of {args.repeats} steps")
    print(f"engine {r['engine'] * 1e6:8.1f} us/step")
    print(f"torch  {r['torch'] * 1e6:8.1f} us/step")
    print(f"engine / torch = {r['ratio']:.2f}")
    return r


if __name__ == "__main__":
    main()
