"""The checker of the workshop: a reader's ``backward`` (and optionally ``forward``) against torch.

``check(task, backward, forward=None)`` runs, in order, and stops at the first failure:

    forward       the output against torch's, on every case of the task (float64)
    backward      each gradient against torch autograd's, with a random upstream gradient
    stability     (softmax_ce, logsumexp) float32 inputs of size 1e3: finite, equal to torch's
    gradcheck     backward against finite differences of forward, float64
    gradgradcheck backward is itself differentiable (it is built from torch operations)

It returns a ``Report``: ``report.passed`` and ``str(report)``, the lines a reader sees.
Every comparison is NaN-safe: an entry is wrong unless ``|got - want| <= atol + rtol*|want|``.
"""

import importlib.machinery
import importlib.util
import types
from pathlib import Path

import torch

TOL = {torch.float64: (1e-9, 1e-7), torch.float32: (1e-4, 1e-4)}  # (atol, rtol)


class Report:
    """The lines of one check run; ``passed`` is True when every check passed."""

    def __init__(self, title):
        if not isinstance(title, str):
            raise TypeError(f"Report(title): title must be a str, the report's first line; got {type(title).__name__}")
        self.lines, self.passed = [title], True

    def ok(self, name, what):
        self.lines.append(f"ok    {name}: {what}")

    def fail(self, name, what, hint, skipped):
        self.passed = False
        self.lines.append(f"FAIL  {name}: {what}")
        self.lines.append(f"hint: {hint}")
        if skipped:
            self.lines.append(f"not run: {', '.join(skipped)} (fix the first failure first)")

    def __str__(self):
        end = "all checks passed" if self.passed else "a check failed"
        return "\n".join(self.lines + [end])


class Mismatch(Exception):
    """A wrong result: ``what`` for the reader, ``key`` picks the hint."""

    def __init__(self, what, key):
        super().__init__(what)
        self.what, self.key = what, key


def _fmt(t):
    return "(" + ", ".join(str(int(s)) for s in t) + (",)" if len(t) == 1 else ")")


def compare(name, got, want, case, key):
    """Raise Mismatch unless ``got`` is a tensor of ``want``'s shape and dtype, equal within TOL."""
    if not isinstance(want, torch.Tensor) or want.dtype not in TOL:
        what = f"a {want.dtype} tensor" if isinstance(want, torch.Tensor) else type(want).__name__
        raise TypeError(f"compare(name, got, want, ...): want must be torch's float32 or float64 tensor "
                        f"to compare against, got {what}")
    if not isinstance(got, torch.Tensor):
        raise Mismatch(f"{name} on {case}: expected a tensor, got {type(got).__name__}", "type")
    if got.shape != want.shape:
        raise Mismatch(f"{name} on {case}: shape {_fmt(got.shape)}, expected {_fmt(want.shape)}", key + ":shape")
    if got.dtype != want.dtype:
        raise Mismatch(f"{name} on {case}: dtype {got.dtype}, expected {want.dtype}", "dtype")
    atol, rtol = TOL[want.dtype]
    got_d, want_d = got.detach(), want.detach()
    good = (got_d - want_d).abs() <= atol + rtol * want_d.abs()  # False where either is NaN
    if not torch.isfinite(want_d).all():
        raise RuntimeError(f"torch's own {name} is not finite on {case}: a defect of the task")
    if bool(good.all()):
        return
    bad = (~good).nonzero()
    first = tuple(int(i) for i in bad[0])
    e, g = want_d[first].item(), got_d[first].item()
    where = _fmt(first) if first else "()"
    what = (f"{name} on {case}: first wrong entry at {where}: expected {e:.6g}, got {g:.6g} "
            f"({len(bad)} of {want_d.numel()} entries wrong)")
    if not torch.isfinite(got_d).all():
        key = key + ":nonfinite"
    else:
        ratio = got_d[want_d.abs() > 1e-6] / want_d[want_d.abs() > 1e-6]
        if not got_d.any():
            what += "; every entry of yours is 0"
        elif ratio.numel() and bool(((got_d - ratio[0] * want_d).abs() <= atol + rtol * (ratio[0] * want_d).abs()).all()):
            what += f"; every entry is {ratio[0].item():.6g} times torch's"
    raise Mismatch(what, key)


def _as_tuple(grads, names):
    if isinstance(grads, torch.Tensor) and len(names) == 1:
        grads = (grads,)
    if not isinstance(grads, (tuple, list)) or len(grads) != len(names):
        raise Mismatch(f"backward must return {len(names)} gradient(s) ({', '.join(names)}), "
                       f"got {type(grads).__name__}" + (f" of length {len(grads)}" if isinstance(grads, (tuple, list)) else ""),
                       "type")
    return tuple(grads)


def _torch_grads(task, inputs, grad_out):
    """The gradients of torch's own forward, by autograd."""
    leaves = [x.detach().requires_grad_(i in task.DIFF) for i, x in enumerate(inputs)]
    out = task.torch_forward(*leaves)
    return torch.autograd.grad(out, [leaves[i] for i in task.DIFF], grad_out)


def _as_function(task, forward, backward):
    """The reader's forward/backward as one torch.autograd.Function, for gradcheck."""

    class Reader(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            ctx.save_for_backward(*inputs)
            return forward(*inputs)

        @staticmethod
        def backward(ctx, grad_out):
            inputs = ctx.saved_tensors
            grads = _as_tuple(backward(grad_out, *inputs), task.GRADS)
            full = [None] * len(inputs)
            for i, g in zip(task.DIFF, grads):
                full[i] = g
            return tuple(full)

    return Reader.apply


def run_checks(task, forward, backward, report, own_forward=True):
    """Run the checks of ``task`` (a name or a task module) on ``forward`` and ``backward`` into
    ``report``; ``check`` is the usual entry point."""
    task = _task_module(task, "run_checks(task, ...)")
    for arg, fn in (("forward", forward), ("backward", backward)):
        if not callable(fn):
            raise TypeError(f"run_checks(task, forward, backward, report): {arg} must be a function, "
                            f"got {type(fn).__name__}")
    if not isinstance(report, Report):
        raise TypeError(f"run_checks(task, forward, backward, report): report must be a Report "
                        f"(check() makes one), got {type(report).__name__}")
    names = ["forward", "backward"] + (["stability"] if task.STABLE else []) + ["gradcheck"] + (
        ["gradgradcheck"] if task.TWICE else [])
    cases = [(label, task.inputs(label, torch.float64)) for label in task.CASES]

    def forward_check():
        for label, inputs in cases:
            compare("output", forward(*inputs), task.torch_forward(*inputs), label, "forward")
        whose = "" if own_forward else "the task's forward (you defined none): "
        return f"{whose}output equals torch's on {len(cases)} cases"

    def backward_check(cases=cases, key="backward"):
        for n, (label, inputs) in enumerate(cases):
            out = task.torch_forward(*inputs)
            gen = torch.Generator().manual_seed(100 + n)
            grad_out = torch.randn(out.shape, generator=gen, dtype=out.dtype)
            want = _torch_grads(task, inputs, grad_out)
            got = _as_tuple(backward(grad_out, *inputs), task.GRADS)
            for name, g, w in zip(task.GRADS, got, want):
                compare(name, g, w, label, f"{key}:{name}")
        return f"{', '.join(task.GRADS)} equal torch autograd's on {len(cases)} cases"

    def stability_check():
        big = [(label, task.inputs(label, torch.float32)) for label in task.STABLE]
        for label, inputs in big:
            compare("output", forward(*inputs), task.torch_forward(*inputs), label, "stability")
        backward_check(big, "stability")
        return f"finite and equal to torch's in float32 on {', '.join(task.STABLE)}"

    small = getattr(task, "GRADCHECK", task.CASES[0])  # gradcheck's case: small, it perturbs every entry
    small_inputs = task.inputs(small, torch.float64)

    def gradcheck():
        inputs = [x.detach().requires_grad_(i in task.DIFF) for i, x in enumerate(small_inputs)]
        if not torch.autograd.gradcheck(_as_function(task, forward, backward), inputs, raise_exception=False,
                                                fast_mode=True):
            raise Mismatch(f"on {small}: backward disagrees with finite differences of forward",
                           "gradcheck")
        return f"backward agrees with finite differences of forward (float64, {small})"

    def gradgradcheck():
        inputs = [x.detach().requires_grad_(i in task.DIFF) for i, x in enumerate(small_inputs)]
        try:
            ok = torch.autograd.gradgradcheck(_as_function(task, forward, backward), inputs,
                                              raise_exception=False, fast_mode=True)
        except RuntimeError as exc:
            raise Mismatch(f"on {small}: differentiating backward raised: {str(exc).splitlines()[0]}",
                           "gradgradcheck") from None
        if not ok:
            raise Mismatch(f"on {small}: the gradient of backward disagrees with finite differences",
                           "gradgradcheck")
        return "backward is differentiable, and its gradient agrees with finite differences"

    checks = {"forward": forward_check, "backward": backward_check, "stability": stability_check,
              "gradcheck": gradcheck, "gradgradcheck": gradgradcheck}
    for i, name in enumerate(names):
        try:
            report.ok(name, checks[name]())
        except Mismatch as exc:
            report.fail(name, exc.what, _hint(task, exc.key), names[i + 1:])
            return
        except Exception as exc:  # an error in the reader's code is a failed check, not a crash
            report.fail(name, f"your code raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
                        _hint(task, name + ":raised"), names[i + 1:])
            return


def _hint(task, key):
    """The most specific hint the task has for ``key`` (e.g. "backward:grad_x:shape")."""
    parts = key.split(":")
    for n in range(len(parts), 0, -1):
        text = task.HINTS.get(":".join(parts[:n]))
        if text:
            return text
    return GENERIC.get(parts[-1], GENERIC.get(parts[0], "compare your derivation with the folded one on the page"))


GENERIC = {
    "type": "return a tuple with one tensor per input that needs a gradient, in the order of the inputs",
    "shape": "a gradient has the shape of its input: sum over the dimensions that were broadcast",
    "dtype": "build new tensors with the input's dtype (torch.zeros_like(x), or dtype=x.dtype)",
    "nonfinite": "a NaN or inf: subtract the row maximum before exp (exp(1000) overflows)",
    "raised": "run your function on the case named above, in a Python session, and read the traceback",
    "gradcheck": "your backward is not the derivative of your forward: check each term of the chain rule",
    "gradgradcheck": "build the gradient from torch operations on the inputs and grad_out: no .detach(), "
                     ".item(), .numpy() or in-place writes into an input",
}


# ------------------------------------------------------------------ tasks and files

def tasks():
    """{name: module} of every task, in the order of the workshop."""
    from snippets.workshop import TASKS
    return {name: importlib.import_module(f"snippets.workshop.{name}") for name in TASKS}


def get_task(name):
    """The module of the task named ``name`` (as ``python -m snippets.workshop list`` prints it)."""
    table = tasks()
    if not isinstance(name, str):
        raise TypeError(f"get_task(name): name must be a task name (a str), one of {', '.join(table)}; "
                        f"got {type(name).__name__}")
    if name not in table:
        raise KeyError(f"unknown task {name!r}; the tasks are: {', '.join(table)}")
    return table[name]


def _task_module(task, where):
    """The task module for ``task``: a task name or a task module (from get_task)."""
    if isinstance(task, str):
        return get_task(task)
    if isinstance(task, types.ModuleType) and hasattr(task, "GRADS") and hasattr(task, "CASES"):
        return task
    raise TypeError(f"{where}: task must be a task name such as 'linear' (python -m snippets.workshop list) "
                    f"or its module, get_task('linear'); got {type(task).__name__}")


def check(task, backward, forward=None, who="your code"):
    """Check ``backward`` (and ``forward``, else the task's own) for the task named ``task``.
    ``who`` names the code in the report's first line."""
    mod = _task_module(task, "check(task, backward)")
    if not callable(backward):
        raise TypeError(f"check({mod.NAME!r}, backward): pass your function {mod.SIGNATURE_BACKWARD}")
    if forward is not None and not callable(forward):
        raise TypeError(f"check({mod.NAME!r}, backward, forward): forward must be a function {mod.SIGNATURE_FORWARD}")
    report = Report(f"check {mod.NAME} ({who}): {mod.TITLE}")
    run_checks(mod, forward or mod.forward, backward, report, forward is not None)
    return report


def load(path, mod):
    """The ``backward`` (and ``forward``, or None) defined in the Python file ``path``, for the
    task ``mod`` (a task name or module)."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"load(path, mod): path must be the path of a Python file (a str or Path), "
                        f"got {type(path).__name__}")
    mod = _task_module(mod, "load(path, mod)")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    loader = importlib.machinery.SourceFileLoader(f"workshop_reader_{path.stem}", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SystemExit as exc:  # sys.exit() at import would end the check with no report
        raise ImportError(f"running {path} called sys.exit({exc.code!r}): define backward without "
                          "exiting, or put the call under if __name__ == \"__main__\":") from None
    except Exception as exc:
        raise ImportError(f"running {path} raised {type(exc).__name__}: {exc}") from None
    backward = getattr(module, "backward", None)
    if not callable(backward):
        raise AttributeError(f"{path} defines no function backward: define {mod.SIGNATURE_BACKWARD}")
    forward = getattr(module, "forward", None)
    if forward is not None and not callable(forward):
        raise AttributeError(f"{path}: forward is not a function: define {mod.SIGNATURE_FORWARD}, or remove it")
    return backward, forward


STARTERS = Path(__file__).resolve().parent / "starters"


def starter_path(name):
    """The starter file of the task named ``name``."""
    get_task(name)  # a clear error for a name that is not a task
    return STARTERS / f"{name}.py"


