"""The checker of the workshop: a reader's ``backward`` (and optionally ``forward``) judged against torch.

``check(task, backward)`` (a function) or ``check(task, file=path)`` (a Python file) draws the
cases of one run from ``seed`` (a fresh one when None; the report prints it, and the same seed
replays the same cases): each task's ``cases(gen, dtype)`` in float64 and in float32, every
other case with non-contiguous inputs and upstream gradient. Then it judges, in order, and
stops at the first failure:

    forward    the output against torch's, on every case
    backward   each gradient against torch autograd's, with a random upstream gradient
    stability  (softmax_ce, logsumexp, custom_op, layernorm) float32 inputs of size 1e3: finite, equal to torch's
    ...        a task's EXTRA_CHECKS, ((name, fn),): fn(backward) runs where the reader's code
               runs, unguarded, and returns the ok line's text or raises Mismatch

Judging, not trusting. The reader's code runs in a separate process (``_reader.py``), forked
from a clean server process, ``python -m snippets.workshop._reader``, started at the first
check, that imported torch and the checker's modules and runs nothing else. The child receives the inputs and upstream gradients
of the run (torch.save, through a file), computes the reader's outputs and gradients, and
sends them back the same way. It never holds an expected value: those are computed here, by
torch in float64, after the child's results have come back. A pass is this process's verdict
after its comparisons; a child that ends without sending its results (``os._exit(0)``
included) is a failure that says so. A function is sent to the child as its code (marshal)
with the globals it names: modules and functions of other modules by their import names,
functions defined alongside it by their code, numbers, strings and tensors by value.

In the child, the reader's code is refused, by name, when it calls torch's autograd
(``torch.autograd.grad``, ``.backward()``, ``torch.autograd.functional``, forward-mode
``torch.autograd.forward_ad``, ``torch.func``'s transforms but ``vmap``), makes a tensor that
requires grad (the only way to a ``grad_fn`` node), calls a backward op of aten
(``torch.ops.aten.*_backward*``), calls into the book's reference solution
(``snippets.workshop.<task>``; the task's given ``forward`` may be imported and called), or
writes in place into ``grad_out`` or an input (values, storage, shape and strides compared
before and after). An exception in it (``sys.exit`` included) is a failed check that names
the case and shows its traceback. What the checker cannot catch: an answer copied from
somewhere (the reference's code pasted under another name is a right answer to it), a
gradient computed numerically from the forward (central differences in float64 pass), and code
that switches off the child's watch from inside (its profile hook or torch-function mode) or
computes in another thread or process.

Every comparison is NaN-safe: an entry is wrong unless ``|got - want| <= atol + rtol*|want|``.
A failure names the check, the gradient, the case (shapes, dtype, layout, seed), the first
wrong entry, the largest errors; its advice comes from what failed (a precision-sized error, a
NaN and where, a signature, a shape); it never shows the formula. Hints are earned: each
check of the reader's code that fails on a gradient's value (or another check with hints) is
recorded in ``record`` (by default the folder $WORKSHOP_RECORD names, else ``.workshop/`` of
the current directory) and unlocks the next of that gradient's four levels (where to look, the
structure of the answer, a check by hand, the formula); an exception or a refusal unlocks
nothing; ``hint=n`` shows the highest unlocked level up to n. ``check`` returns a
``Report``: ``report.passed`` and ``str(report)``.
"""

import builtins
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import marshal
import os
import select
import signal
import subprocess
import secrets
import sys
import tempfile
import traceback
import types
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode

from snippets.workshop import RECORD_VARIABLE

TOL = {torch.float64: (1e-9, 1e-7), torch.float32: (1e-5, 2e-4)}  # (atol, rtol); atol scales with max|want|
HERE = Path(__file__).resolve()
TIMEOUT = 120  # seconds a child may take for one run
LEVELS = ("where to look", "the structure of the answer", "a check by hand", "the formula")
RECORD = Path(".workshop")  # the reader's record of failed checks, in the current directory


def default_record() -> Path:
    """The folder of the record when a call names none: the one $WORKSHOP_RECORD names, else
    ``.workshop/`` of the current directory."""
    return Path(os.environ.get(RECORD_VARIABLE) or RECORD)


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


class LoadError(Exception):
    """The reader's file could not be loaded: it exited or raised at import, or defines no backward."""


def _fmt(t):
    return "(" + ", ".join(str(int(s)) for s in t) + (",)" if len(t) == 1 else ")")


def _pair(e, g):
    """``e`` and ``g`` with enough significant digits (7 or more) to tell them apart."""
    for p in range(7, 18):
        if f"{e:.{p}g}" != f"{g:.{p}g}":
            break
    return f"{e:.{p}g}", f"{g:.{p}g}"


def _at(t):
    """Where ``t`` is largest: its first entry within a millionth of the maximum (ties do not
    depend on rounding)."""
    if not t.dim():
        return "()"
    first = int((t.flatten() >= t.max() * (1 - 1e-6)).nonzero()[0])
    return _fmt(tuple(int(i) for i in torch.unravel_index(torch.tensor(first), t.shape)))


def compare(name, got, want, case, key, dtype=None, slack=0.0):
    """Raise Mismatch unless ``got`` is a tensor of ``want``'s shape and of ``dtype`` (the case's;
    ``want``'s when None), equal to ``want`` within the tolerances of ``dtype``. ``want`` is
    torch's value, computed in float64 from the case's inputs; ``slack`` widens the absolute
    tolerance (the checker passes ten times torch's own float32 error). The Mismatch's kind is
    "nonfinite" (nan or inf), "precision" (every error within 1e-6..3e-2 of its entry) or "value"."""
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
        where = tuple(int(i) for i in (~finite).nonzero()[0])
        lines.append(f"{len(bad)} of {want_d.numel()} entries wrong, {int((~finite).sum())} of them nan or inf, "
                     f"the first at {_fmt(where) if where else '()'}")
        raise Mismatch("\n".join(lines), key, "nonfinite")
    wrong = ~good
    nonzero = wrong & (want_d != 0)
    if bool(nonzero.any()):
        rel = torch.where(nonzero, err / want_d.abs(), torch.zeros_like(err))
        rel_text = f"largest relative error {rel.max().item():.3g} at {_at(rel)}"
        zeros = int((wrong & (want_d == 0)).sum())
        if zeros:
            rel_text += f" ({zeros} wrong entries should be 0)"
    else:
        rel, rel_text = None, "every wrong entry should be 0"
    lines.append(f"{len(bad)} of {want_d.numel()} entries wrong; largest absolute error {err.max().item():.3g} "
                 f"at {_at(err)}, {rel_text}")
    big = want_d.abs() > 1e-6
    ratio = got_d[big] / want_d[big]
    if not got_d.any():
        lines.append("every entry of yours is 0")
    elif ratio.numel() and bool(((got_d - ratio[0] * want_d).abs() <= atol + rtol * (ratio[0] * want_d).abs()).all()):
        lines.append(f"every entry is {ratio[0].item():.6g} times torch's")
    precise = rel is not None and not bool((wrong & (want_d == 0)).any()) and 1e-6 <= rel.max().item() <= 3e-2
    raise Mismatch("\n".join(lines), key, "precision" if precise else "value")


def _as_tuple(grads, names, case):
    if isinstance(grads, torch.Tensor) and len(names) == 1:
        grads = (grads,)
    if not isinstance(grads, (tuple, list)) or len(grads) != len(names):
        got = type(grads).__name__ + (f" of length {len(grads)}" if isinstance(grads, (tuple, list)) else "")
        raise Mismatch(f"backward must return {len(names)} gradient(s) ({', '.join(names)}), got {got} "
                       f"on {case}", names[0], "type")
    return tuple(grads)


def _noncontiguous(t):
    """``t``'s values in a non-contiguous tensor: its dimensions stored in reverse order, every
    other element of a buffer twice as long, the others NaN (or -1 for an integer tensor). So
    ``t.view(-1)`` raises, as it does for a transposed matrix, whenever two or more dimensions
    have a size above 1 (a 1-d tensor still views). A 0-d tensor is returned as it is."""
    if not isinstance(t, torch.Tensor) or t.dim() == 0:
        return t
    rev = list(range(t.dim()))[::-1]
    buf = torch.full((*[t.shape[i] for i in rev], 2), float("nan") if t.is_floating_point() else -1, dtype=t.dtype)
    buf[..., 0] = t.permute(rev)
    return buf[..., 0].permute(rev)


def _params(signature):
    """The parameter names of a signature such as "backward(grad_y, x) -> (grad_x,)"."""
    return [p.strip() for p in signature.split("(", 1)[1].split(")", 1)[0].split(",")]


# ------------------------------------------------------------------ what runs in the child: the guard

def _task_files():
    from snippets.workshop import TASKS
    return {str(HERE.parent / f"{name}.py") for name in TASKS}


def _autograd_entries():
    """{code object: public name} of torch's autograd entry points, and {file: name} of the
    modules whose every function is one (torch.func's transforms but vmap, forward mode)."""
    import torch.autograd.forward_ad as fwad
    import torch.autograd.functional as functional
    import torch.func
    named = {"torch.autograd.grad": torch.autograd.grad, "torch.autograd.backward": torch.autograd.backward,
             "Tensor.backward": torch.Tensor.backward}
    named.update({f"torch.func.{n}": getattr(torch.func, n) for n in
                  ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize")})
    codes = {inspect.unwrap(f).__code__: name for name, f in named.items()}
    files = {functional.__file__: "torch.autograd.functional", fwad.__file__: "torch.autograd.forward_ad",
             inspect.unwrap(torch.func.vjp).__code__.co_filename: "torch.func"}
    return codes, files


class _Refused(Exception):
    """The reader's code did what the workshop forbids (autograd, the reference solution)."""


class _Watch(TorchFunctionMode):
    """Sees every torch call, however the reader reached it: refuses aten's backward ops and
    any call that makes a tensor requiring grad (an autograd graph)."""

    def __init__(self, guard):
        super().__init__()
        self.guard = guard

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "") or str(func)
        if name == "backward":
            self.guard.refuse("Tensor.backward (autograd)")
        if "backward" in name:
            self.guard.refuse(f"{name} (a backward op of aten)")
        if name.split(".")[0] in _DUAL:  # torch._make_dual, or aten's op by any of its names
            self.guard.refuse(f"{name} (forward-mode autograd)")
        out = func(*args, **(kwargs or {}))
        made = [t for t in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(t, torch.Tensor)]
        if name == "__set__" and args and isinstance(args[0], torch.Tensor):
            made.append(args[0])
        if any(t.requires_grad for t in made):
            shown = "the requires_grad setter" if name == "__set__" else name
            self.guard.refuse(f"{shown}, which made a tensor that requires grad (an autograd graph: its grad_fn "
                              "nodes, torch.autograd and torch.func would compute the gradient)")
        return out


# torch's own backward formulas written in Python (torch._decomp's decompositions of aten's
# backward ops, torch._refs): a function there whose name says backward is refused as the op is
_TORCH_FORMULAS = tuple(str(Path(torch.__file__).parent / d) + "/" for d in ("_decomp", "_refs"))


_DUAL = ("_make_dual", "_unpack_dual", "_enter_dual_level")  # forward-mode AD without forward_ad


class _Guard:
    """While the reader's code runs: refuse autograd, aten's backward ops (and torch's Python
    versions of them) and calls into the reference solution (the book's code in ``files``,
    except the tasks' given ``forward``)."""

    def __init__(self, files):
        self.refused, self.files = None, files
        self.given = {mod.forward.__code__ for mod in tasks().values()} if files else set()
        self.codes, self.autograd_files = _autograd_entries()

    def refuse(self, what):
        self.refused = self.refused or what
        raise _Refused(self.refused)

    def _in_given(self, frame):
        """True inside a task's given forward (in it, or in code it calls)."""
        while frame is not None and frame.f_code not in self.given:
            frame = frame.f_back
        return frame is not None

    def _profile(self, frame, event, arg):
        if self.refused:
            return
        if event == "call":
            code = frame.f_code
            if code in self.codes:
                self.refuse(f"{self.codes[code]} (autograd)")
            if code.co_filename in self.autograd_files and code.co_name != "vmap":
                self.refuse(f"{self.autograd_files[code.co_filename]}.{code.co_qualname} (autograd)")
            if "backward" in code.co_name and code.co_filename.startswith(_TORCH_FORMULAS):
                module = Path(code.co_filename).parent.name
                self.refuse(f"{code.co_name} of torch.{module} (torch's own backward formula)")
            if code.co_filename in self.files and not self._in_given(frame):
                self.refuse(f"{code.co_name} of {Path(code.co_filename).stem} (the book's reference solution)")
        elif event == "c_call" and "backward" in getattr(arg, "__name__", ""):
            self.refuse(f"{arg.__name__} (a backward op of aten)")
        elif event == "c_call" and getattr(arg, "__name__", "") in _DUAL:  # what forward_ad wraps
            self.refuse(f"torch.{arg.__name__} (forward-mode autograd)")
        elif event == "c_call" and getattr(arg, "__name__", "").startswith("_dispatch_call"):
            self.refuse(f"torch._C.{arg.__name__} (an op called past torch's Python API)")

    def __enter__(self):
        self.mode = _Watch(self)
        self.mode.__enter__()
        self.profile, self.hook, self.trace = sys.getprofile(), self._profile, sys.gettrace()
        sys.setprofile(self.hook)
        return self

    def __exit__(self, *exc):
        if sys.getprofile() is not self.hook and not self.refused:
            self.refused = "sys.setprofile, which switched off the checker's watch"
        if sys.gettrace() is not self.trace:  # a tracer would run the reader's code after the watch
            self.refused = self.refused or "sys.settrace, which runs your code after the checker's watch"
            sys.settrace(self.trace)
        try:
            sys.setprofile(self.profile)
        finally:
            self.mode.__exit__(None, None, None)
        return False


def _reader_frames(exc):
    """The traceback of ``exc`` from the reader's code on (the checker's and the import system's
    frames left out), then the exception's own lines: for a SyntaxError, its file, line and caret."""
    mine = {str(HERE), str(HERE.parent / "_reader.py")}
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if str(Path(f.filename).resolve()) not in mine and not f.filename.startswith("<frozen ")]
    return "".join(traceback.format_list(frames) + traceback.format_exception_only(exc)).rstrip("\n")


def _signature_error(fn, args, what, case, expected):
    """A Mismatch if ``fn`` cannot take ``args`` (its signature, against the one expected)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(*args)
    except TypeError:
        return Mismatch(f"your {what} takes {getattr(fn, '__name__', what)}{sig}, and the checker calls "
                        f"{expected.split(' ->')[0]} on {case}\nthe signature to define: {expected}",
                        "signature", "signature")
    return None


def _call(fn, args, what, case, files, expected=None):
    """``fn(*args)`` guarded (no autograd, no call into ``files``); a refusal, a signature that
    does not fit or an exception becomes a Mismatch naming ``case``."""
    if expected and (bad := _signature_error(fn, args, what, case, expected)):
        raise bad
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
                       f"traceback (most recent call last):\n{_reader_frames(exc)}" + _unsent_advice(exc, fn),
                       "raised", "raised") from None
    if guard.refused:
        raise Mismatch(f"your {what} called {guard.refused} on {case}", "refused", "refused")
    return result


def _layout(t):
    """What an in-place write changes: the values, and where and how they are stored."""
    return (t.clone(), t.data_ptr(), t.stride(), t.shape, t.storage_offset())


def _untouched(tensors, before, names, what, case):
    """Raise Mismatch if the reader's code wrote into one of ``tensors``: its values, storage,
    shape or strides differ from ``before`` (torch has no public read of a tensor's version)."""
    for t, old, name in zip(tensors, before, names):
        if not isinstance(t, torch.Tensor):
            continue
        now = (t.data_ptr(), t.stride(), t.shape, t.storage_offset())
        if now != old[1:] or not torch.equal(t, old[0]):
            role = "the upstream gradient" if name.startswith("grad") else \
                "an input (in an autograd.Function, a tensor autograd saved for backward)"
            raise Mismatch(f"your {what} wrote in place into {name}, {role}, on {case}", "inplace", "inplace")


def _run_one(fn, args, what, case, files, names, expected):
    """``fn(*args)`` as _call does, then the in-place check on ``args``."""
    before = [_layout(x) if isinstance(x, torch.Tensor) else None for x in args]
    result = _call(fn, args, what, case, files, expected)
    _untouched(args, before, names, what, case)
    return result


def _finite(result):
    items = result if isinstance(result, (tuple, list)) else (result,)
    return all(bool(torch.isfinite(t).all()) for t in items if isinstance(t, torch.Tensor) and t.is_floating_point())


def _plain(value):
    """``value`` as torch.load(weights_only=True) reads it back: tensors (detached, copied),
    tuples and lists of them; any other object, a subclass of those included (its methods are
    the reader's code, and the watch is over), becomes {"opaque": its type's name}."""
    if type(value) is torch.Tensor:  # through the class: a method set on the instance is the reader's
        return torch.Tensor.clone(torch.Tensor.detach(value)) if value.layout == torch.strided else \
            {"opaque": f"{value.layout} tensor"}
    if type(value) in (tuple, list):
        return type(value)(_plain(v) for v in value)
    return {"opaque": type(value).__name__}


def compute(task, forward, backward, groups, own_forward, reference=False, extra=True):
    """What the reader's code gives on the cases ``groups`` (from draw()): {stage: [entry]}, an
    entry ("ok", result, note) or ("fail", what, key, kind). Each stage stops at its first
    failure, and the stages after it are not run. This is what the child process runs; it
    holds no expected value."""
    task = _task_module(task, "compute(task, ...)")
    cases, stable = groups
    files = set() if reference else _task_files()
    params = _params(task.SIGNATURE_BACKWARD)
    out = {}

    def stage(name, fn, what, run_cases, args_of, names, expected, guarded=True):
        entries = out.setdefault(name, [])
        for label, inputs, grad_out in run_cases:
            args = args_of(inputs, grad_out)
            try:
                if guarded:
                    result = _run_one(fn, args, what, label, files, names, expected)
                else:
                    result = fn(*args)
            except Mismatch as exc:
                entries.append(("fail", exc.what, exc.key, exc.kind))
                return False
            result = _plain(result)  # a copy, before anything reads it: code run later cannot change it
            note = None
            if what == "backward" and not _finite(result) and any(
                    isinstance(x, torch.Tensor) and x.dim() and not x.is_contiguous() for x in args):
                again = _run_one(fn, tuple(x.contiguous() if isinstance(x, torch.Tensor) else x for x in args),
                                 what, label, files, names, None)
                note = "contiguous-finite" if _finite(_plain(again)) else None
            entries.append(("ok", result, note))
        return True

    fwd = (lambda inputs, g: inputs)
    bwd = (lambda inputs, g: (g, *inputs))
    go = stage("forward", forward, "forward", cases, fwd, params[1:], task.SIGNATURE_FORWARD, own_forward)
    go = go and stage("backward", backward, "backward", cases, bwd, params, task.SIGNATURE_BACKWARD)
    if stable:
        go = go and stage("stability forward", forward, "forward", stable, fwd, params[1:], task.SIGNATURE_FORWARD, own_forward)
        go = go and stage("stability backward", backward, "backward", stable, bwd, params, task.SIGNATURE_BACKWARD)
    for name, fn in (getattr(task, "EXTRA_CHECKS", ()) if go and extra else ()):
        try:
            out[name] = [("ok", fn(backward), None)]
        except Mismatch as exc:
            out[name] = [("fail", exc.what, exc.key, exc.kind)]
        except Exception as exc:  # noqa: BLE001 - the reader's code, run by the task's check
            out[name] = [("fail", f"your backward raised {type(exc).__name__} in the {name} check: {exc}\n"
                          f"traceback (most recent call last):\n{_reader_frames(exc)}" + _unsent_advice(exc, backward),
                          "raised", "raised")]
    return out


# ------------------------------------------------------------------ the cases and the expected values

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


def judge(task, groups, results, report, own_forward=True):
    """Compare ``results`` (what compute() gave on ``groups``) with torch's values, computed here,
    into ``report``; returns the Mismatch that failed, or None."""
    cases, stable = groups
    extras = [name for name, _ in getattr(task, "EXTRA_CHECKS", ())]
    names = ["forward", "backward"] + (["stability"] if stable else []) + extras

    def entries(stage, n):
        got = results.get(stage, [])
        for i in range(n):
            if i >= len(got):
                raise Mismatch(f"the process that ran your code sent no {stage} result for case {i + 1} of {n}",
                               "exited", "exited")
            if got[i][0] == "fail":
                raise Mismatch(*got[i][1:])
            yield got[i][1], got[i][2]

    def forward_check(cases=cases, key="forward", stage="forward"):
        for (label, inputs, _), (got, _) in zip(cases, entries(stage, len(cases))):
            dtype = inputs[task.DIFF[0]].dtype
            want = task.torch_forward(*[x.to(torch.float64) if x.is_floating_point() else x for x in inputs])
            slack = _slack(want, task.torch_forward(*inputs)) if dtype == torch.float32 else 0.0
            compare("output", got, want, label, key, dtype, slack)
        whose = "" if own_forward else "the task's forward (you defined none): "
        return f"{whose}output equals torch's on {len(cases)} cases"

    def backward_check(cases=cases, key=None, stage="backward"):
        for (label, inputs, grad_out), (got, note) in zip(cases, entries(stage, len(cases))):
            got = _as_tuple(got, task.GRADS, label)
            want = _torch_grads(task, inputs, grad_out)[1]
            own = _torch_grads(task, inputs, grad_out, grad_out.dtype)[1] if grad_out.dtype == torch.float32 else want
            for name, g, w, o in zip(task.GRADS, got, want, own):
                slack = _slack(w, o) if grad_out.dtype == torch.float32 else 0.0
                try:
                    compare(name, g, w, label, key or name, grad_out.dtype, slack)
                except Mismatch as exc:
                    if exc.kind == "nonfinite":
                        exc.kind = "strided" if note == "contiguous-finite" else (
                            "overflow" if key == "stability" else "nonfinite")
                    raise
        return f"{', '.join(task.GRADS)} equal torch autograd's on {len(cases)} cases"

    def stability_check():
        forward_check(stable, "stability", "stability forward")
        backward_check(stable, "stability", "stability backward")
        return f"finite and equal to torch's on {len(stable)} float32 cases of size 1e3"

    def extra_check(name):
        return lambda: next(entries(name, 1))[0]

    checks = {"forward": forward_check, "backward": backward_check, "stability": stability_check}
    for i, name in enumerate(names):
        try:
            report.ok(name, checks.get(name, extra_check(name))())
        except Mismatch as exc:
            report.fail(name, exc.what, names[i + 1:])
            return exc
    return None


def run_checks(task, forward, backward, report, own_forward=True, seed=0):
    """Run the checks of ``task`` (a name or a task module) on ``forward`` and ``backward`` in this
    process, into ``report``, on the cases drawn from ``seed``; returns the Mismatch that failed,
    or None. For the book's own code (its tests run the kept wrong answers on many seeds this
    way); ``check`` runs a reader's code in a child process."""
    task = _task_module(task, "run_checks(task, ...)")
    for arg, fn in (("forward", forward), ("backward", backward)):
        if not callable(fn):
            raise TypeError(f"run_checks(task, forward, backward, report): {arg} must be a function, "
                            f"got {type(fn).__name__}")
    if not isinstance(report, Report):
        raise TypeError(f"run_checks(task, forward, backward, report): report must be a Report "
                        f"(check() makes one), got {type(report).__name__}")
    groups = draw(task, seed)
    results = compute(task, forward, backward, groups, own_forward, reference=backward is task.backward)
    return judge(task, groups, results, report, own_forward)


# ------------------------------------------------------------------ the child process

def _shippable(value):
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None), torch.dtype, torch.Tensor)):
        return True
    return isinstance(value, (tuple, list)) and all(_shippable(v) for v in value)


def _names(code):
    """The global names ``code`` and the code nested in it (lambdas, comprehensions) may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def ship(fn, where="check(task, backward)"):
    """``fn`` as the child process rebuilds it: {"root", "functions", "globals"}; its code by
    marshal, the globals it names (modules and other modules' functions by import name, the
    functions defined alongside it by code, numbers, strings and tensors by value)."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"{where}: pass a function defined with def (in a file, a notebook cell or at the "
                        f"prompt), got {type(fn).__name__}")
    functions, values, todo = {}, {}, [fn]
    while todo:
        f = todo.pop()
        if f.__name__ in functions:
            continue
        closure = []
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            value = cell.cell_contents
            if isinstance(value, types.FunctionType):
                todo.append(value)
                closure.append(("function", value.__name__))
            elif _shippable(value):
                closure.append(("value", value))
            else:
                raise TypeError(f"{where}: {f.__name__} reads {name!r} from the function around it, a "
                                f"{type(value).__name__}; define {f.__name__} at the top level "
                                "of a file or cell (the checker sends it to a separate process)")
        functions[f.__name__] = {"code": marshal.dumps(f.__code__), "defaults": f.__defaults__, "closure": closure}
        for name in _names(f.__code__):
            if name not in f.__globals__ or name in values:
                continue
            v = f.__globals__[name]
            module, qual = getattr(v, "__module__", None), getattr(v, "__qualname__", "")
            if isinstance(v, types.ModuleType):
                values[name] = ("module", v.__name__)
            elif isinstance(v, types.FunctionType) and (v.__code__.co_filename == fn.__code__.co_filename
                                                       or module in (None, "__main__")):
                todo.append(v)
                values[name] = ("function", v.__name__)
            elif callable(v) and module and module != "__main__" and qual and "<" not in qual:
                values[name] = ("import", module, qual)
            elif _shippable(v):
                values[name] = ("value", v)
            elif callable(v):
                raise TypeError(f"{where}: {f.__name__} uses {name}, a {type(v).__name__} defined where it runs, "
                                "which the checker cannot send to the separate process that runs your code: "
                                "define it in a file and import it, or inside the function")
            else:  # not sent (the name may be an attribute's); a NameError for it says so (_unsent_advice)
                values[name] = ("unsent", type(v).__name__)
    return {"root": fn.__name__, "functions": functions, "globals": values}


_UNSENT = "__unsent__"  # rebuild() keeps here, in the rebuilt functions' globals, the names ship() did not send


def _unsent_advice(exc, fn):
    """What to do, when ``exc`` is the NameError of a global that ship() did not send for ``fn``."""
    kind = (getattr(fn, "__globals__", {}).get(_UNSENT) or {}).get(getattr(exc, "name", None)) \
        if isinstance(exc, NameError) else None
    return "" if kind is None else (
        f"\n{exc.name} is a {kind} defined where your code runs, which the checker does not send to its separate "
        "process (it sends modules, functions, numbers, strings, tensors and tuples or lists of them): define it "
        "inside the function")


def rebuild(spec):
    """The function ``spec`` (from ship()) describes, in this process."""
    ns = {"__builtins__": builtins, "__name__": "workshop_reader",
          _UNSENT: {name: value[1] for name, value in spec["globals"].items() if value[0] == "unsent"}}
    for name, value in spec["globals"].items():
        if value[0] == "module":
            ns[name] = importlib.import_module(value[1])
        elif value[0] == "import":
            obj = importlib.import_module(value[1])
            for part in value[2].split("."):
                obj = getattr(obj, part)
            ns[name] = obj
        elif value[0] == "value":
            ns[name] = value[1]
    made, cells = {}, []
    for name, f in spec["functions"].items():
        closure = tuple(types.CellType(v if kind == "value" else None) for kind, v in f["closure"])
        cells += [(cell, v) for cell, (kind, v) in zip(closure, f["closure"]) if kind == "function"]
        made[name] = types.FunctionType(marshal.loads(f["code"]), ns, name, f["defaults"], closure or None)
    for cell, name in cells:
        cell.cell_contents = made[name]
    for name, value in spec["globals"].items():
        if value[0] == "function":
            ns[name] = made[value[1]]
    return made[spec["root"]]


_SERVER = None


def _server():
    """The fork server: one clean python process, started at the first check and ended with
    this one, that imported torch and the child's module and nothing else
    (``python -m snippets.workshop._reader``); each check has it fork one child."""
    global _SERVER
    if _SERVER is None or _SERVER.poll() is not None:
        root = str(HERE.parent.parent.parent)  # the folder that holds the snippets package
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
               "PYTHONSAFEPATH": "1"}  # the current folder is not put first: the child appends it
        _PENDING.clear()
        _SERVER = subprocess.Popen([sys.executable, "-m", "snippets.workshop._reader"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True, env=env)
    return _SERVER


_PENDING = bytearray()  # what the server printed past the last line read


def _read_line(pipe, timeout=None):
    """The next line the server printed, within ``timeout`` seconds (None: no limit), or None.
    Reads the pipe's file descriptor itself: a buffered readline could hold the next line
    where select() does not see it."""
    fd = pipe.fileno()
    while b"\n" not in _PENDING:
        ready, _, _ = select.select([fd], [], [], timeout)
        chunk = os.read(fd, 4096) if ready else b""
        if not chunk:
            return None
        _PENDING.extend(chunk)
    line, _, rest = bytes(_PENDING).partition(b"\n")
    _PENDING[:] = rest
    return line.decode()


def _in_child(task, request, groups):
    """Run the reader's code on ``groups`` in a child process: (results, printed) or raises
    LoadError (and FileNotFoundError, AttributeError) when its file could not be loaded."""
    with tempfile.TemporaryDirectory(prefix="workshop-") as tmp:
        ask, answer, printed = (str(Path(tmp) / n) for n in ("request.pt", "results.pt", "printed.txt"))
        torch.save({**request, "task": task.NAME, "groups": groups}, ask)
        server = _server()
        server.stdin.write(f"{ask}\t{answer}\t{printed}\n")
        server.stdin.flush()
        started = _read_line(server.stdout)  # "pid N"
        if started is None:
            return {"error": "the checker's server process ended: nothing was checked; run the check again"}, ""
        pid = int(started.split()[1])
        ended = _read_line(server.stdout, TIMEOUT)  # "exit N"
        if ended is None:
            os.kill(pid, signal.SIGKILL)
            _read_line(server.stdout)
            return {"error": f"your code did not finish in {TIMEOUT} s: nothing was checked"}, ""
        text = Path(printed).read_text(encoding="utf-8", errors="replace") if Path(printed).exists() else ""
        if not Path(answer).exists():
            return {"error": f"the process that ran your code ended (exit status {ended.split()[1]}) before it "
                             "sent its results back: nothing was checked"}, text
        results = _opaque(torch.load(answer, weights_only=True))
    if "load" in results:
        kind, message = results["load"]
        raise {"missing": FileNotFoundError, "attribute": AttributeError}.get(kind, LoadError)(message)
    return results, text


def _opaque(value):
    """The child's results with each {"opaque": name} (an object that is not a tensor) replaced by
    an instance of a class of that name, so a report names what the reader's code returned."""
    if isinstance(value, dict) and set(value) == {"opaque"}:
        return type(value["opaque"], (), {})()
    if isinstance(value, dict):
        return {k: _opaque(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_opaque(v) for v in value)
    return value


# ------------------------------------------------------------------ advice and hints

ADVICE = {  # what to do, by the kind of failure: no formula
    "type": "return a tuple with one tensor per input that needs a gradient, in the order of the inputs",
    "shape": "a gradient has the shape of its input; where the forward broadcast an input, its gradient "
             "is summed over the broadcast dimensions",
    "dtype": "build every tensor from the inputs (torch.zeros_like(x), or dtype=x.dtype): float32 in, float32 out",
    "signature": "define backward with the parameters shown: the upstream gradient first, then the forward's inputs",
    "nonfinite": "a nan or inf where torch has a number: look at the entry named for a division by 0, "
                 "a log of 0, 0 * inf or inf - inf",
    "overflow": "a nan or inf on inputs of size 1e3: an exp that overflows (exp(89) is inf in float32) or "
                "a sum of exps that underflows to 0 before a log or a division",
    "strided": "nan only on a non-contiguous case, and finite numbers on the same values stored contiguously: "
               "your code reads memory outside the tensor (here its buffer's gaps hold nan); index the tensor "
               "itself (reshape, indexing), not its storage (data_ptr, as_strided, storage offsets)",
    "precision": "every error is of the size of rounding or of eps, not of a missing term: look at eps (its value, "
                 "inside or outside the square root), at a sum accumulated in float32, at a constant rounded by hand",
    "raised": "the traceback above is your code's; reproduce the case with --seed and the shapes named",
    "inplace": "the caller still needs that tensor: compute into a new tensor (x - y, torch.zeros_like, "
               ".clone() first) instead of writing into it; writing into a tensor you computed is fine",
    "refused": "derive the gradient and build it from torch operations; the workshop checks your derivation, "
               "not autograd's or the book's",
    "exited": "end your code by returning the gradients: the checker's verdict comes from this process, after "
              "your results come back, never from an exit status",
    "opcheck": "build the backward from torch operations on tensors, with no Python branch on a tensor's value: "
               "compile traces it",
    "value": "compare the first wrong entry on paper: which term of your derivation changes it?",
}
UNHINTED = ("type", "dtype", "signature", "raised", "inplace", "refused", "exited")  # advice enough


def _recorded(path):
    """{task: {key: failures}} of the record file ``path``; what is not that shape counts as none."""
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {task: {k: n for k, n in keys.items() if isinstance(n, int)} for task, keys in seen.items()
            if isinstance(keys, dict)} if isinstance(seen, dict) else {}


def failures(task, record=RECORD, key=None):
    """How many failed checks of the reader's code the folder ``record`` holds (by default:
    default_record()) on the gradient (or check) ``key`` of ``task``, or on all of the task's.
    Only a failure that has hints is recorded: a wrong value, not an exception or a refusal."""
    seen = _recorded(Path(default_record() if record is RECORD else record) / "failures.json").get(task, {})
    return seen.get(key, 0) if key is not None else sum(seen.values())


def _record_failure(task, key, record):
    path = Path(record) / "failures.json"
    seen = _recorded(path)
    keys = seen.setdefault(task, {})
    keys[key] = keys.get(key, 0) + 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return keys[key]


def _hint_lines(task, exc, hint, how, unlocked, where):
    """The lines after a failure: what to do, then the asked-for hint (at most the highest level
    unlocked), or how to ask for one."""
    lines = [("do", ADVICE.get(exc.kind, ADVICE["value"]))]
    levels = task.HINTS.get(exc.key) if exc.kind not in UNHINTED else None
    if not levels:
        return lines
    if not hint:
        lines.append(("hint", f"{len(levels)} hints on {exc.key}; each failed check of your code unlocks the next: "
                              f"{how(1)}"))
        return lines
    n = min(hint, unlocked, len(levels))
    if n == 0:
        lines.append(("hint", f"locked: no failed check of your code on {exc.key} of {task.NAME} is recorded{where} yet; "
                              "each one unlocks the next hint (the starter and the reference do not count)"))
        return lines
    name = LEVELS[n - 1] if len(levels) == len(LEVELS) else f"level {n}"
    lines.append(("hint", f"{n} of {len(levels)} on {exc.key} ({name}): {levels[n - 1]}"))
    if n < len(levels):
        lines.append(("", f"hint {n + 1} unlocks after your next failed check on {exc.key}" if n == unlocked
                      else f"the next hint: {how(n + 1)}"))
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


def _instructions(code):
    """``code``'s instructions as (operation, argument): an attribute that is called is compiled as
    LOAD_METHOD by Python 3.11 and as LOAD_ATTR by 3.12 and later, and a reader's copy of a forward
    (a notebook's) need not come from the compiler the task's did, so both read alike."""
    import dis

    return [("LOAD_ATTR" if i.opname == "LOAD_METHOD" else i.opname, i.argval) for i in dis.get_instructions(code)]


def _same_code(f, g):
    """True when ``f`` and ``g`` (functions or code objects) have the same code: the same
    instructions on the same names and constants (comments, docstrings and layout aside)."""
    f, g = getattr(f, "__code__", f), getattr(g, "__code__", g)
    return (isinstance(f, types.CodeType) and isinstance(g, types.CodeType) and f.co_names == g.co_names
            and _instructions(f) == _instructions(g))


def check(task, backward=None, forward=None, who="your code", seed=None, hint=0, how=None, file=None, record=RECORD):
    """Check ``backward`` (a function), or the ``backward`` and optional ``forward`` defined in
    the Python file ``file``, for the task named ``task``, on cases drawn from ``seed`` (fresh
    when None); ``forward`` (a function) is checked too, else the task's own is used. The code
    runs in a child process; this one judges. ``who`` names the code in the report's first line;
    ``hint=n`` adds the highest unlocked hint up to n on a failure; ``how(n)`` says how to ask
    for hint n. A failed check of the reader's code (not the starter's, not the reference's) is
    recorded in the folder ``record`` (by default: default_record(); None: not recorded). Raises
    LoadError when ``file`` cannot be run."""
    mod = _task_module(task, "check(task, backward)")
    reference = backward is mod.backward and file is None
    if file is not None:
        if backward is not None:
            raise TypeError(f"check({mod.NAME!r}, ...): pass backward (a function) or file (a path), not both")
        if not isinstance(file, (str, Path)):
            raise TypeError(f"check({mod.NAME!r}, file=...): file must be the path of a Python file (a str or "
                            f"Path), got {type(file).__name__}")
    elif not callable(backward):
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
    if record is not None and not isinstance(record, (str, Path)):
        raise TypeError(f"check(..., record): record must be a folder (a str or Path) or None, got {type(record).__name__}")
    where = ""  # the locked-hint line names the folder of a record the reader did not name
    if record is RECORD:
        record = default_record()
        where = f" in {record}/"
    if forward is mod.forward or _same_code(forward, mod.forward):
        forward = None  # the task's given forward, or a copy of it: the reader defined none
    if file is not None:
        if not Path(file).is_file():
            raise FileNotFoundError(f"no such file: {file}")
        request = {"file": str(file), "cwd": os.getcwd()}  # the child runs where this check runs
        counts = not _same_code(_backward_code(file), _backward_code(starter_path(mod.NAME)))
    elif reference:
        request, counts = {"reference": True}, False
    else:
        request = {"backward": ship(backward), "forward": ship(forward) if forward else None}
        counts = not _same_code(backward, _backward_code(starter_path(mod.NAME)))
    how = how or (lambda n: f"check({mod.NAME!r}, backward, seed={seed}, hint={n})")
    groups = draw(mod, seed)
    results, printed = _in_child(mod, request, groups)
    own_forward = results.pop("own_forward", forward is not None)
    report = Report(f"check {mod.NAME} ({who}): {mod.TITLE}")
    report.note("seed", f"{seed} (the same seed replays these cases)")
    shown = printed.splitlines()
    for line in shown[:10]:
        report.note("print", line)
    if len(shown) > 10:
        report.note("print", f"... ({len(shown) - 10} more lines your code printed)")
    if "error" in results:
        exc = Mismatch(results["error"], "exited", "exited")
        report.fail("run", exc.what, ["forward", "backward"])
    else:
        exc = judge(mod, groups, results, report, own_forward)
    if exc is not None:
        hinted = exc.kind not in UNHINTED and exc.key in mod.HINTS  # each key climbs its own hints
        unlocked = 0 if record is None or not hinted else (
            _record_failure(mod.NAME, exc.key, record) if counts else failures(mod.NAME, record, exc.key))
        for prefix, text in _hint_lines(mod, exc, hint, how, unlocked, where):
            report.note(prefix, text)
    return report


def _backward_code(path):
    """The code of the last top-level ``def backward`` of the Python file ``path``, compiled, not
    run; None when the file does not compile or defines none. A reader's code whose backward has
    the starter's code (a copy of the file or of the notebook's cell, with or without comments
    and docstrings) earns no hint when it fails: its failure says nothing about a derivation."""
    try:
        module = compile(Path(path).read_text(encoding="utf-8", errors="replace"), str(path), "exec")
    except (SyntaxError, ValueError):
        return None
    defs = [c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == "backward"]
    bound = [i for i in _instructions(module) if i[0] in ("STORE_NAME", "STORE_GLOBAL") and i[1] == "backward"]
    return defs[-1] if defs and len(bound) == len(defs) else None  # `backward = mine` binds other code


def load(path, mod):
    """The ``backward`` (and ``forward``, or None) defined in the Python file ``path``, for the
    task ``mod`` (a task name or module); a ``forward`` that is the task's own, imported, counts
    as none. Running the file runs the reader's code: the child process does it, never the
    checker's. Raises LoadError when running the file exits or raises (a SyntaxError shows its
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
