"""Degenerate but valid input to the public API of snippets/: torch's answer, or a clear refusal.

The third kind of row beside tests/test_bad_input.py's wrong-type and non-finite rows: zero,
empty, ties, rows of -inf or inf, a zero Hessian, a sum-reduced loss, a function that leaves
autograd, a snapshot of another model.

``ROWS``: ``(module, name, thunk, expected)``. ``expected`` is either ``Torch(fn)``, where ``fn``
computes torch's answer to the same question (compared with ``torch.testing.assert_close``, NaN
equal to NaN), or ``(exception type, message pattern)`` where no meaningful number exists.
``EXEMPT``: ``{(module, name): reason}``. Every public name of snippets (the enumeration of
tests/test_bad_input.py) needs a row or an exemption. The engines' rows live in
tests/test_degenerate_engines.py (the same ``ROWS`` and ``EXEMPT``); while that file does not
exist, exactly the engine modules are exempted, pointing to it.
"""

import importlib
import importlib.util
import math
import re
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

from test_bad_input import _public_names

NAN, INF = math.nan, math.inf
ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("tensor_engine", "scalar_engine", "fork_engine")
ENGINE_REASON = "rows in tests/test_degenerate_engines.py"


ZERO_INIT = "Initializing zero-element tensors is a no-op"  # nn.Linear(0, 0)'s initialisation


class Torch:
    """The expected value of a row, computed by torch (or exact math) when the row runs."""

    def __init__(self, fn):
        self.fn = fn


def warned(pattern, thunk):
    """A row's thunk, or torch's, that must warn: torch's own UserWarning on an input the row
    makes on purpose. Asserted (also when the thunk then raises), so that a new warning stands
    out in the test's summary; any other warning is passed on."""
    def run():
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                return thunk()
            finally:
                matched = [w for w in seen if issubclass(w.category, UserWarning) and re.search(pattern, str(w.message))]
                for w in seen:
                    if w not in matched:
                        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
                assert matched, f"no UserWarning matching {pattern!r}; warned: {[str(w.message) for w in seen]}"
    return run


def f64(*values):
    return torch.tensor(values, dtype=torch.float64)


def call(module, name):
    def run(*args, **kwargs):
        return getattr(importlib.import_module(f"snippets.{module}"), name)(*args, **kwargs)
    return run


def attr(module, name):
    """A class of snippets (an autograd Function), resolved when the row runs."""
    return getattr(importlib.import_module(f"snippets.{module}"), name)


def linear(n_in=3, n_out=1, seed=0):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Linear(n_in, n_out)


def batch(n=8, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, generator=g), torch.randn(n, 1, generator=g)


# ---------------------------------------------------------------- torch's answers, for the rows

def torch_hvp(f, x, v):
    return torch.autograd.functional.hvp(f, x, v)[1]


def full_batch_grads(model, loss_fn, x, y):
    """Torch's answer for accumulate_gradients: one backward of the full batch's mean loss."""
    model.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    return loss.item(), [p.grad.clone() for p in model.parameters()]


CLASSES = torch.tensor([0, 3, 1, 3, 2, 0, 3, 1])  # (8,), class indices for batch()'s 8 rows


def bn_model(stats=True):
    """(N, 3) -> (N, 1): a Linear, then a BatchNorm1d, in training mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 1), nn.BatchNorm1d(1, track_running_stats=stats))


def accumulated(model, loss_fn, x, y, k):
    from snippets.recipes import accumulate_gradients

    total = accumulate_gradients(model, loss_fn, x, y, k)
    return total, [p.grad.clone() for p in model.parameters()]


class WithUnused(nn.Module):
    """A model whose forward never uses one of its layers (a spare head)."""

    def __init__(self):
        super().__init__()
        self.used, self.spare = linear(3, 2), linear(3, 2, seed=1)

    def forward(self, x):
        return self.used(x)


def table_marks_unused():
    """(the spare layer's row says it got no gradient, the used layer's row has numbers)."""
    from snippets.gradient_health import inspect, table

    lines = table(inspect(WithUnused(), torch.ones(4, 3))).splitlines()
    spare = next(line for line in lines if line.split()[0] == "spare")
    used = next(line for line in lines if line.split()[0] == "used")
    return spare.split()[1] == "-" and "the loss does not use this layer" in spare, "-" not in used


def torch_unused():
    """Torch's own answer: after backward the unused layer's .grad is None, the used one's is not."""
    model = WithUnused()
    model(torch.ones(4, 3)).pow(2).mean().backward()
    return model.spare.weight.grad is None, model.used.weight.grad is not None


def conv_model():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return nn.Sequential(nn.Conv1d(1, 2, 3), nn.BatchNorm1d(2), nn.Flatten(), nn.Linear(4, 1))


def flow_norms(model, x):
    from snippets.gradient_health import inspect

    return inspect(model, x)


def torch_norms(model, x):
    """Per module with a weight: the weight's .grad norm and the output gradient's norm."""
    model.zero_grad(set_to_none=True)
    outs = {}

    def keep(name):
        def hook(module, inputs, output):
            output.retain_grad()
            outs[name] = output
        return hook

    for name, m in model.named_modules():
        if isinstance(getattr(m, "weight", None), nn.Parameter):
            m.register_forward_hook(keep(name))
    model(x).pow(2).mean().backward()
    return {name: {"out": outs[name].grad.norm().item(), "weight": m.weight.grad.norm().item()}
            for name, m in model.named_modules() if name in outs}


def sys_exit_file(tmp):
    path = Path(tmp) / "exits_at_import.py"
    path.write_text("import sys\nsys.exit(0)\n\n\ndef backward(grad_y, x, W, b):\n    return None\n")
    return path


def workshop_exit_status():
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "snippets.workshop", "check", "linear", str(sys_exit_file(tmp))],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
    return done.returncode, "called sys.exit(0)" in done.stderr


def load_exiting_file():
    """The workshop checker's load of a reader's file that exits at import (in a folder removed after)."""
    with tempfile.TemporaryDirectory() as tmp:
        return call("workshop.check", "load")(sys_exit_file(tmp), "linear")


def workshop_layer(task, *inputs):
    """(forward, backward of ones) of a workshop reference layer."""
    mod = importlib.import_module(f"snippets.workshop.{task}")
    y = mod.forward(*inputs)
    return y, mod.backward(torch.ones_like(y), *inputs)[0]


def torch_layer(fn, x, *rest):
    x = x.clone().requires_grad_(True)
    y = fn(x, *rest)
    y.backward(torch.ones_like(y))
    return y.detach(), x.grad


# ---------------------------------------------------------------- the table

def _rows():
    zero_hessian = lambda t: (2 * t).sum()  # noqa: E731 - gradient 2, Hessian 0
    constant = lambda t: torch.tensor(3.0, dtype=torch.float64)  # noqa: E731
    x2, v2 = f64(1.0, 2.0), f64(1.0, -1.0)
    mse = nn.functional.mse_loss
    X, Y = batch()
    return [
        # hvp: a zero Hessian gives zeros, as torch.autograd.functional.hvp and torch.func do
        ("hvp", "hvp_double_backward", lambda: call("hvp", "hvp_double_backward")(zero_hessian, x2, v2),
         Torch(lambda: torch_hvp(zero_hessian, x2, v2))),
        ("hvp", "hvp_double_backward", lambda: call("hvp", "hvp_double_backward")(constant, x2, v2),
         Torch(lambda: torch_hvp(constant, x2, v2))),
        ("hvp", "hvp_double_backward", lambda: call("hvp", "hvp_double_backward")(lambda t: t[0] ** 2 + t[1], x2, v2),
         Torch(lambda: torch_hvp(lambda t: t[0] ** 2 + t[1], x2, v2))),  # one direction curved, one flat
        ("hvp", "hvp_three_ways", lambda: call("hvp", "hvp_three_ways")(zero_hessian, x2, v2),
         Torch(lambda: dict.fromkeys(("double backward", "autograd.functional.hvp", "torch.func"),
                                     torch_hvp(zero_hessian, x2, v2)))),
        ("hvp", "gradient_penalty", lambda: call("hvp", "gradient_penalty")(_constant_critic(), torch.ones(3, 2), torch.zeros(3, 2)),
         Torch(lambda: torch.tensor(1.0))),  # a critic with zero gradient: mean((0 - 1)^2) = 1
        ("hvp", "gradient_penalty", lambda: call("hvp", "gradient_penalty")(_critic_of_parameters_only(), torch.ones(3, 2), torch.zeros(3, 2)),
         Torch(lambda: torch.tensor(1.0))),  # x_hat never reaches the critic's output
        ("hvp", "gradient_penalty", lambda: call("hvp", "gradient_penalty")(_Critic(lambda x: torch.zeros(x.shape[0], 1)), torch.ones(3, 2), torch.zeros(3, 2)),
         Torch(lambda: torch.tensor(1.0))),  # a critic without any graph
        ("hvp", "gradient_penalty", lambda: call("hvp", "gradient_penalty")(nn.Linear(2, 1), torch.ones(0, 2), torch.ones(0, 2)),
         (ValueError, r"real and fake are empty, \(0, 2\): the penalty is a mean over samples; pass N >= 1")),  # not NaN
        # guards: a snapshot of another model of the same names
        ("guards", "assert_params_changed", lambda: call("guards", "assert_params_changed")(linear(3, 1), call("guards", "snapshot")(linear(2, 1))),
         (ValueError, r"before\['weight'\] has shape \(1, 2\), the parameter \(1, 3\): before was taken from another module")),
        ("guards", "assert_params_changed", lambda: call("guards", "assert_params_changed")(linear().double(), call("guards", "snapshot")(linear())),
         (ValueError, r"before\['weight'\] is torch.float32, the parameter torch.float64: take the snapshot after converting")),
        ("guards", "snapshot", warned(ZERO_INIT, lambda: call("guards", "snapshot")(nn.Linear(0, 0))),
         Torch(warned(ZERO_INIT, lambda: {n: p.detach().clone() for n, p in nn.Linear(0, 0).named_parameters()}))),
        ("guards", "assert_finite", lambda: call("guards", "assert_finite")(torch.ones(0), "empty"), Torch(lambda: None)),
        ("guards", "batch_statistics_layer", lambda: call("guards", "batch_statistics_layer")(nn.Identity()), Torch(lambda: None)),
        ("guards", "require_module", lambda: call("guards", "require_module")(nn.Identity()), Torch(lambda: None)),  # a module without parameters
        # in eval mode but without running statistics: still the batch's own
        ("guards", "batch_statistics_layer", lambda: call("guards", "batch_statistics_layer")(nn.BatchNorm1d(2, track_running_stats=False).eval())[0],
         Torch(lambda: "")),
        ("guards", "assert_no_stale_grads", lambda: call("guards", "assert_no_stale_grads")(linear()), Torch(lambda: None)),  # .grad None
        ("guards", "assert_grads_flow", lambda: call("guards", "assert_grads_flow")(_zero_grad_model()),
         (AssertionError, "all-zero gradient: weight, bias")),
        ("guards", "assert_finite_grads", lambda: call("guards", "assert_finite_grads")(linear()),  # before any backward
         (importlib.import_module("snippets.guards").GuardError, r"no parameter has a .grad, so there is nothing to check: call it after loss.backward\(\)")),
        ("guards", "assert_finite_grads", lambda: call("guards", "assert_finite_grads")(_grad_on_weight_only()), Torch(lambda: None)),
        ("guards", "as_log_value", lambda: call("guards", "as_log_value")(torch.tensor([-0.0])), Torch(lambda: torch.tensor([-0.0]).item())),
        ("guards", "assert_no_graph", lambda: call("guards", "assert_no_graph")([], "empty"), Torch(lambda: None)),
        # recipes: sum reduction, an empty batch, a broadcasting target; k = N and k = 1 are exact
        ("recipes", "accumulate_gradients", lambda: accumulated(linear(), nn.MSELoss(reduction="sum"), X, Y, 2),
         (ValueError, r"loss_fn sums over its rows: pass a mean loss \(reduction='mean', the default\)")),
        ("recipes", "accumulate_gradients", lambda: accumulated(linear(), mse, X[:0], Y[:0], 2),
         (ValueError, r"inputs has shape \(0, 3\): pass a batch \(N, ...\) with N >= 1 rows")),
        ("recipes", "accumulate_gradients", warned("Using a target size .* different to the input size",
                                                   lambda: accumulated(linear(), mse, X[:4], Y[:4, 0], 2)),
         (ValueError, r"the target \(2,\) broadcasts against the prediction \(2, 1\)")),
        ("recipes", "accumulate_gradients", lambda: accumulated(linear(), mse, X, Y, 8),
         Torch(lambda: full_batch_grads(linear(), mse, X, Y))),
        ("recipes", "accumulate_gradients", lambda: accumulated(linear(), mse, X, Y, 1),
         Torch(lambda: full_batch_grads(linear(), mse, X, Y))),
        # BatchNorm normalising with its batch's statistics: refused for k > 1 (each micro-batch
        # has its own); with running statistics (eval) or k = 1, the full batch's gradient
        ("recipes", "accumulate_gradients", lambda: accumulated(bn_model(), mse, X, Y, 2),
         (ValueError, r"model.1 \(BatchNorm1d\) normalises with the mean and variance of its batch, and a "
                      r"micro-batch of 4 rows has other statistics than the full batch of 8: .* Pass k=1, or call model.eval\(\)")),
        ("recipes", "accumulate_gradients", lambda: accumulated(bn_model(stats=False).eval(), mse, X, Y, 4),
         (ValueError, r"model.1 \(BatchNorm1d\) normalises with the mean and variance of its batch.* Pass k=1$")),
        ("recipes", "accumulate_gradients", lambda: accumulated(nn.BatchNorm1d(3), lambda p, y: p.pow(2).mean(), X, Y, 2),
         (ValueError, r"^model \(BatchNorm1d\) normalises")),
        ("recipes", "accumulate_gradients", lambda: accumulated(bn_model().eval(), mse, X, Y, 4),
         Torch(lambda: full_batch_grads(bn_model().eval(), mse, X, Y))),
        ("recipes", "accumulate_gradients", lambda: accumulated(bn_model(), mse, X, Y, 1),
         Torch(lambda: full_batch_grads(bn_model(), mse, X, Y))),
        # a mean weighted per row (class weights, ignore_index): the cause is named, not the shapes
        *[("recipes", "accumulate_gradients", lambda loss=loss: accumulated(linear(3, 4), loss, X, CLASSES, 2),
           (ValueError, r"loss_fn weights its rows \(class weights or ignore_index, with class-index targets\)"))
          for loss in (nn.CrossEntropyLoss(ignore_index=3), nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0, 4.0])))],
        ("recipes", "accumulate_gradients", lambda: accumulated(linear(3, 4), nn.CrossEntropyLoss(), X, CLASSES, 2),
         Torch(lambda: full_batch_grads(linear(3, 4), nn.CrossEntropyLoss(), X, CLASSES))),
        # engine_vs_torch: a net of any float dtype gives the engine float64 weights of the same values
        *[row for dtype in (torch.float16, torch.bfloat16, torch.float32) for row in (
            ("engine_vs_torch", "copy_weights", lambda dtype=dtype: copied_weights(dtype)[:2], Torch(lambda: ("float64", "float64"))),
            ("engine_vs_torch", "copy_weights", lambda dtype=dtype: copied_weights(dtype)[2], Torch(lambda dtype=dtype: torch_weights(dtype))))],
        ("engine_vs_torch", "copy_weights", lambda: call("engine_vs_torch", "copy_weights")(nn.Sequential(nn.Linear(2, 1, bias=False)), _engine_mlp()),
         (ValueError, "net has a Linear without a bias, the engine's Linear has one: build it with bias=True")),
        # jacobian_cost: f that leaves autograd raises in both modes; a flat f gives zeros
        *[("jacobian_cost", name, lambda name=name, f=f: call("jacobian_cost", name)(f, x2),
           (ValueError, "f's output does not depend on x through differentiable operations: f leaves autograd"))
          for name in ("jacobian_by_jvps", "jacobian_by_vjps")
          for f in (lambda t: t.detach() * 2, lambda t: torch.tensor(t.tolist()), lambda t: t.long())],
        *[("jacobian_cost", name, lambda name=name: call("jacobian_cost", name)(lambda t: torch.cat([t * 0, t.sum(0, keepdim=True)]), x2)[0],
           Torch(lambda: torch.autograd.functional.jacobian(lambda t: torch.cat([t * 0, t.sum(0, keepdim=True)]), x2)))
          for name in ("jacobian_by_jvps", "jacobian_by_vjps")],
        # f computes in float64 and returns float32: both give x's dtype, as torch's jacobian does
        *[("jacobian_cost", name, lambda name=name: call("jacobian_cost", name)(lambda t: t.double().sin().float(), f64(1.0, 2.0))[0].dtype.__repr__(),
           Torch(lambda: repr(torch.autograd.functional.jacobian(lambda t: t.double().sin().float(), f64(1.0, 2.0)).dtype)))
          for name in ("jacobian_by_vjps", "jacobian_by_jvps")],
        ("jacobian_cost", "jacobian_by_jvps", lambda: call("jacobian_cost", "jacobian_by_jvps")(torch.sin, f64()),
         (ValueError, r"x is empty, shape \(0,\): a Jacobian needs n >= 1 inputs")),
        ("jacobian_cost", "jacobian_by_vjps", lambda: call("jacobian_cost", "jacobian_by_vjps")(lambda t: t[:0], x2),
         (ValueError, r"f returned an empty tensor, shape \(0,\)")),
        # precision
        ("precision", "relative_error", lambda: call("precision", "relative_error")(torch.sin, x2, dtype=torch.int32),
         (ValueError, r"dtype must be one of \(torch.bfloat16, torch.float16, torch.float32\); got torch.int32")),
        ("precision", "relative_error", lambda: call("precision", "relative_error")(torch.sin, f64(1.0, NAN), dtype=torch.float16),
         Torch(lambda: NAN)),  # no finite reference: nothing to measure
        ("precision", "relative_error", lambda: call("precision", "relative_error")(lambda t: t * 1e5, f64(1.0, 2.0), dtype=torch.float16),
         Torch(lambda: INF)),  # 1e5 overflows float16 only
        ("precision", "tolerance", lambda: call("precision", "tolerance")(torch.float16, 4, k=-1),
         (ValueError, r"k counts roundings to dtype, a finite number >= 0 \(default 2\); got -1")),
        ("precision", "tolerance", lambda: call("precision", "tolerance")(torch.float16, 1, k=0),
         Torch(lambda: torch.finfo(torch.float32).eps)),
        ("precision", "assert_close_to_reference", lambda: call("precision", "assert_close_to_reference")(torch.sin, f64(1.0, NAN), dtype=torch.float16, n=1),
         (AssertionError, "the float64 reference is not finite, so no error can be measured")),
        ("precision", "assert_close_to_reference", lambda: call("precision", "assert_close_to_reference")(lambda t: t * 1e5, f64(1.0, 2.0), dtype=torch.float16, n=1),
         (AssertionError, r"relative error inf .* look for overflow in the low-precision dtype$")),
        # scale.mixed_precision: zero, the largest finite number, an update that overflows, a zero gradient
        ("scale.mixed_precision", "ulp", lambda: call("scale.mixed_precision", "ulp")(0.0, torch.float16),
         Torch(lambda: 2.0 ** -24)),  # from 0 the next float16 is the smallest subnormal
        ("scale.mixed_precision", "ulp", lambda: call("scale.mixed_precision", "ulp")(-0.0, torch.bfloat16),
         Torch(lambda: 2.0 ** -133)),  # bfloat16's smallest subnormal: 2**-126 * 2**-7
        ("scale.mixed_precision", "ulp", lambda: call("scale.mixed_precision", "ulp")(65504.0, torch.float16),
         Torch(lambda: INF)),  # above float16's largest number there is only inf
        ("scale.mixed_precision", "applied_update", lambda: call("scale.mixed_precision", "applied_update")(0.0, 0.0, torch.bfloat16),
         Torch(lambda: 0.0)),
        ("scale.mixed_precision", "applied_update", lambda: call("scale.mixed_precision", "applied_update")(65504.0, 65504.0, torch.float16),
         Torch(lambda: INF)),  # the sum overflows float16
        ("scale.mixed_precision", "scaled_step", lambda: _scaled_step_with_zero_gradients(),
         Torch(lambda: {"norm": 0.0, "stepped": True, "scale": 65536.0})),  # a zero gradient is finite: the step runs
        ("scale.mixed_precision", "scaled_step", lambda: call("scale.mixed_precision", "scaled_step")(
            torch.tensor(1.0), *_opt_and_scaler()),
         (ValueError, "loss does not require grad, so backward has nothing to compute")),
        # scale.compiled: a frozen model; zero weights and a zero batch (every gradient 0); a function
        # without a tensor operation (nothing to compile)
        ("scale.compiled", "eager_vs_compiled", lambda: call("scale.compiled", "eager_vs_compiled")(
            linear().requires_grad_(False), torch.ones(1, 3)),
         (ValueError, "model has no parameter that requires grad")),
        ("scale.compiled", "eager_vs_compiled", lambda: _compared(call("scale.compiled", "eager_vs_compiled")(
            _zero_linear(), torch.zeros(2, 3))),
         Torch(lambda: [1.0, 0.0, 0.0])),  # one compiled node; no difference; every gradient 0
        ("scale.compiled", "CompileLog", lambda: _compile_log_of(lambda x: x, torch.ones(2)),
         Torch(lambda: [])),
        # scale.checkpointing: a block without parameters, a model where nothing requires grad
        ("scale.checkpointing", "checkpoint_costs", lambda: call("scale.checkpointing", "checkpoint_costs")(
            nn.Sequential(nn.ReLU()), torch.ones(2, 3, requires_grad=True), "non-reentrant"),
         Torch(lambda: {"saved": 2 * (2 * 3 * 4), "started": {"0": 1}, "finished": {}})),  # the checkpoint keeps x, pow
        # saves relu's output; the recomputation stops as relu saves its output, before the layer returns
        ("scale.checkpointing", "checkpoint_costs", lambda: call("scale.checkpointing", "checkpoint_costs")(
            nn.Sequential(nn.ReLU()), torch.ones(2, 3), "none"),
         (ValueError, r"nothing requires grad \(no parameter, not x\)")),
        # finite_diff
        ("finite_diff", "central_difference", lambda: call("finite_diff", "central_difference")(lambda t: t.sum(), f64(1.0), h=1e-20),
         (ValueError, r"h = 1e-20 is too small for x's flat index 0 = 1.0: x \+ h rounds to x in float64")),
        ("finite_diff", "central_difference", lambda: call("finite_diff", "central_difference")(lambda t: t.sum(), f64(1.0), h=INF),
         (ValueError, "h must be a positive finite float, got inf")),
        ("finite_diff", "central_difference", lambda: call("finite_diff", "central_difference")(lambda t: (t ** 2).sum(), f64(0.0, -0.0)),
         Torch(lambda: f64(0.0, 0.0))),  # d(t^2) = 2t at 0 and -0
        # far from 0, x + h rounds to the grid of floats near x: the quotient divides by the step taken
        ("finite_diff", "central_difference", lambda: call("finite_diff", "central_difference")(lambda t: ((t - 1e10) ** 2).sum(), f64(1e10 + 0.5)),
         Torch(lambda: f64(1.0))),  # 2 (x - 1e10) = 1
        ("finite_diff", "check_gradient", lambda: call("finite_diff", "check_gradient")(lambda t: t.sum(), f64(3e9, -3e9)),
         Torch(lambda: (f64(1.0, 1.0), f64(1.0, 1.0)))),
        ("finite_diff", "check_gradient", lambda: call("finite_diff", "check_gradient")(lambda t: t.sum(), f64(1.0), atol=-1),
         (ValueError, "atol must be a finite number >= 0, got -1")),
        ("finite_diff", "check_gradient", lambda: call("finite_diff", "check_gradient")(lambda t: (t * 0).sum(), f64(1.0), atol=0, rtol=0)[0],
         Torch(lambda: f64(0.0))),  # a zero gradient agrees exactly
        # exercises.accumulation
        ("exercises.accumulation", "check_micro_batches", lambda: call("exercises.accumulation", "check_micro_batches")(call("exercises.accumulation", "solution_micro_batches"), ks=()),
         (ValueError, r"ks must be a non-empty tuple of divisors of N = 8 \(1, 2, 4, 8\), got \(\)")),
        ("exercises.accumulation", "check_micro_batches", lambda: call("exercises.accumulation", "check_micro_batches")(call("exercises.accumulation", "solution_micro_batches"), ks=(True,)),
         (ValueError, r"ks must be .* got \(True,\)")),
        ("exercises.accumulation", "check_micro_batches", lambda: call("exercises.accumulation", "check_micro_batches")(_dtype_error),
         (RuntimeError, "mat1 and mat2 must have the same dtype")),  # torch's error, no retain_graph advice
        ("exercises.accumulation", "check_micro_batches", lambda: call("exercises.accumulation", "check_micro_batches")(call("exercises.accumulation", "solution_micro_batches"), ks=(1, 8)),
         Torch(lambda: None)),  # k = 1 and k = N are exact
        ("exercises.accumulation", "check_two_passes", lambda: call("exercises.accumulation", "check_two_passes")(call("exercises.accumulation", "starter_two_passes")),
         (AssertionError, r"raised RuntimeError: Trying to backward through the graph a second time .*retain_graph=True")),
        # gradient_health
        ("gradient_health", "table", table_marks_unused, Torch(torch_unused)),
        ("gradient_health", "inspect", lambda: flow_norms(linear(), torch.ones(0, 3)),
         (ValueError, r"x has shape \(0, 3\): pass a batch \(N, width\) with N >= 1")),
        ("gradient_health", "inspect", lambda: flow_norms(conv_model(), torch.ones(3, 1, 4)),
         Torch(lambda: torch_norms(conv_model(), torch.ones(3, 1, 4)))),
        ("gradient_health", "GradientFlow", lambda: [n for n, _ in call("gradient_health", "GradientFlow")(conv_model()).layers],
         Torch(lambda: [n for n, m in conv_model().named_modules() if isinstance(getattr(m, "weight", None), nn.Parameter)])),
        ("gradient_health", "xychart", lambda: call("gradient_health", "xychart")({"used": {"out": 1.0, "weight": 1.0}, "spare": {}}, "t"),
         (ValueError, "layer 'spare' recorded no 'out' gradient: the loss does not use this layer; table")),
        ("gradient_health", "deep_mlp", lambda: call("gradient_health", "deep_mlp")(depth=2, width=4, init_gain=True),
         (ValueError, "init_gain must be None or a positive finite number, got True")),
        ("distributed_accumulation", "loss_fn", lambda: call("distributed_accumulation", "loss_fn")(
            call("distributed_accumulation", "make_model")(), torch.ones(0, 3, dtype=torch.float64),
            torch.ones(0, 1, dtype=torch.float64)),
         (ValueError, r"x has 0 rows: a micro-batch needs m >= 1 rows; slicing k micro-batches of m rows from N "
                      r"needs k \* m <= N")),
        # contract
        ("contract", "check_input", lambda: call("contract", "check_input")(torch.ones(2, 4), shape="N 4"),
         (TypeError, r"shape must be a tuple of sizes and None, e.g. \(None, 4\) for \(N, 4\); got 'N 4'")),
        ("contract", "check_input", lambda: call("contract", "check_input")(torch.ones(0, 4), shape=(None, 4)), Torch(lambda: None)),
        ("contract", "eval_gate", lambda: call("contract", "eval_gate")(-5.0, 1.0),
         (ValueError, "candidate_loss is -5.0: the gate compares non-negative losses")),
        ("contract", "eval_gate", lambda: call("contract", "eval_gate")(0.0, 0.0), Torch(lambda: (True, "held-out loss 0 <= limit 0"))),
        ("contract", "softplus", lambda: call("contract", "softplus")(f64(0.0, -0.0, 800.0, -800.0)),
         Torch(lambda: nn.functional.softplus(f64(0.0, -0.0, 800.0, -800.0)))),
        ("contract", "StableSoftplus", lambda: torch_layer(_stable_softplus, f64(0.0, -800.0, 800.0)),
         Torch(lambda: torch_layer(nn.functional.softplus, f64(0.0, -800.0, 800.0)))),
        ("contract", "max_grad_error", lambda: call("contract", "max_grad_error")(torch.relu, f64(1.0, -1.0)), Torch(lambda: 0.0)),
        ("contract", "grads_are_finite", lambda: call("contract", "grads_are_finite")([_grad_of_empty()]),
         Torch(lambda: True)),
        # scalar_mlp and determinism: a bool is not an int
        ("scalar_mlp", "train_torch", lambda: call("scalar_mlp", "train_torch")(call("scalar_mlp", "to_torch")(call("scalar_mlp", "MLP")((1, 1))), [[1.0]], [[1.0]], -1, 0.1),
         (ValueError, "steps must be an int >= 0, got -1")),
        ("scalar_mlp", "train_torch", lambda: call("scalar_mlp", "train_torch")(call("scalar_mlp", "to_torch")(call("scalar_mlp", "MLP")((1, 1))), [[1.0]], [[1.0]], 0, 0.1),
         Torch(lambda: [])),  # zero steps: no loss
        ("scalar_mlp", "train", lambda: call("scalar_mlp", "train")(call("scalar_mlp", "MLP")((1, 1)), [[1.0]], [[1.0]], 1, True),
         (ValueError, "lr must be a positive finite number, got True")),
        ("determinism", "seed_everything", lambda: call("determinism", "seed_everything")(True),
         (TypeError, r"seed must be a Python int, got bool True: pass an int such as 0")),
        ("determinism", "seed_everything", lambda: (call("determinism", "seed_everything")(0), torch.rand(1))[1],
         Torch(lambda: (torch.manual_seed(0), torch.rand(1))[1])),
        ("function_api", "ScaleInPlace", lambda: attr("function_api", "ScaleInPlace").apply(f64(1.0), True),
         (TypeError, "k must be a Python number, got bool$")),
        # workshop: a reader's file that exits at import; the logsumexp reference at -inf and inf rows
        ("workshop.__main__", "main", workshop_exit_status, Torch(lambda: (2, True))),
        ("workshop.check", "load", load_exiting_file,
         (importlib.import_module("snippets.workshop.check").LoadError, r"called sys.exit\(0\) at import, so nothing was checked")),
        *[("workshop.logsumexp", "forward", lambda row=row: workshop_layer("logsumexp", f64(*row)[None]),
           Torch(lambda row=row: torch_layer(lambda t: torch.logsumexp(t, -1), f64(*row)[None])))
          for row in ((-INF, -INF, -INF), (1.0, INF, 0.0), (0.0, 0.0, 0.0), (-INF, 0.0, 1.0))],
        ("workshop.softmax_ce", "forward", lambda: workshop_layer("softmax_ce", f64(0.0, -INF, 1.0)[None], torch.tensor([0])),
         Torch(lambda: torch_layer(nn.functional.cross_entropy, f64(0.0, -INF, 1.0)[None], torch.tensor([0])))),
        ("workshop.maxpool", "forward", lambda: workshop_layer("maxpool", torch.ones(1, 1, 4, dtype=torch.float64)),
         Torch(lambda: torch_layer(call("workshop.maxpool", "torch_forward"), torch.ones(1, 1, 4, dtype=torch.float64)))),  # ties
        # custom_function: x = 0 and -0.0, the lowest exponent
        ("custom_function", "Square", lambda: torch_layer(attr("custom_function", "Square").apply, f64(0.0, -0.0, 3.0)),
         Torch(lambda: torch_layer(lambda t: t ** 2, f64(0.0, -0.0, 3.0)))),
        ("custom_function", "ScaledPow", lambda: torch_layer(lambda t: attr("custom_function", "ScaledPow").apply(t, f64(2.0), 1), f64(0.0, -0.0)),
         Torch(lambda: torch_layer(lambda t: 2 * t ** 1, f64(0.0, -0.0)))),
        ("custom_function", "ScaledPow", lambda: torch_layer(lambda t: attr("custom_function", "ScaledPow").apply(t, f64(0.0), 3), f64(0.0, 2.0)),
         Torch(lambda: torch_layer(lambda t: 0 * t ** 3, f64(0.0, 2.0)))),
        # custom_losses: a fully masked row, a row holding inf, a -inf non-target logit
        *[("custom_losses", "StableLogSumExp", lambda row=row: torch_layer(attr("custom_losses", "StableLogSumExp").apply, f64(*row)[None]),
           Torch(lambda row=row: torch_layer(lambda t: torch.logsumexp(t, -1), f64(*row)[None])))
          for row in ((-INF, -INF), (1.0, INF), (0.0, 0.0))],
        *[("custom_losses", name, lambda name=name: torch_layer(lambda t: attr("custom_losses", name).apply(t, torch.tensor([0])), f64(0.0, -INF, 1.0)[None]),
           Torch(lambda: torch_layer(nn.functional.cross_entropy, f64(0.0, -INF, 1.0)[None], torch.tensor([0]))))
          for name in ("SoftmaxCrossEntropy", "StoredSoftmaxCrossEntropy")],
    ]


def _engine_mlp():
    from snippets.tensor_engine import MLP

    return MLP([2, 1])


def copied_weights(dtype):
    """(W's dtype, b's dtype, [W, b] as tensors) of an engine MLP after copy_weights from a net in dtype."""
    from snippets.engine_vs_torch import copy_weights, torch_mlp

    mlp = _engine_mlp()
    copy_weights(torch_mlp((2, 1), 0).to(dtype), mlp)
    layer = mlp.layers[0]
    return layer.W.data.dtype.name, layer.b.data.dtype.name, [torch.from_numpy(layer.W.data), torch.from_numpy(layer.b.data)]


def torch_weights(dtype):
    """The same net's weight.T and bias in dtype, converted to float64 by torch."""
    from snippets.engine_vs_torch import torch_mlp

    lin = torch_mlp((2, 1), 0).to(dtype)[0]
    return [lin.weight.detach().double().T, lin.bias.detach().double()]


def _opt_and_scaler():
    """(optimizer, GradScaler) of a fresh Linear: the last two arguments of scaled_step."""
    return torch.optim.SGD(linear(2, 1).parameters(), lr=0.1), torch.amp.GradScaler("cpu")


def _scaled_step_with_zero_gradients():
    """scaled_step on a loss whose every gradient is 0, clipped at norm 1."""
    from snippets.scale.mixed_precision import scaled_step

    model = linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return scaled_step(model(torch.ones(1, 2)).sum() * 0, opt, torch.amp.GradScaler("cpu"), max_norm=1.0)


class _Critic(nn.Module):
    """A critic made of a function (gradient_penalty takes modules only)."""

    def __init__(self, forward):
        super().__init__()
        self.function = forward

    def forward(self, x):
        return self.function(x)


def _constant_critic():
    """A critic whose output does not depend on its input: every gradient is 0."""
    return _Critic(lambda x: x.sum(dim=1, keepdim=True) * 0)


def _critic_of_parameters_only():
    """A critic whose output depends on its parameter and not on its input."""
    bias = torch.zeros(1, requires_grad=True)
    return _Critic(lambda x: bias.expand(x.shape[0], 1))


def _grad_on_weight_only():
    """A model after a backward that reached its weight and not its bias (.grad None): the weight is checked."""
    model = linear()
    (model.weight * 2).sum().backward()
    return model


def _zero_grad_model():
    model = linear()
    (model(torch.ones(1, 3)) * 0).sum().backward()
    return model


def _grad_of_empty():
    p = torch.zeros(0, requires_grad=True)
    p.sum().backward()
    return p


def _stable_softplus(t):
    from snippets.contract import StableSoftplus

    return StableSoftplus.apply(t)


def _dtype_error(k):
    """A reader's micro_batches whose model is float64 and data float32: torch's RuntimeError."""
    return nn.Linear(3, 1).double()(torch.ones(2, 3)), None


def _zero_linear():
    """nn.Linear(3, 1) with every weight and bias 0: the output, the loss and every gradient are 0."""
    model = nn.Linear(3, 1)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    return model


def _compared(result):
    """eager_vs_compiled's dict as numbers: [the node is the compiled region's, diff, scale]."""
    return [float(result["node"] == "CompiledFunctionBackward"), result["max_abs_diff"], result["max_abs_grad"]]


def _compile_log_of(fn, *args):
    """The graphs a fresh CompileLog records when ``fn`` is compiled and called once."""
    from snippets.scale.compiled import CompileLog

    log = CompileLog()
    torch.compile(fn, backend=log)(*args)
    return log.graphs


# ---------------------------------------------------------------- exemptions, with the reason

EXERCISE = "an exercise's starter, solution or fixture: it takes only a seed or a step count from the exercise's own code"
NO_NUMBERS = "takes no number or tensor whose value could be degenerate (names, flags, functions, modules)"
EXCEPTION = "an exception class"
REFERENCE = ("a workshop reference layer: the checker runs it on the task's own cases; its degenerate "
             "inputs (-inf rows, ties) have rows where the task defines them")
CASES = "the checker's case generator: called with the task's own labels"
TORCH_LAYER = "torch's own layer, the reference the rows compare against"


def _exempt():
    e = {}

    def add(module, names, reason):
        for name in names.split():
            e[(module, name)] = reason

    add("autograd_graph", "walk node_label to_mermaid", "reads a graph's structure, not values")
    add("bench_engine", "bench main", "a timing harness of the engine; its sizes are checked as ints (test_bad_input)")
    add("explain", "explain main normalise drop_tails", "text in, entries (or words) out: an empty message is "
        "refused by explain (test_bad_input), and a message that matches nothing, or names no error, is tested "
        "in tests/test_explain.py")
    add("custom_function", "check_function", "runs gradcheck and gradgradcheck; the Functions it checks have rows")
    add("determinism", "deterministic_algorithms rng_preserved run_twice seed_worker loader_generator", NO_NUMBERS)
    add("distributed_accumulation", "make_data make_model full_batch_gradient by_hand",
        "a multi-process demonstration with its own data; its sizes are checked as positive ints (test_bad_input)")
    add("scale.compiled", "Graph op_name", "a record of a graph and the name of a node's target: no number or "
        "tensor whose value could be degenerate")
    add("scale.custom_op", "setup_context backward", "the op's autograd formula, called by autograd with the op's "
        "inputs; the op's degenerate inputs (an empty x, NaN and inf) are tested in tests/test_scale_custom_op.py")
    add("scale.launch", "rank_rows", "slices the example's batch by rank: ints only, anything else refused by name "
        "(test_bad_input)")
    add("scale.launch", "run_ranks", "starts processes; what a rank computes is its function's "
        "(tests/test_launch.py: one rank, three ranks, a rank that raises, a job that hangs)")
    for module in ("scale.ddp", "scale.fsdp"):
        add(module, " ".join(sorted({n for (m, n) in _public_names() if m == module})),
            "a multi-process demonstration on its own fixed data (small integers, world size 2, checked by shard()); "
            "its rank functions run under run_ranks, and tests/test_scale_" + module.split(".")[1] + ".py compares "
            "what they return with single-process references")
    add("edge_semantics", "grad_at complex_grad_by_parts",
        "its job is torch's answer at edge points: tests/test_edge_semantics.py compares every point with torch")
    add("edge_semantics", "titled", NO_NUMBERS)
    add("engine_vs_torch", "torch_mlp train_both", "engine plumbing: rows with the engines")
    add("evaluation", "evaluate evaluating", "runs the model as it is: what the model computes is the answer")
    add("evaluation", "tracking_profile", "measures modes: an empty batch and a NaN in or out are refused "
        "(tests/test_evaluation.py, test_bad_input)")
    add("exercises", "attempt", NO_NUMBERS)
    add("exercises.accumulation", "hand_trace_leaves make_batch starter_two_passes starter_micro_batches "
        "solution_two_passes solution_two_passes_retained solution_micro_batches starter solution", EXERCISE)
    add("exercises.accumulation", "check", "runs the exercise at its fixed k = 4 (check_micro_batches has the k rows)")
    add("exercises.accumulation", "main", "-k is checked against N = 8 (test_bad_input)")
    add("exercises.broken_graph", "make_data make_model full_batch_loss starter starter_frozen starter_optimizer "
        "starter_item solution", EXERCISE)
    add("exercises.broken_graph", "check diagnose first_step loss_table main", "reads a training run's losses and modules; no degenerate number")
    add("exercises.gradient_check", "loss_of_W1 starter solution", EXERCISE)
    add("exercises.gradient_check", "check main relative_error", "the exercise's own check at fixed points (tests/test_exercises.py)")
    add("exercises.hand_trace", "starter solution", EXERCISE)
    add("exercises.hand_trace", "check with_torch main", "compares at the trace's fixed points")
    add("forward_trace", "trace_rows check_trace", "reads a table's cells; non-finite cells have rows in test_bad_input")
    add("func_transforms", "per_sample_grads_loop per_sample_grads_vmap measure main",
        "tests/test_func_transforms.py compares the two with each other and with the batch gradient; "
        "an empty batch is refused (test_bad_input)")
    add("function_api", "Cube SquareAndCube SortWithIndices compatibility",
        "tests/test_function_api.py runs gradcheck on them; SortWithIndices' ties are sorted as x.sort does")
    add("grad_check", "report_dead_grads", "reports a None, zero or non-finite .grad: degenerate gradients are its input (tests/test_grad_check.py)")
    add("guards", "GuardError", EXCEPTION)
    add("exercises", "CheckError", EXCEPTION)
    add("hand_trace", "gradients", "returns torch's own gradients")
    add("optim_in_backward", "GradBytes step_in_backward", "counts bytes and steps an optimizer; tests/test_optim_in_backward.py compares with torch's step")
    add("contract", "saved_bytes_per_element", "counts bytes of saved tensors; an empty x is refused (test_bad_input)")
    add("saved_bytes", "SavedTensors saved_bytes track_saved", "counts bytes of saved tensors; values are not read")
    add("scalar_mlp", "MLP to_torch", "sizes are checked as positive ints (test_bad_input)")
    add("shapes", "ShapeError", EXCEPTION)
    add("shapes", "expect_shape", "reads shapes only: a size 0 is compared like any other size")
    add("two_layer", "make_tensors shapes forward backward", "the hand-derived two-layer network: tests/test_two_layer.py compares with autograd")
    add("views", "describe shares_storage element_offsets is_nested", "reads strides and storage: tests/test_views.py covers empty and 0-stride views")
    for task in ("attention", "batchnorm", "embedding", "layernorm", "linear", "logsumexp", "maxpool", "softmax_ce",
                 "custom_op"):
        add(f"workshop.{task}", "cases", CASES)
        if task in ("logsumexp", "softmax_ce", "custom_op", "layernorm"):
            add(f"workshop.{task}", "stable_cases", CASES)
        add(f"workshop.{task}", "torch_forward", TORCH_LAYER)
        if task not in ("logsumexp", "softmax_ce", "maxpool"):
            add(f"workshop.{task}", "forward", REFERENCE)
        add(f"workshop.{task}", "backward", "checked with its forward (the forward rows call both)")
    add("workshop.check", "Mismatch LoadError", EXCEPTION)
    add("workshop.check", "draw size", "the checker's case drawing: a seed or a size range from the task's own code")
    add("workshop.custom_op", "opcheck register setup_context", NO_NUMBERS)
    add("workshop.check", "default_record", NO_NUMBERS)
    add("workshop.check", "compute judge rebuild ship failures", "the checker's halves and its transport between "
        "processes: no degenerate value of its own; a NaN or inf from the reader is a failed report (test_bad_input)")
    add("workshop.check", "Report check compare get_task run_checks starter_path tasks",
        "the checker: a NaN or inf from the reader is a failed report (test_bad_input); no degenerate value of its own")
    return e


ROWS = _rows()
EXEMPT = _exempt()


def _engine_table():
    """The engines' (ROWS, EXEMPT): from tests/test_degenerate_engines.py, or, while that file
    does not exist, no rows and every engine module's names exempted, pointing to it."""
    if importlib.util.find_spec("test_degenerate_engines") is not None:
        engines = importlib.import_module("test_degenerate_engines")
        return list(engines.ROWS), dict(engines.EXEMPT)
    return [], {(m, n): ENGINE_REASON for m, n in _public_names() if m in ENGINES}


def _check(result, want):
    """Exact for flags and text; numbers and tensors as torch.testing.assert_close, NaN == NaN
    (float32 tolerances: an accumulated gradient is rounded in another order)."""
    if isinstance(want, (bool, str, type(None))) or (
            isinstance(want, (tuple, list)) and all(isinstance(w, (bool, int, str)) for w in want)):
        assert result == want, f"{result!r} != torch's {want!r}"
    else:
        torch.testing.assert_close(result, want, equal_nan=True, check_dtype=False, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("module, name, thunk, expected", ROWS,
                         ids=[f"{m}.{n}-{i}" for i, (m, n, *_rest) in enumerate(ROWS)])
def test_degenerate_input_gives_torchs_answer_or_says_why(module, name, thunk, expected):
    if isinstance(expected, Torch):
        _check(thunk(), expected.fn())
        return
    error, pattern = expected
    with pytest.raises(BaseException) as caught:
        thunk()
    assert type(caught.value) is error or (error is AssertionError and isinstance(caught.value, AssertionError)), (
        f"{type(caught.value).__name__}: {caught.value}")
    assert re.search(pattern, str(caught.value)), f"{pattern!r} not found in {str(caught.value)!r}"


def test_every_public_name_has_a_degenerate_row_or_a_reason():
    names = _public_names()
    assert len(names) >= 150
    assert not {m for m, *_rest in [*ROWS, *EXEMPT]} & set(ENGINES), "engine rows belong in tests/test_degenerate_engines.py"
    engine_rows, engine_exempt = _engine_table()
    covered = {(m, n) for m, n, *_rest in [*ROWS, *engine_rows]} | set(EXEMPT) | set(engine_exempt)
    missing = sorted(f"{m}.{n}" for m, n in names - covered)
    assert not missing, "add a degenerate row (or a reason to EXEMPT) for: " + ", ".join(missing)
    known = names | {("workshop.__main__", "main")}  # the command line, run as a program
    stale = sorted(f"{m}.{n}" for m, n in covered - known)
    assert not stale, f"rows or exemptions name functions that no longer exist: {stale}"
    both = sorted(f"{m}.{n}" for m, n, *_rest in ROWS if (m, n) in EXEMPT)
    assert not both, f"both tested and exempted: {both}"


def test_without_the_engine_file_exactly_the_engine_modules_are_exempted(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    rows, exempt = _engine_table()
    assert rows == []
    assert set(exempt) == {(m, n) for m, n in _public_names() if m in ENGINES}
    assert set(exempt.values()) <= {ENGINE_REASON}


# ---------------------------------------------------------------- importing snippets never exits

def test_importing_snippets_under_dash_m_does_not_exit():
    """``python -m snippets.finite_diff`` is refused by the code Python runs as the program; the
    import of the package, simulated here with the same sys.argv, returns normally."""
    code = ("import sys; sys.argv[:] = ['-m']; sys.orig_argv[:] = [sys.executable, '-m', 'snippets.finite_diff']\n"
            "import snippets\nprint('imported')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "imported\n", "")
    ran = subprocess.run([sys.executable, "-m", "snippets.finite_diff"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and "this module has no command line" in ran.stderr


class TimeFirstRNN(nn.Module):
    """(T, N, 2) -> (T, N, 1): an RNN left at batch_first=False, a head at every step; with
    ``recurrent=False`` the head alone, which treats every (t, n) on its own."""

    def __init__(self, recurrent=True):
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            self.rnn, self.head = (nn.RNN(2, 3) if recurrent else None), nn.Linear(3 if recurrent else 2, 1)

    def forward(self, x):
        return self.head(self.rnn(x)[0] if self.rnn is not None else x)


def test_accumulation_does_not_see_an_rnn_whose_dim_0_is_time():
    """The limit accumulate_gradients's docstring states: it splits dim 0, which such a model
    reads as time, and nothing refuses it; the gradient is not the full batch's. The same split
    of a model without recurrence, the control, gives the full batch's gradient."""
    x = torch.randn(4, 2, 2, generator=torch.Generator().manual_seed(1))   # (T=4, N=2, 2)
    y = torch.randn(4, 2, 1, generator=torch.Generator().manual_seed(2))   # (T, N, 1)
    for recurrent in (True, False):
        _, full = full_batch_grads(TimeFirstRNN(recurrent), nn.MSELoss(), x, y)
        _, split = accumulated(TimeFirstRNN(recurrent), nn.MSELoss(), x, y, 2)
        assert all(torch.isfinite(g).all() for g in full + split)
        same = all(torch.allclose(a, b) for a, b in zip(full, split))
        assert same is not recurrent, recurrent
