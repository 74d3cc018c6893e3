"""Exercise 3: a training loop that runs, raises nothing, and whose loss never decreases.

The task: fit y = X @ w_true + noise with a small MLP, 10 steps of SGD.

    X (N, D) = (64, 4)      y (N, 1)
    model: backbone Linear(4, 8) -> act Tanh -> head Linear(8, 1)

A training function ``train(steps=10, seed=0)`` returns ``steps + 1`` floats: the loss before
each of the ``steps`` updates, then the loss after the last one, each on the full batch.
Each starter has one realistic bug that cuts the gradient path or leaves the parameters out
of the update; ``solution`` is the same loop without it.
"""

# --8<-- [start:module]
import math
from collections import OrderedDict

import torch
import torch.nn.functional as F
from torch import nn

from snippets.exercises import CheckError, _is_number
from snippets.grad_check import report_dead_grads

LR = 0.1


def make_data(seed=0):
    """X (64, 4) and y (64, 1), from a generator of their own: the global RNG is untouched."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(64, 4, generator=gen)                     # (N, D)
    w_true = torch.randn(4, 1, generator=gen)                 # (D, 1)
    y = X @ w_true + 0.1 * torch.randn(64, 1, generator=gen)  # (N, 1)
    return X, y


def make_model(seed=0):
    """backbone Linear(4, 8) -> act Tanh -> head Linear(8, 1), initialised from ``seed``.
    The global RNG state is restored afterwards."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Sequential(OrderedDict(
            backbone=nn.Linear(4, 8), act=nn.Tanh(), head=nn.Linear(8, 1)))


def full_batch_loss(model, X, y):
    """The mean squared error on the whole batch, as a float, without building a graph."""
    with torch.no_grad():
        return F.mse_loss(model(X), y).item()


# --8<-- [start:starter]
def starter(steps=10, seed=0):
    """Trains for 10 steps; backward() runs without an error, and the loss does not move."""
    X, y = make_data(seed)
    model = make_model(seed)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        pred = model(X).detach()                        # (N, 1)
        loss = F.mse_loss(pred, y).requires_grad_()     # () scalar
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses + [full_batch_loss(model, X, y)]


def starter_frozen(steps=10, seed=0):
    """Fine-tunes the head only; the loss does not move."""
    X, y = make_data(seed)
    model = make_model(seed)
    model.head.requires_grad_(False)                    # freeze what is not fine-tuned
    opt = torch.optim.SGD(model.head.parameters(), lr=LR)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(X), y)                  # () scalar
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses + [full_batch_loss(model, X, y)]


def starter_optimizer(steps=10, seed=0):
    """Builds the model again after reading a config; the loss does not move."""
    X, y = make_data(seed)
    model = make_model(seed)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    model = make_model(seed)                            # re-created, e.g. after reading a config
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(X), y)                  # () scalar
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses + [full_batch_loss(model, X, y)]


def starter_item(steps=10, seed=0):
    """Keeps the loss value for logging; the loss does not move."""
    X, y = make_data(seed)
    model = make_model(seed)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        value = F.mse_loss(model(X), y).item()          # for the log
        loss = torch.tensor(value, requires_grad=True)  # () scalar
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses + [full_batch_loss(model, X, y)]
# --8<-- [end:starter]

STARTERS = {"detach": starter, "frozen": starter_frozen, "optimizer": starter_optimizer, "item": starter_item}


# --8<-- [start:solution]
def solution(steps=10, seed=0):
    """The loop with the graph intact, every parameter trainable and in the optimizer."""
    X, y = make_data(seed)
    model = make_model(seed)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        pred = model(X)                                 # (N, 1), with grad_fn
        assert pred.shape == y.shape, (pred.shape, y.shape)
        loss = F.mse_loss(pred, y)                      # () scalar
        loss.backward()
        opt.step()
        losses.append(loss.item())                      # .item() only to log
    return losses + [full_batch_loss(model, X, y)]
# --8<-- [end:solution]


# --8<-- [start:diagnose]
def diagnose(model, optimizer, loss):
    """The checks to print, in order, after the first ``loss.backward()`` of a loop that
    does not learn. Returns one line per check; the first line that reports a problem
    names the bug.

    1. Does the loss have a graph? (``loss.grad_fn``; a leaf loss was cut from the model.)
    2. Which parameters are trainable? (``requires_grad``; a frozen module shows here.)
    3. Which trainable parameters got no usable gradient? (``report_dead_grads``.)
    4. Does the optimizer hold this model's parameters? (compare the tensors, by identity.)
    """
    if not isinstance(model, nn.Module) or not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError("diagnose(model, optimizer, loss): pass the nn.Module, the optimizer and the loss")
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise TypeError("loss must be the scalar loss tensor the loop called backward() on")
    lines = []
    fn = loss.grad_fn
    lines.append(f"1. loss.grad_fn: {type(fn).__name__ if fn is not None else None}"
                 + ("" if fn is not None else "  <- cut: the loss does not depend on the model"))
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    lines.append(f"2. frozen: {frozen if frozen else 'none'}")
    trainable = [p for p in model.parameters() if p.requires_grad]
    if trainable and all(p.grad is None for p in trainable):
        lines.append("3. no trainable parameter has a .grad")
    else:
        dead = report_dead_grads(model)
        dead = {n: why for n, why in dead.items() if why != "frozen"}
        lines.append(f"3. no usable gradient: {dead if dead else 'none'}")
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    missing = [n for n, p in model.named_parameters() if p.requires_grad and id(p) not in held]
    lines.append(f"4. trainable but not in the optimizer: {missing if missing else 'none'}")
    return lines
# --8<-- [end:diagnose]


def first_step(variant, seed=0):
    """Model, optimizer and loss after the first backward of a starter's loop (or "fixed")."""
    X, y = make_data(seed)
    model = make_model(seed)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    if variant == "frozen":
        model.head.requires_grad_(False)
        opt = torch.optim.SGD(model.head.parameters(), lr=LR)
    elif variant == "optimizer":
        model = make_model(seed)
    if variant == "detach":
        loss = F.mse_loss(model(X).detach(), y).requires_grad_()
    elif variant == "item":
        loss = torch.tensor(F.mse_loss(model(X), y).item(), requires_grad=True)
    elif variant in ("frozen", "optimizer", "fixed"):
        loss = F.mse_loss(model(X), y)
    else:
        raise ValueError(f"variant must be one of {sorted(STARTERS)} or 'fixed', got {variant!r}")
    loss.backward()
    return model, opt, loss


# --8<-- [start:check]
def check(train, steps=10):
    """Acceptance: the loss after ``steps`` updates is below half the loss before the first."""
    if not callable(train):
        raise TypeError(f"check(train): pass your function train(steps, seed), got {type(train).__name__}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int; got {steps!r}")
    losses = train(steps=steps, seed=0)
    if not isinstance(losses, (list, tuple)) or not all(
            _is_number(v) for v in losses):
        raise CheckError(f"train must return a list of {steps + 1} losses as numbers (loss.item()), "
                          f"got {losses!r:.200}")
    if len(losses) != steps + 1:
        raise CheckError(f"train must return {steps + 1} losses (before each step, then after the last), "
                          f"got {len(losses)}")
    before, after = losses[0], losses[-1]
    if not all(math.isfinite(v) for v in losses):
        raise CheckError(f"the losses are not all finite: {losses}; the loop diverged or divided by 0")
    if not after < 0.5 * before:
        raise CheckError(
            f"the loss went from {before:.4f} to {after:.4f} in {steps} steps: it did not halve. "
            "After the first backward, print diagnose(model, opt, loss)"
        )
# --8<-- [end:check]


# --8<-- [start:chart]
def loss_table(columns, width=30):
    """A text table of losses by step, with a bar for the last column.

    columns: {name: list of floats}, all of one length. Each bar has ``width`` characters
    at the largest loss of the last column.
    """
    if not isinstance(columns, dict):
        raise TypeError(f"columns must be a dict {{name: losses}}, got {type(columns).__name__}")
    if not columns or len({len(v) for v in columns.values()}) != 1:
        raise ValueError("pass {name: losses} with one list of losses per name, all of one length")
    names, last = list(columns), list(columns.values())[-1]
    top = max((v for v in last if math.isfinite(v)), default=1.0) or 1.0  # nan/inf get no bar
    lines = ["step  " + "  ".join(f"{n:>9}" for n in names)]
    for i in range(len(last)):
        step = f"{i:4}" if i < len(last) - 1 else " end"
        cells = "  ".join(f"{columns[n][i]:9.4f}" for n in names)
        bar = "#" * round(width * last[i] / top) if math.isfinite(last[i]) else ""
        lines.append(f"{step}  {cells}  " + bar)
    return "\n".join(lines)
# --8<-- [end:chart]
# --8<-- [end:module]


def main(argv=()):
    """``python -m snippets.exercises.broken_graph [--steps N]``: the loss table, the diagnoses, the check."""
    from snippets._cli import parser

    cli = parser("snippets.exercises.broken_graph", __doc__)
    cli.add_argument("--steps", type=int, default=10, help="SGD steps in the loss table (default 10)")
    steps = cli.parse_args(argv).steps
    if steps < 1:
        cli.error(f"--steps {steps}: take at least one step")
    columns = {name: fn(steps=steps) for name, fn in STARTERS.items()}
    columns["fixed"] = solution(steps=steps)
    print(loss_table(columns))
    print()
    for variant in list(STARTERS) + ["fixed"]:
        print(variant)
        for line in diagnose(*first_step(variant)):
            print("  " + line)
    check(solution)
    print("check(solution): PASS")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
