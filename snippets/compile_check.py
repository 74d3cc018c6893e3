"""Eager vs ``torch.compile`` on a small MLP, as autograd sees it.

Slow: the first call compiles (graph capture, a traced backward, generated C++), which takes
seconds on CPU. Run it by hand or through ``BOOK_SLOW=1 pytest tests/test_compile_optin.py``.
"""

import torch


def eager_vs_compiled(batch_sizes=(8, 5, 7), seed=0):
    """Train-step the same MLP eagerly and compiled; return what differs for autograd.

    Shapes: the MLP maps (N, 16) -> (N, 1); the loss is the mean of squares, a scalar.
    Returns a dict:

    * ``node``: the class name of the compiled output's ``grad_fn`` (one node for the whole
      compiled region);
    * ``max_abs_diff``: the largest |compiled - eager| over every parameter's gradient, for
      the first batch size;
    * ``graphs``: how many distinct graphs had been compiled after each batch size
      (``torch._dynamo``'s internal counter: a new entry means a recompilation).
    """
    sizes = list(batch_sizes)
    if not sizes or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in sizes):
        raise ValueError(f"batch_sizes must be positive integers, got {batch_sizes!r}")
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    compiled = torch.compile(model)
    x = torch.randn(sizes[0], 16)  # (N, 16)

    out = compiled(x)  # (N, 1)
    node = type(out.grad_fn).__name__
    out.pow(2).mean().backward()
    grads_compiled = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).pow(2).mean().backward()
    diff = max((a - p.grad).abs().max().item() for a, p in zip(grads_compiled, model.parameters()))

    graphs = [counters["stats"]["unique_graphs"]]
    for n in sizes[1:]:
        compiled(torch.randn(n, 16)).sum().backward()
        graphs.append(counters["stats"]["unique_graphs"])
    torch._dynamo.reset()
    return {"node": node, "max_abs_diff": diff, "graphs": graphs}
