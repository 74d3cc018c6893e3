"""The checker of the workshop: a reader's ``backward`` (and optionally ``forward``) against torch.

``check(task, backward, forward=None, seed=None, hint=0)`` draws the cases of one run from
``seed`` (a fresh one when None; the report prints it, and the same seed replays the same
cases): each task's ``cases(gen, dtype)`` in float64 and in float32, every other case with
non-contiguous inputs and upstream gradient. Then it runs, in order, and stops at the first
failure:

    forward    the output against torch's, on every case
    backward   each gradient against torch autograd's, with a random upstream gradient
    stability  (softmax_ce, logsumexp) float32 inputs of size 1e3: finite, equal to torch's

The expected values are computed by torch in float64 from the same inputs. Every comparison is
NaN-safe: an entry is wrong unless ``|got - want| <= atol + rtol*|want|``. A failure names the
check, the gradient, the case (shapes, dtype, layout, seed), the first wrong entry, the largest
absolute and relative errors; it never shows the formula. ``hint=n`` adds the task's n-th hint
for the failure (the first hints point, the last gives the formula).

The reader's code is refused, with a message, when it calls autograd (``torch.autograd.grad``,
``.backward()``, ``torch.func``), calls into the book's reference solution
(``snippets.workshop.<task>``; the task's given ``forward`` may be imported and called), or
writes in place into ``grad_out`` or an input. What is judged is what the code calls while it
runs, not what its file imports. An exception
in it (``sys.exit`` included) is a failed check that names the case and shows its traceback.
It returns a ``Report``: ``report.passed`` and ``str(report)``, the lines a reader sees.
"""

import importlib.machinery
import importlib.util
import secrets
import sys
import traceback
import types
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode

TOL = {torch.float64: (1e-9, 1e-7), torch.float32: (1e-5, 2e-4)}  # (atol, rtol); atol scales with max|want|
HERE = Path(__file__).resolve()


def size(gen, lo, hi):
    """A size drawn from ``lo..hi`` (both included) with the generator ``gen``: for cases()."""
    return int(torch.randint(lo, hi + 1, (), generator=gen))


class Report:
    """The lines of one check run; ``passed`` is True when every check passed."""

    def __init__(self, title):
        if not isinstance(title, str):
            raise TypeError(f"Report(title): title must be a str, the report's first line; got {type(title).__name__}")
        self.lines, self.passed, self.skipped = [title], True, []

    def ok(self, name, what):
        self.lines.append(f"ok    {name}: {what}")

    def fail(self, name, what, skipped=()):
        self.passed = False
        first, *rest = what.splitlines()
        self.lines.append(f"FAIL  {name}: {first}")
        self.lines.extend(f"      {line}" if line else "" for line in rest)
        self.skipped = list(skipped)

    def note(self, prefix, text):
        self.lines.append(f"{prefix:5} {text}")

    def __str__(self):
        end = "all checks passed" if self.passed else "a check failed"
        skipped = [f"not run: {', '.join(self.skipped)} (fix the first failure first)"] if self.skipped else []
        return "\n".join(self.lines + skipped + [end])


class Mismatch(Exception):
    """A wrong result: ``what`` for the reader, ``key`` picks the hints (a gradient's name,
    "forward" or "stability"), ``kind`` the advice that needs no formula (shape, dtype, ...)."""

    def __init__(self, what, key, kind="value"):
        super().__init__(what)
        self.what, self.key, self.kind = what, key, kind


class _Refused(Exception):
    """The reader's code did what the workshop forbids (autograd, the reference solution)."""


def _fmt(t):
    return "(" + ", ".join(str(int(s)) for s in t) + (",)" if len(t) == 1 else ")")


def _pair(e, g):
    """``e`` and ``g`` with enough significant digits (7 or more) to tell them apart."""
    for p in range(7, 18):
        if f"{e:.{p}g}" != f"{g:.{p}g}":
            break
    return f"{e:.{p}g}", f"{g:.{p}g}"


def compare(name, got, want, case, key, dtype=None, slack=0.0):
    """Raise Mismatch unless ``got`` is a tensor of ``want``'s shape and of ``dtype`` (the case's;
    ``want``'s when None), equal to ``want`` within the tolerances of ``dtype``. ``want`` is
    torch's value, computed in float64 from the case's inputs; ``slack`` widens the absolute
    tolerance (the checker passes ten times torch's own float32 error)."""
    if not isinstance(want, torch.Tensor) or want.dtype not in TOL:
        what = f"a {want.dtype} tensor" if isinstance(want, torch.Tensor) else type(want).__name__
        raise TypeError(f"compare(name, got, want, ...): want must be torch's float32 or float64 tensor "
                        f"to compare against, got {what}")
    dtype = dtype or want.dtype
    if not isinstance(got, torch.Tensor):
        raise Mismatch(f"{name} on {case}: expected a tensor, got {type(got).__name__}", key, "type")
    if got.shape != want.shape:
        raise Mismatch(f"{name} on {case}: shape {_fmt(got.shape)}, expected {_fmt(want.shape)}", key, "shape")
    if got.dtype != dtype:
        raise Mismatch(f"{name} on {case}: dtype {got.dtype}, expected {dtype}", key, "dtype")
    want_d = want.detach().to(torch.float64)
    if not torch.isfinite(want_d).all():
        raise RuntimeError(f"torch's own {name} is not finite on {case}: a defect of the task")
    got_d = got.detach().to(torch.float64)
    atol, rtol = TOL[dtype]
    atol = max(atol * max(1.0, want_d.abs().max().item()) if want_d.numel() else atol, slack)
    err = (got_d - want_d).abs()
    good = err <= atol + rtol * want_d.abs()  # False where got is NaN
    if bool(good.all()):
        return
    bad = (~good).nonzero()
    first = tuple(int(i) for i in bad[0])
    e, g = _pair(want_d[first].item(), got_d[first].item())
    lines = [f"{name} is wrong on {case}",
             f"first wrong entry at {_fmt(first) if first else '()'}: expected {e}, got {g}"]
    finite = torch.isfinite(got_d)
    if not finite.all():
        lines.append(f"{len(bad)} of {want_d.numel()} entries wrong, {int((~finite).sum())} of them nan or inf")
        raise Mismatch("\n".join(lines), key, "nonfinite")
    def at(t):  # the first entry within a millionth of the largest: ties do not depend on rounding
        if not t.dim():
            return "()"
        first = int((t.flatten() >= t.max() * (1 - 1e-6)).nonzero()[0])
        return _fmt(tuple(int(i) for i in torch.unravel_index(torch.tensor(first), t.shape)))
    rel = torch.where(want_d != 0, err / want_d.abs(), torch.zeros_like(err))
    lines.append(f"{len(bad)} of {want_d.numel()} entries wrong; largest absolute error {err.max().item():.3g} "
                 f"at {at(err)}, largest relative error {rel.max().item():.3g} at {at(rel)}")
    big = want_d.abs() > 1e-6
    ratio = got_d[big] / want_d[big]
    if not got_d.any():
        lines.append("every entry of yours is 0")
    elif ratio.numel() and bool(((got_d - ratio[0] * want_d).abs() <= atol + rtol * (ratio[0] * want_d).abs()).all()):
        lines.append(f"every entry is {ratio[0].item():.6g} times torch's")
    raise Mismatch("\n".join(lines), key)


def _as_tuple(grads, names, case):
    if isinstance(grads, torch.Tensor) and len(names) == 1:
        grads = (grads,)
    if not isinstance(grads, (tuple, list)) or len(grads) != len(names):
        got = type(grads).__name__ + (f" of length {len(grads)}" if isinstance(grads, (tuple, list)) else "")
        raise Mismatch(f"backward must return {len(names)} gradient(s) ({', '.join(names)}), got {got} "
                       f"on {case}", names[0], "type")
    return tuple(grads)


# ------------------------------------------------------------------ the reader's code, guarded

def _task_files():
    from snippets.workshop import TASKS
    return {str(HERE.parent / f"{name}.py") for name in TASKS}


class _NoReverseMode(TorchFunctionMode):
    """Sees every torch call, however the reader imported it: refuses the entries of reverse mode."""

    def __init__(self, refuse):
        super().__init__()
        self.refuse = refuse

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if any(func is f for f in (torch.autograd.grad, torch.autograd.backward, torch.Tensor.backward)):
            self.refuse()  # torch.func's grad, vjp and jacrev call torch.autograd.grad
        return func(*args, **(kwargs or {}))


class _Guard:
    """While the reader's code runs: refuse autograd and calls into the reference solution (the
    book's code in ``files``, except the tasks' given ``forward``, which the reader may call)."""

    def __init__(self, files):
        self.refused, self.files = None, files
        self.given = {mod.forward.__code__ for mod in tasks().values()} if files else set()

    def _refuse(self, what):
        def refuse(*args, **kwargs):
            self.refused = self.refused or what
            raise _Refused(what)
        return refuse

    def _in_given(self, frame):
        """True inside a task's given forward (in it, or in code it calls)."""
        while frame is not None and frame.f_code not in self.given:
            frame = frame.f_back
        return frame is not None

    def _profile(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename in self.files and not self.refused and not self._in_given(frame):
            self.refused = f"{frame.f_code.co_name} of {Path(frame.f_code.co_filename).stem} (the book's reference solution)"
            raise _Refused(self.refused)

    def __enter__(self):
        import torch.autograd.forward_ad as fwad
        self.saved = [(fwad, name, getattr(fwad, name)) for name in ("make_dual", "enter_dual_level")]
        for name in ("make_dual", "enter_dual_level"):  # dual_level() enters through the second
            setattr(fwad, name, self._refuse("forward-mode autograd (torch.func.jvp, jacfwd or make_dual)"))
        self.mode = _NoReverseMode(self._refuse("autograd (torch.autograd.grad, .backward() or torch.func)"))
        self.mode.__enter__()
        self.profile = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self.profile)
        self.mode.__exit__(None, None, None)
        for owner, name, value in self.saved:
            setattr(owner, name, value)
        return False


def _reader_frames(exc):
    """The traceback of ``exc`` from the reader's code on (the checker's and the import system's
    frames left out), then the exception's own lines: for a SyntaxError, its file, line and caret."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).resolve() != HERE and not f.filename.startswith("<frozen ")]
    return "".join(traceback.format_list(frames) + traceback.format_exception_only(exc)).rstrip("\n")


def _call(fn, args, what, case, files):
    """``fn(*args)`` guarded (no autograd, no call into ``files``); a refusal or an exception
    becomes a Mismatch naming ``case``."""
    guard = _Guard(files)
    try:
        with guard:
            result = fn(*args)
    except (Exception, SystemExit) as exc:
        if guard.refused:
            raise Mismatch(f"your {what} called {guard.refused} on {case}", "refused", "refused") from None
        shown = f"sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else type(exc).__name__
        msg = str(exc).splitlines()[0] if str(exc) and not isinstance(exc, SystemExit) else ""
        raise Mismatch(f"your {what} {'called' if isinstance(exc, SystemExit) else 'raised'} {shown} on {case}" + (f": {msg}" if msg else "") + "\n"
                       f"traceback (most recent call last):\n{_reader_frames(exc)}", "raised", "raised") from None
    if guard.refused:
        raise Mismatch(f"your {what} called {guard.refused} on {case}", "refused", "refused")
    return result


def _noncontiguous(t):
    """``t``'s values in a non-contiguous tensor: its dimensions stored in reverse order, every
    other element of a buffer twice as long, the others NaN (or -1 for an integer tensor). So
    ``t.view(-1)`` raises, as it does for a transposed tensor. A 0-d tensor is returned as it is."""
    if not isinstance(t, torch.Tensor) or t.dim() == 0:
        return t
    rev = list(range(t.dim()))[::-1]
    buf = torch.full((*[t.shape[i] for i in rev], 2), float("nan") if t.is_floating_point() else -1, dtype=t.dtype)
    buf[..., 0] = t.permute(rev)
    return buf[..., 0].permute(rev)


def _params(signature):
    """The parameter names of a signature such as "backward(grad_y, x) -> (grad_x,)"."""
    return [p.strip() for p in signature.split("(", 1)[1].split(")", 1)[0].split(",")]


def _untouched(tensors, copies, names, what, case):
    """Raise Mismatch if the reader's code wrote into one of ``tensors`` (their versions and values
    against ``copies``)."""
    for t, (version, copy), name in zip(tensors, copies, names):
        if isinstance(t, torch.Tensor) and (t._version != version or not torch.equal(t, copy)):
            role = "the upstream gradient" if name.startswith("grad") else \
                "an input (in an autograd.Function, a tensor autograd saved for backward)"
            raise Mismatch(f"your {what} wrote in place into {name}, {role}, on {case}", "inplace", "inplace")


# ------------------------------------------------------------------ the checks

def _torch_grads(task, inputs, grad_out, dtype=torch.float64):
    """(output, gradients) of torch's own forward at ``inputs`` computed in ``dtype``, by autograd."""
    leaves = [x.detach().to(dtype).requires_grad_(True) if i in task.DIFF else x
              for i, x in enumerate(inputs)]
    out = task.torch_forward(*leaves)
    return out.detach(), torch.autograd.grad(out, [leaves[i] for i in task.DIFF], grad_out.to(dtype))


def _slack(ours, theirs):
    """Ten times the largest error of torch's own float32 result ``theirs`` against ``ours`` (float64):
    a float32 answer may be as far off as torch's own, with a margin (ill-conditioned cases)."""
    return 10 * (theirs.to(torch.float64) - ours).abs().max().item() if ours.numel() else 0.0


def draw(task, seed):
    """The cases of one run: [(label, inputs, grad_out)], float64 then float32, every other one
    non-contiguous; then the stability cases (float32). Same seed, same cases."""
    gen = torch.Generator().manual_seed(seed)
    cases, stable = [], []
    for d, dtype in enumerate((torch.float64, torch.float32)):
        for i, (label, inputs) in enumerate(task.cases(gen, dtype)):
            cases.append([label, dtype, inputs, (i + d) % 2 == 1])
    for label, inputs in (task.stable_cases(gen) if hasattr(task, "stable_cases") else ()):
        stable.append([label, torch.float32, inputs, False])
    out = []
    for group in (cases, stable):
        done = []
        for n, (label, dtype, inputs, strided) in enumerate(group, 1):
            y = task.torch_forward(*inputs)
            grad_out = torch.randn(y.shape, generator=gen, dtype=dtype)
            if strided:
                inputs, grad_out = tuple(_noncontiguous(x) for x in inputs), _noncontiguous(grad_out)
            layout = ", non-contiguous inputs and upstream gradient" if strided and grad_out.dim() else (
                ", non-contiguous inputs" if strided else "")
            done.append((f"case {n} of {len(group)} (seed {seed}): {label}, {str(dtype)[6:]}{layout}", inputs, grad_out))
        out.append(done)
    return out


def run_checks(task, forward, backward, report, own_forward=True, seed=0):
    """Run the checks of ``task`` (a name or a task module) on ``forward`` and ``backward`` into
    ``report``, on the cases drawn from ``seed``; returns the Mismatch that failed, or None.
    ``check`` is the usual entry point."""
    task = _task_module(task, "run_checks(task, ...)")
    for arg, fn in (("forward", forward), ("backward", backward)):
        if not callable(fn):
            raise TypeError(f"run_checks(task, forward, backward, report): {arg} must be a function, "
                            f"got {type(fn).__name__}")
    if not isinstance(report, Report):
        raise TypeError(f"run_checks(task, forward, backward, report): report must be a Report "
                        f"(check() makes one), got {type(report).__name__}")
    cases, stable = draw(task, seed)
    extra = dict(getattr(task, "EXTRA_CHECKS", ()))  # run after the others, on the reader's backward
    names = ["forward", "backward"] + (["stability"] if stable else []) + list(extra)
    params = _params(task.SIGNATURE_BACKWARD)
    files = set() if backward is task.backward else _task_files()  # the reference may call itself

    def forward_check(cases=cases, key="forward"):
        for label, inputs, _ in cases:
            copies = [(x._version, x.clone()) for x in inputs]
            got = _call(forward, inputs, "forward", label, files) if own_forward else forward(*inputs)
            _untouched(inputs, copies, params[1:], "forward", label)
            dtype = inputs[task.DIFF[0]].dtype
            want = task.torch_forward(*[x.to(torch.float64) if x.is_floating_point() else x for x in inputs])
            slack = _slack(want, task.torch_forward(*inputs)) if dtype == torch.float32 else 0.0
            compare("output", got, want, label, key, dtype, slack)
        whose = "" if own_forward else "the task's forward (you defined none): "
        return f"{whose}output equals torch's on {len(cases)} cases"

    def backward_check(cases=cases, key=None):
        for label, inputs, grad_out in cases:
            want = _torch_grads(task, inputs, grad_out)[1]
            own = _torch_grads(task, inputs, grad_out, grad_out.dtype)[1] if grad_out.dtype == torch.float32 else want
            args = (grad_out, *inputs)
            copies = [(x._version, x.clone()) for x in args]
            got = _as_tuple(_call(backward, args, "backward", label, files), task.GRADS, label)
            _untouched(args, copies, params, "backward", label)
            for name, g, w, o in zip(task.GRADS, got, want, own):
                slack = _slack(w, o) if grad_out.dtype == torch.float32 else 0.0
                compare(name, g, w, label, key or name, grad_out.dtype, slack)
        return f"{', '.join(task.GRADS)} equal torch autograd's on {len(cases)} cases"

    def stability_check():
        forward_check(stable, "stability")
        backward_check(stable, "stability")
        return f"finite and equal to torch's on {len(stable)} float32 cases of size 1e3"

    checks = {"forward": forward_check, "backward": backward_check, "stability": stability_check}
    checks.update({name: (lambda fn=fn: fn(backward)) for name, fn in extra.items()})
    for i, name in enumerate(names):
        try:
            report.ok(name, checks[name]())
        except Mismatch as exc:
            report.fail(name, exc.what, names[i + 1:])
            return exc
    return None


ADVICE = {  # what to do, by the kind of failure: no formula
    "type": "return a tuple with one tensor per input that needs a gradient, in the order of the inputs",
    "shape": "a gradient has the shape of its input; where the forward broadcast an input, its gradient "
             "is summed over the broadcast dimensions",
    "dtype": "build every tensor from the inputs (torch.zeros_like(x), or dtype=x.dtype): float32 in, float32 out",
    "nonfinite": "a nan or inf: look for an exp that overflows, a log of 0 or a division by 0",
    "raised": "the traceback above is your code's; reproduce the case with --seed and the shapes named",
    "inplace": "the caller still needs that tensor: compute into a new tensor (x - y, torch.zeros_like, "
               ".clone() first) instead of writing into it; writing into a tensor you computed is fine",
    "refused": "derive the gradient and build it from torch operations; the workshop checks your derivation, "
               "not autograd's or the book's",
    "opcheck": "build the backward from torch operations on tensors, with no Python branch on a tensor's value: "
               "compile traces it",
    "value": "compare the first wrong entry on paper: which term of your derivation changes it?",
}


def _hint_lines(task, exc, hint, how):
    """The lines after a failure: what to do, then the asked-for hint, or how to ask for one."""
    lines = [("do", ADVICE.get(exc.kind, ADVICE["value"]))]
    levels = task.HINTS.get(exc.key) if exc.kind in ("value", "shape", "nonfinite", "opcheck") else None
    if not levels:
        return lines
    if hint:
        n = min(hint, len(levels))
        lines.append(("hint", f"{n} of {len(levels)} on {exc.key}: {levels[n - 1]}"))
        if n < len(levels):
            lines.append(("", f"the next hint: {how(n + 1)}"))
    else:
        lines.append(("hint", f"{len(levels)} hints on {exc.key}, the last gives the formula; the first: {how(1)}"))
    return lines


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
    if isinstance(task, types.ModuleType) and hasattr(task, "GRADS") and hasattr(task, "cases"):
        return task
    raise TypeError(f"{where}: task must be a task name such as 'linear' (python -m snippets.workshop list) "
                    f"or its module, get_task('linear'); got {type(task).__name__}")


def check(task, backward, forward=None, who="your code", seed=None, hint=0, how=None):
    """Check ``backward`` (and ``forward``, else the task's own) for the task named ``task``, on
    cases drawn from ``seed`` (fresh when None). ``who`` names the code in the report's first line;
    ``hint=n`` adds the n-th hint on a failure; ``how(n)`` says how to ask for hint n."""
    mod = _task_module(task, "check(task, backward)")
    if not callable(backward):
        raise TypeError(f"check({mod.NAME!r}, backward): pass your function {mod.SIGNATURE_BACKWARD}")
    if forward is not None and not callable(forward):
        raise TypeError(f"check({mod.NAME!r}, backward, forward): forward must be a function {mod.SIGNATURE_FORWARD}")
    if seed is None:
        seed = secrets.randbelow(10 ** 6)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2 ** 64:
        raise TypeError(f"check(..., seed): seed must be an int >= 0 and < 2**64, torch's largest seed being "
                        f"2**64 - 1 (the report prints the one it used), got {seed!r}")
    if not isinstance(hint, int) or isinstance(hint, bool) or hint < 0:
        raise TypeError(f"check(..., hint): hint must be an int >= 0 (1 for the first hint), got {hint!r}")
    how = how or (lambda n: f"check({mod.NAME!r}, backward, seed={seed}, hint={n})")
    report = Report(f"check {mod.NAME} ({who}): {mod.TITLE}")
    report.note("seed", f"{seed} (the same seed replays these cases)")
    exc = run_checks(mod, forward or mod.forward, backward, report, forward is not None, seed)
    if exc is not None:
        for prefix, text in _hint_lines(mod, exc, hint, how):
            report.note(prefix, text)
    return report


class LoadError(Exception):
    """The reader's file could not be loaded: it exited or raised at import, or defines no backward."""


def load(path, mod):
    """The ``backward`` (and ``forward``, or None) defined in the Python file ``path``, for the
    task ``mod`` (a task name or module); a ``forward`` that is the task's own, imported, counts
    as none. Raises LoadError when running the file exits or raises (a SyntaxError shows its
    file, line and caret), or when its backward is a reference solution's, imported."""
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
        raise LoadError(f"running {path} called sys.exit({exc.code!r}) at import, so nothing was checked: "
                        "define backward without exiting, or put the call under if __name__ == \"__main__\":") from None
    except Exception as exc:
        raise LoadError(f"running {path} raised {type(exc).__name__} at import, so nothing was checked:\n"
                        f"{_reader_frames(exc)}") from None
    backward = getattr(module, "backward", None)
    if not callable(backward):
        raise AttributeError(f"{path} defines no function backward: define {mod.SIGNATURE_BACKWARD}")
    if getattr(getattr(backward, "__code__", None), "co_filename", None) in _task_files():
        raise LoadError(f"{path}: its backward is {backward.__module__}.backward, the book's reference solution, "
                        f"imported: define your own {mod.SIGNATURE_BACKWARD}")
    forward = getattr(module, "forward", None)
    if forward is not None and not callable(forward):
        raise AttributeError(f"{path}: forward is not a function: define {mod.SIGNATURE_FORWARD}, or remove it")
    if forward is mod.forward:  # the task's given forward, imported: the file defines none of its own
        forward = None
    return backward, forward


STARTERS = Path(__file__).resolve().parent / "starters"


def starter_path(name):
    """The starter file of the task named ``name``."""
    get_task(name)  # a clear error for a name that is not a task
    return STARTERS / f"{name}.py"
