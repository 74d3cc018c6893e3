"""Bad input to the public API of snippets/: every call fails loudly, naming the problem.

``CASES`` is the table: one row per call that a reader could get wrong, with the exception
type it must raise and a pattern its message must match. Every public name (a function or
class defined in a module of ``snippets``, not starting with ``_``) needs, for each of the
three kinds below, either at least one row or an entry in ``EXEMPT`` that says why that kind
does not apply (or why the behaviour is left as it is):

    type       an argument of the wrong type (a list for a tensor, a model for parameters...)
    shape      a wrong shape, dtype, size or structure
    nonfinite  NaN or inf where the function takes numbers or tensors

``test_every_public_name_is_in_the_table`` enumerates the modules at run time, so a new
module or function fails it until its rows are added. The end of the file holds the
regression tests of the cases the issue "Reference code that fails loudly" listed.
"""

import importlib
import importlib.util
import inspect
import math
import pkgutil
import re
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import snippets

KINDS = ("type", "shape", "nonfinite")
NAN = float("nan")
ROOT = Path(__file__).resolve().parents[1]


def f64(*values):
    return torch.tensor(values, dtype=torch.float64)


def leaf(*values):
    return f64(*values).requires_grad_(True)


def linear():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return nn.Linear(2, 1)


def backward_with(model, grad_value):
    """A Linear model after a backward pass whose gradients are all grad_value."""
    (model(torch.ones(1, 2)).sum() * 0 + sum((p * grad_value).sum() for p in model.parameters())).backward()
    return model


def _opt_and_scaler():
    """(optimizer, GradScaler) of a fresh Linear: the last two arguments of scaled_step."""
    return torch.optim.SGD(linear().parameters(), lr=0.1), torch.amp.GradScaler("cpu")


def _scalar_loss():
    """A scalar loss with a graph, from a fresh Linear."""
    return linear()(torch.ones(1, 2)).sum()


def frozen():
    return linear().requires_grad_(False)


def bn_dropout():
    return nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Dropout(0.5))


def call(module, name):
    """``call("finite_diff", "check_gradient")(...)``: resolve at call time, so collection is cheap."""
    def run(*args, **kwargs):
        return getattr(importlib.import_module(f"snippets.{module}"), name)(*args, **kwargs)
    return run


def no_grad_call(fn, *args):
    """Call ``fn(*args)`` under ``torch.no_grad()``."""
    with torch.no_grad():
        return fn(*args)


def ctx(manager):
    """Enter and leave a context manager (its checks run on entry)."""
    with manager:
        pass


def graph_loss():
    w = leaf(1.0, 2.0)
    return (w * 2).sum()


def mlp3():
    """(N, 3) -> (N, 2): Linear, Tanh, Linear."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def sgd(params):
    return torch.optim.SGD(params, lr=0.1)


def trace(*rows):
    """A forward-trace table as trace_rows gives it: rows of (node, computed as, value, tangent)."""
    return [dict(zip(("node", "computed", "value", "tangent"), row)) for row in rows]


TRACE_HEADER = ["Node", "Computed as", "Value", "Tangent"]


def quiet(make):
    """A tensor of a layout torch calls beta or prototype (sparse CSR, nested), made without
    its once-per-process UserWarning, which is not what the row tests."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make()


# ----------------------------------------------------------------------------------------------
# The table: (module, name, kind, thunk, exception type, message pattern)
# ----------------------------------------------------------------------------------------------

def _cases():
    import snippets.custom_function as cf
    import snippets.custom_losses as cl
    import snippets.scalar_engine as se
    import snippets.tensor_engine as te
    from snippets.exercises import accumulation as acc
    from snippets.exercises import broken_graph as bg
    from snippets.exercises import gradient_check as gc
    from snippets.exercises import hand_trace as ht
    import snippets.function_api as fa
    import snippets.workshop.check as wc
    import snippets.workshop.linear as wt

    T = te.Tensor
    return [
        # autograd_graph
        ("autograd_graph", "walk", "type", lambda: call("autograd_graph", "walk")(3.0), TypeError, "expected a torch.Tensor, got float"),
        ("autograd_graph", "walk", "shape", lambda: call("autograd_graph", "walk")(torch.tensor([1.0, 2.0])), ValueError, "no grad_fn: no input required grad"),
        ("autograd_graph", "walk", "shape", lambda: call("autograd_graph", "walk")(torch.tensor([1.0], requires_grad=True).argmax()), ValueError, "this tensor is torch.int64, which cannot carry a gradient"),
        ("autograd_graph", "node_label", "type", lambda: call("autograd_graph", "node_label")(3.0), TypeError, "node must be an autograd node"),
        ("autograd_graph", "node_label", "shape", lambda: call("autograd_graph", "node_label")(graph_loss().grad_fn, ["w"]), TypeError, "names must be a dict"),
        ("autograd_graph", "to_mermaid", "type", lambda: call("autograd_graph", "to_mermaid")("L"), TypeError, "expected a torch.Tensor, got str"),
        ("autograd_graph", "to_mermaid", "shape", lambda: call("autograd_graph", "to_mermaid")(leaf(1.0)), ValueError, "is a leaf"),
        # bench_engine
        ("bench_engine", "bench", "type", lambda: call("bench_engine", "bench")(batch="64"), TypeError, "batch must be an int, got str"),
        ("bench_engine", "bench", "shape", lambda: call("bench_engine", "bench")(repeats=1, warmup=0, sizes=(32,)), ValueError, "sizes lists the input size"),
        ("bench_engine", "main", "type", lambda: call("bench_engine", "main")(["--batch", "many"]), SystemExit, "2"),
        ("bench_engine", "main", "shape", lambda: call("bench_engine", "main")(["--unknown"]), SystemExit, "2"),
        # explain
        ("explain", "explain", "type", lambda: call("explain", "explain")(3), TypeError, "must be an error message"),
        ("explain", "explain", "shape", lambda: call("explain", "explain")("  \n"), ValueError, "text is empty"),
        ("explain", "normalise", "type", lambda: call("explain", "normalise")(b"RuntimeError: x"), TypeError, "must be an error message"),
        ("explain", "drop_tails", "type", lambda: call("explain", "drop_tails")(None), TypeError, "must be an error message"),
        ("explain", "main", "type", lambda: call("explain", "main")(["--all=yes"]), SystemExit, "2"),
        ("explain", "main", "shape", lambda: call("explain", "main")(["--unknown", "x"]), SystemExit, "2"),
        # contract
        ("contract", "check_input", "type", lambda: call("contract", "check_input")([1.0]), TypeError, "x must be a torch.Tensor, got list"),
        ("contract", "check_input", "shape", lambda: call("contract", "check_input")(torch.ones(3), shape=(None, 4)), ValueError, r"x must have shape \(any, 4\), got \(3,\)"),
        ("contract", "check_input", "type", lambda: call("contract", "check_input")(torch.eye(2).to_sparse()), TypeError, r"x must be a dense tensor with values, got layout torch.sparse_coo on cpu: pass x.to_dense\(\)"),
        ("contract", "check_input", "shape", lambda: call("contract", "check_input")(torch.tensor([1, 2])), TypeError, "x must be floating point, got torch.int64"),
        ("contract", "check_input", "nonfinite", lambda: call("contract", "check_input")(torch.tensor([[1.0], [NAN]])), ValueError, r"1 non-finite value\(s\) \(inf or NaN\) in row\(s\) \[1\]"),
        ("contract", "softplus", "type", lambda: call("contract", "softplus")(np.ones(2)), TypeError, "x must be a torch.Tensor, got ndarray"),
        ("contract", "softplus", "shape", lambda: call("contract", "softplus")(torch.ones(2, 3), shape=(None, 4)), ValueError, "x must have shape"),
        ("contract", "softplus", "nonfinite", lambda: call("contract", "softplus")(torch.tensor([math.inf])), ValueError, "non-finite"),
        ("contract", "max_grad_error", "type", lambda: call("contract", "max_grad_error")(torch.exp, [1.0]), TypeError, "x must be a float64 tensor, got list"),
        ("contract", "max_grad_error", "shape", lambda: call("contract", "max_grad_error")(torch.exp, torch.ones(2)), TypeError, "x must be a float64 tensor, got torch.float32"),
        ("contract", "max_grad_error", "nonfinite", lambda: call("contract", "max_grad_error")(torch.exp, f64(1.0, NAN)), ValueError, "x holds NaN or inf"),
        ("contract", "max_grad_error", "nonfinite", lambda: call("contract", "max_grad_error")(torch.exp, f64(1.0), eps=math.inf), ValueError, "eps must be positive and finite, got inf"),
        ("contract", "max_grad_error", "shape", lambda: call("contract", "max_grad_error")(torch.exp, f64()), ValueError, "x is empty: pass at least one point"),
        ("contract", "max_grad_error", "shape", lambda: call("contract", "max_grad_error")(lambda t: t.float().exp(), f64(1.0)), TypeError, "fn returned torch.float32 for a float64 x"),
        ("contract", "max_grad_error", "type", lambda: call("contract", "max_grad_error")(lambda t: t.detach().exp(), f64(1.0)), ValueError, "fn's output does not require grad: fn detached it"),
        ("contract", "check_input", "type", lambda: call("contract", "check_input")(torch.ones(2, dtype=torch.complex64)), TypeError, r"x must be real floating point, got torch.complex64: .*pass x.real or x.abs\(\)"),
        ("contract", "saved_bytes_per_element", "type", lambda: call("contract", "saved_bytes_per_element")(torch.exp, [1.0]), TypeError, "x must be a tensor, got list"),
        ("contract", "saved_bytes_per_element", "shape", lambda: call("contract", "saved_bytes_per_element")(torch.exp, torch.ones(0, requires_grad=True)), ValueError, "x is empty"),
        ("contract", "grads_are_finite", "type", lambda: call("contract", "grads_are_finite")(linear()), TypeError, r"got a Linear: pass model.parameters\(\)"),
        ("contract", "grads_are_finite", "type", lambda: call("contract", "grads_are_finite")([1.0]), TypeError, "parameter 0 is a float"),
        ("contract", "grads_are_finite", "shape", lambda: call("contract", "grads_are_finite")([]), ValueError, "no parameters given"),
        ("contract", "eval_gate", "type", lambda: call("contract", "eval_gate")(torch.tensor(True), 2.0), TypeError, "candidate_loss must be a number or a one-element tensor, got a bool tensor"),
        ("contract", "check_input", "type", lambda: call("contract", "check_input")(quiet(lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]))), TypeError, r"x is a nested tensor, with no single shape: pass one of its tensors, or x.to_padded_tensor\(0.0\)"),
        ("contract", "eval_gate", "type", lambda: call("contract", "eval_gate")("0.5", 1.0), TypeError, "candidate_loss must be a number or a one-element tensor, got str"),
        ("contract", "eval_gate", "shape", lambda: call("contract", "eval_gate")(torch.ones(2), 1.0), ValueError, "candidate_loss must be one number, got shape"),
        ("contract", "eval_gate", "nonfinite", lambda: call("contract", "eval_gate")(1.0, NAN), ValueError, "baseline loss is nan"),
        ("contract", "eval_gate", "type", lambda: call("contract", "eval_gate")(1.0, 1.0, max_increase="0.1"), TypeError, r"max_increase must be a number, e.g. 0.1 for 10 %; got str"),
        ("contract", "eval_gate", "nonfinite", lambda: call("contract", "eval_gate")(1.0, 0.0, max_increase=math.inf), ValueError, r"max_increase must be a finite number >= 0, got inf"),
        # custom_function
        ("custom_function", "ScaledPow", "type", lambda: cf.ScaledPow.apply(leaf(1.0), f64(2.0), 1.5), ValueError, "p must be a Python int >= 1, got 1.5"),
        ("custom_function", "ScaledPow", "shape", lambda: cf.ScaledPow.apply(leaf(1.0, 2.0), torch.ones(2, 2, dtype=torch.float64), 2), ValueError, "must broadcast to x's shape"),
        ("custom_function", "check_function", "type", lambda: cf.check_function(cf.Square, leaf(1.0)), TypeError, r"pass Square.apply, not the class"),
        ("custom_function", "check_function", "type", lambda: cf.check_function(cf.Square.apply, (leaf(1.0),)), TypeError, r"pass the inputs unpacked, check_function\(fn, x, s, 3\)"),
        ("custom_function", "ScaledPow", "type", lambda: cf.ScaledPow.apply(leaf(1.0), 0.5, 2), TypeError, r"s must be a tensor, got float: pass torch.tensor\(0.5\)"),
        ("custom_function", "check_function", "shape", lambda: cf.check_function(cf.Square.apply, torch.ones(2, requires_grad=True)), TypeError, "input #0 is torch.float32"),
        ("custom_function", "check_function", "shape", lambda: cf.check_function(torch.sin, torch.ones(2, dtype=torch.complex64, requires_grad=True)), TypeError, r"input #0 is torch.complex64; .* Pass t.detach\(\).to\(torch.complex128\).requires_grad_\(\) instead"),
        ("custom_function", "check_function", "shape", lambda: cf.check_function(torch.sin, torch.ones(0, dtype=torch.float64, requires_grad=True)), ValueError, "every input that requires grad is empty: gradcheck would compare no element"),
        ("custom_function", "check_function", "nonfinite", lambda: cf.check_function(cf.Square.apply, leaf(1.0, NAN)), ValueError, "input #0 holds NaN or inf"),
        # custom_losses
        ("custom_losses", "StableLogSumExp", "type", lambda: cl.StableLogSumExp.apply([1.0, 2.0]), TypeError, "x must be a floating-point tensor, got list"),
        ("custom_losses", "SoftmaxCrossEntropy", "shape", lambda: cl.SoftmaxCrossEntropy.apply(torch.zeros(3, 4), torch.tensor([0, -100, 5])), ValueError, r"target holds 2 class index\(es\) outside \[0, 4\), such as \[-100, 5\]: drop the rows to ignore"),
        ("custom_losses", "StableLogSumExp", "type", lambda: cl.StableLogSumExp.apply(torch.zeros(2, dtype=torch.complex64)), TypeError, r"convert real scores with .float\(\) or .double\(\) \(complex scores are not supported\)"),
        ("custom_losses", "StableLogSumExp", "shape", lambda: cl.StableLogSumExp.apply(torch.ones(2, 0)), ValueError, "non-empty last dimension"),
        ("custom_losses", "SoftmaxCrossEntropy", "type", lambda: cl.SoftmaxCrossEntropy.apply(torch.ones(2, 3), torch.zeros(2)), TypeError, r"target must be an int64 tensor of class indices, got torch.float32; use target.long\(\)"),
        ("custom_losses", "SoftmaxCrossEntropy", "shape", lambda: cl.SoftmaxCrossEntropy.apply(torch.ones(3), torch.zeros(1, dtype=torch.long)), ValueError, r"logits must be \(N, C\), got shape \(3,\); for one sample \(C,\), pass logits.unsqueeze\(0\)"),
        ("custom_losses", "SoftmaxCrossEntropy", "shape", lambda: cl.SoftmaxCrossEntropy.apply(torch.ones(2, 3, 5), torch.zeros(2, 5, dtype=torch.long)), ValueError, r"for \(N, C, d...\), pass logits.movedim\(1, -1\).reshape\(-1, C\) and target.reshape\(-1\)"),
        ("custom_losses", "SoftmaxCrossEntropy", "type", lambda: cl.SoftmaxCrossEntropy.apply(torch.ones(2, 3), [0, 1]), TypeError, r"got list; pass torch.tensor\(target\)"),
        ("custom_losses", "SoftmaxCrossEntropy", "type", lambda: cl.SoftmaxCrossEntropy.apply(torch.ones(2, 3), torch.eye(3)[:2]), TypeError, r"got torch.float32; for one-hot rows, pass target.argmax\(dim=1\)"),
        ("custom_losses", "StoredSoftmaxCrossEntropy", "type", lambda: cl.StoredSoftmaxCrossEntropy.apply(torch.ones(2, 3), [0, 1]), TypeError, "target must be an int64 tensor"),
        ("custom_losses", "StoredSoftmaxCrossEntropy", "shape", lambda: cl.StoredSoftmaxCrossEntropy.apply(torch.ones(2, 3), torch.zeros(3, dtype=torch.long)), ValueError, r"target must have shape \(N,\) = \(2,\)"),
        # determinism
        ("determinism", "seed_everything", "type", lambda: call("determinism", "seed_everything")("0"), TypeError, r"seed must be a Python int, got str '0': pass an int such as 0"),
        ("determinism", "seed_everything", "type", lambda: call("determinism", "seed_everything")(np.int64(3)), TypeError, r"got int64 np.int64\(3\): pass an int such as 0 \(int\(seed\) for a NumPy integer\)"),
        ("determinism", "seed_everything", "shape", lambda: call("determinism", "seed_everything")(2**32), ValueError, r"in \[0, 2\*\*32\)"),
        ("determinism", "seed_everything", "nonfinite", lambda: call("determinism", "seed_everything")(NAN), TypeError, "seed must be a Python int, got float nan"),
        ("determinism", "loader_generator", "type", lambda: call("determinism", "loader_generator")("0"), TypeError, "seed must be an int, got '0'"),
        ("determinism", "loader_generator", "shape", lambda: call("determinism", "loader_generator")(True), TypeError, "seed must be an int, got True"),
        ("determinism", "loader_generator", "nonfinite", lambda: call("determinism", "loader_generator")(math.inf), TypeError, "seed must be an int, got inf"),
        ("determinism", "deterministic_algorithms", "type", lambda: ctx(call("determinism", "deterministic_algorithms")(warn_only="yes")), TypeError, "argument 'warn_only' must be bool, not str"),
        ("determinism", "run_twice", "type", lambda: call("determinism", "run_twice")(5, 0), TypeError, "train must be a function of no arguments; got int"),
        ("determinism", "run_twice", "shape", lambda: call("determinism", "run_twice")(lambda: [], 0), TypeError, r"train\(\) must return a non-empty list of tensors, .*; got an empty list"),
        ("determinism", "run_twice", "type", lambda: call("determinism", "run_twice")(lambda: [torch.ones(1), None], 0), TypeError, r"its element 1 is None \(the .grad of a parameter that got no gradient is None\): leave it out"),
        ("determinism", "run_twice", "type", lambda: call("determinism", "run_twice")(lambda: [0.5, 0.25], 0), TypeError, r"its element 0 is a float: return torch.tensor\(values\) for numbers"),
        # scale.launch
        ("scale.launch", "run_ranks", "type", lambda: call("scale.launch", "run_ranks")(lambda r, w: r), TypeError, "top level of an importable module"),
        ("scale.launch", "run_ranks", "shape", lambda: call("scale.launch", "run_ranks")(math.floor, world_size=9), ValueError, "world_size must be an int from 1 to 8"),
        ("scale.launch", "run_ranks", "nonfinite", lambda: call("scale.launch", "run_ranks")(math.floor, timeout=NAN), ValueError, "timeout must be a positive, finite number of seconds; got nan"),
        ("scale.launch", "run_ranks", "nonfinite", lambda: call("scale.launch", "run_ranks")(math.floor, timeout=math.inf), ValueError, "timeout must be a positive, finite number of seconds; got inf"),
        ("scale.launch", "rank_rows", "type", lambda: call("scale.launch", "rank_rows")("0", 2, 2, 2), ValueError, "rank must be an int from 0 to 1; got '0'"),
        ("scale.launch", "rank_rows", "shape", lambda: call("scale.launch", "rank_rows")(0, 3, 2, 2), ValueError, "the example's batch has 2 shards: run it with world_size=2, not 3"),
        ("scale.launch", "rank_rows", "nonfinite", lambda: call("scale.launch", "rank_rows")(NAN, 2, 2, 2), ValueError, "rank must be an int from 0 to 1; got nan"),
        ("workshop.custom_op", "opcheck", "type", lambda: call("workshop.custom_op", "opcheck")("backward"), TypeError, r"opcheck\(backward\): pass your function backward\(grad_y, x, a\)"),
        ("workshop.check", "ship", "type", lambda: call("workshop.check", "ship")("backward"), TypeError, "pass a function defined with def"),
        # scale.ddp
        ("scale.ddp", "shard", "type", lambda: call("scale.ddp", "shard")("0"), ValueError, "rank must be an int from 0 to 1; got '0'"),
        ("scale.ddp", "shard", "shape", lambda: call("scale.ddp", "shard")(0, 4), ValueError, "run it with world_size=2, not 4"),
        ("scale.ddp", "shard", "nonfinite", lambda: call("scale.ddp", "shard")(NAN), ValueError, "rank must be an int from 0 to 1; got nan"),
        ("scale.ddp", "make_model", "type", lambda: call("scale.ddp", "make_model")("1"), TypeError, "fill must be a number"),
        ("scale.ddp", "make_model", "nonfinite", lambda: call("scale.ddp", "make_model")(math.inf), ValueError, "fill must be a finite number float64 can hold"),
        ("scale.ddp", "loss_fn", "type", lambda: call("scale.ddp", "loss_fn")(call("scale.ddp", "make_model")(), [1.0], None), TypeError, r"x and y must be tensors, \(m, 2\) and \(m, 1\); got list and NoneType"),
        ("scale.ddp", "loss_fn", "shape", lambda: call("scale.ddp", "loss_fn")(call("scale.ddp", "make_model")(), torch.ones(2, 3, dtype=torch.float64), torch.ones(2, 1)), ValueError, r"x must be \(m, 2\) and y \(m, 1\) with m >= 1; got \(2, 3\)"),
        ("scale.ddp", "loss_fn", "shape", lambda: call("scale.ddp", "loss_fn")(call("scale.ddp", "make_model")(), torch.ones(0, 2, dtype=torch.float64), torch.ones(0, 1)), ValueError, r"with m >= 1; got \(0, 2\) and \(0, 1\)"),
        ("scale.ddp", "loss_fn", "type", lambda: call("scale.ddp", "loss_fn")(call("scale.ddp", "make_model")(), torch.ones(2, 2), torch.ones(2, 1, dtype=torch.float64)), TypeError, r"x and y must be float64, the model's dtype; got torch.float32 and torch.float64: pass x.double\(\)"),
        ("scale.ddp", "make_model", "nonfinite", lambda: call("scale.ddp", "make_model")(10 ** 400), ValueError, "fill must be a finite number float64 can hold .*; got inf$"),
        ("scale.ddp", "full_batch_gradients", "type", lambda: call("scale.ddp", "full_batch_gradients")([linear()]), TypeError, "model must be an nn.Module"),
        ("scale.ddp", "Checkpointed", "type", lambda: call("scale.ddp", "Checkpointed")(tied="yes"), TypeError, "tied must be True or False; got 'yes'"),
        # scale.fsdp
        ("scale.fsdp", "shard", "type", lambda: call("scale.fsdp", "shard")(1.0), ValueError, "rank must be an int from 0 to 1; got 1.0"),
        ("scale.fsdp", "shard", "shape", lambda: call("scale.fsdp", "shard")(0, 3), ValueError, "run it with world_size=2, not 3"),
        ("scale.fsdp", "shard", "nonfinite", lambda: call("scale.fsdp", "shard")(math.inf), ValueError, "rank must be an int from 0 to 1; got inf"),
        ("scale.fsdp", "make_model", "type", lambda: call("scale.fsdp", "make_model")("float64"), TypeError, "dtype must be a floating torch.dtype"),
        ("scale.fsdp", "make_model", "shape", lambda: call("scale.fsdp", "make_model")(torch.int64), TypeError, "dtype must be a floating torch.dtype, such as torch.float64; got torch.int64"),
        ("scale.fsdp", "loss_fn", "type", lambda: call("scale.fsdp", "loss_fn")(call("scale.fsdp", "make_model")(), [[1.0] * 4]), TypeError, r"x must be a tensor of shape \(m, 4\); got list"),
        ("scale.fsdp", "loss_fn", "shape", lambda: call("scale.fsdp", "loss_fn")(call("scale.fsdp", "make_model")(), torch.ones(4, dtype=torch.float64)), ValueError, r"x must be a tensor of shape \(m, 4\), m >= 1; got shape \(4,\)"),
        ("scale.fsdp", "loss_fn", "shape", lambda: call("scale.fsdp", "loss_fn")(call("scale.fsdp", "make_model")(), torch.ones(0, 4, dtype=torch.float64)), ValueError, r"m >= 1; got shape \(0, 4\)"),
        ("scale.fsdp", "local_shapes", "type", lambda: call("scale.fsdp", "local_shapes")(0, 2, (3, 7)), TypeError, r"sizes must be a list of \(n_in, n_out\) pairs, e.g. \[\(3, 7\)\]; got \(3, 7\)"),
        ("scale.fsdp", "local_shapes", "type", lambda: call("scale.fsdp", "local_shapes")(0, 2, [(3.0, 7)]), TypeError, r"each size in sizes must be an int, e.g. \[\(3, 7\)\]; got 3.0 in \[\(3.0, 7\)\]"),
        ("scale.fsdp", "local_shapes", "shape", lambda: call("scale.fsdp", "local_shapes")(0, 2, [(3, 0)]), ValueError, r"each size in sizes must be >= 1, e.g. \[\(3, 7\)\]; got 0 in \[\(3, 0\)\]"),
        ("scale.fsdp", "shard_model", "type", lambda: call("scale.fsdp", "shard_model")(linear(), None), TypeError, r"model must be an nn.Sequential such as make_model\(\); got Linear"),
        # scale.compiled
        ("scale.compiled", "CompileLog", "type", lambda: call("scale.compiled", "CompileLog")(aot="yes"), TypeError, "aot must be True"),
        ("scale.compiled", "eager_vs_compiled", "type", lambda: call("scale.compiled", "eager_vs_compiled")([linear()], torch.ones(1, 2)), TypeError, r"model must be a torch.nn.Module, got list: pass the model itself, not model.parameters\(\)"),
        ("scale.compiled", "eager_vs_compiled", "type", lambda: call("scale.compiled", "eager_vs_compiled")(linear(), [[1.0, 2.0]]), TypeError, "x must be a tensor"),
        ("scale.compiled", "eager_vs_compiled", "type", lambda: call("scale.compiled", "eager_vs_compiled")(linear(), torch.ones(1, 2), backend=3), TypeError, "backend must be a backend's name"),
        ("scale.compiled", "eager_vs_compiled", "shape", lambda: call("scale.compiled", "eager_vs_compiled")(linear(), torch.ones(1, 2, dtype=torch.long)), ValueError, r"x must be a non-empty floating-point batch.*torch.int64"),
        ("scale.compiled", "eager_vs_compiled", "shape", lambda: call("scale.compiled", "eager_vs_compiled")(linear(), torch.ones(0, 2)), ValueError, r"x must be a non-empty floating-point batch.*\(0, 2\)"),
        ("scale.compiled", "eager_vs_compiled", "nonfinite", lambda: call("scale.compiled", "eager_vs_compiled")(linear(), torch.tensor([[NAN, 1.0]])), ValueError, "x holds NaN or inf"),
        # scale.mixed_precision
        ("scale.mixed_precision", "ulp", "type", lambda: call("scale.mixed_precision", "ulp")("1.0", torch.bfloat16), TypeError, "x must be a number"),
        ("scale.mixed_precision", "ulp", "type", lambda: call("scale.mixed_precision", "ulp")(1.0, torch.int32), TypeError, "dtype must be one of torch.float16"),
        ("scale.mixed_precision", "ulp", "shape", lambda: call("scale.mixed_precision", "ulp")(torch.ones(2), torch.bfloat16), ValueError, r"x must be one number; got a tensor of shape \(2,\)"),
        ("scale.mixed_precision", "ulp", "nonfinite", lambda: call("scale.mixed_precision", "ulp")(NAN, torch.bfloat16), ValueError, "x must be finite; got nan"),
        ("scale.mixed_precision", "ulp", "nonfinite", lambda: call("scale.mixed_precision", "ulp")(1e6, torch.float16), ValueError, "rounds to inf in torch.float16"),
        ("scale.mixed_precision", "applied_update", "type", lambda: call("scale.mixed_precision", "applied_update")(1.0, None, torch.bfloat16), TypeError, "delta must be a number"),
        ("scale.mixed_precision", "applied_update", "shape", lambda: call("scale.mixed_precision", "applied_update")(torch.ones(2, 2), 1e-3, torch.bfloat16), ValueError, r"w must be one number; got a tensor of shape \(2, 2\)"),
        ("scale.mixed_precision", "applied_update", "nonfinite", lambda: call("scale.mixed_precision", "applied_update")(1.0, math.inf, torch.bfloat16), ValueError, "delta must be finite; got inf"),
        ("scale.mixed_precision", "scaled_step", "type", lambda: call("scale.mixed_precision", "scaled_step")(1.0, *_opt_and_scaler()), TypeError, "loss must be a tensor"),
        ("scale.mixed_precision", "scaled_step", "type", lambda: call("scale.mixed_precision", "scaled_step")(_scalar_loss(), linear(), None), TypeError, "optimizer must be a torch.optim.Optimizer"),
        ("scale.mixed_precision", "scaled_step", "shape", lambda: call("scale.mixed_precision", "scaled_step")(_scalar_loss().expand(2), *_opt_and_scaler()), ValueError, r"loss must be a scalar tensor; got shape \(2,\)"),
        ("scale.mixed_precision", "scaled_step", "nonfinite", lambda: call("scale.mixed_precision", "scaled_step")(_scalar_loss(), *_opt_and_scaler(), max_norm=NAN), ValueError, "max_norm must be a positive finite number or None; got nan"),
        ("scale.mixed_precision", "scaled_step", "nonfinite", lambda: call("scale.mixed_precision", "scaled_step")(_scalar_loss(), *_opt_and_scaler(), max_norm=10 ** 400), ValueError, "max_norm must be a positive finite number or None; got an int beyond float64's range"),
        ("scale.mixed_precision", "scaled_step", "shape", lambda: call("scale.mixed_precision", "scaled_step")(_scalar_loss(), *_opt_and_scaler()), ValueError, "no parameter of optimizer got a gradient from loss: pass the optimizer"),
        ("scale.mixed_precision", "applied_update", "nonfinite", lambda: call("scale.mixed_precision", "applied_update")(70000.0, 1.0, torch.float16), ValueError, r"^w rounds to inf in torch.float16 \(largest finite: 65504.0\)"),
        ("scale.mixed_precision", "applied_update", "nonfinite", lambda: call("scale.mixed_precision", "applied_update")(1.0, 70000.0, torch.float16), ValueError, r"^delta rounds to inf in torch.float16"),
        ("scale.mixed_precision", "applied_update", "nonfinite", lambda: call("scale.mixed_precision", "applied_update")(10 ** 400, 1.0, torch.float16), ValueError, "^w must be a finite number float64 can hold; got an int beyond its range$"),
        ("recipes", "accumulate_gradients", "shape", lambda: call("recipes", "accumulate_gradients")(linear(), nn.functional.mse_loss, torch.ones(4, 2), torch.ones(4, 1), 0), ValueError, "got 0: pick k >= 1$"),
        # scale.checkpointing
        ("scale.checkpointing", "checkpoint_costs", "type", lambda: call("scale.checkpointing", "checkpoint_costs")(linear(), torch.ones(1, 2), "none"), TypeError, "model must be an nn.Sequential of blocks"),
        ("scale.checkpointing", "checkpoint_costs", "type", lambda: call("scale.checkpointing", "checkpoint_costs")(nn.Sequential(linear()), torch.ones(1, 2), "full"), ValueError, "mode must be one of 'none'"),
        ("scale.checkpointing", "checkpoint_costs", "shape", lambda: call("scale.checkpointing", "checkpoint_costs")(nn.Sequential(linear()), torch.ones(0, 2), "none"), ValueError, r"x must hold a batch \(N, D\) with no empty dimension; got shape \(0, 2\)"),
        ("scale.checkpointing", "checkpoint_costs", "shape", lambda: call("scale.checkpointing", "checkpoint_costs")(nn.Sequential(linear()), torch.ones(4, 0), "none"), ValueError, r"with no empty dimension; got shape \(4, 0\)"),
        ("scale.checkpointing", "checkpoint_costs", "shape", lambda: call("scale.checkpointing", "checkpoint_costs")(nn.Sequential(linear()), torch.tensor(1.0), "none"), ValueError, r"x must hold a batch \(N, D\); got a 0-d tensor: pass x.reshape\(1, -1\)"),
        ("scale.checkpointing", "checkpoint_costs", "shape", lambda: no_grad_call(call("scale.checkpointing", "checkpoint_costs"), nn.Sequential(linear()), torch.ones(1, 2), "none"), RuntimeError, r"grad mode is off .*: call checkpoint_costs outside those blocks"),
        ("scale.checkpointing", "checkpoint_costs", "nonfinite", lambda: call("scale.checkpointing", "checkpoint_costs")(nn.Sequential(linear()), torch.tensor([[NAN, 1.0]]), "none"), ValueError, "x holds inf or NaN"),
        # distributed_accumulation
        ("distributed_accumulation", "make_data", "type", lambda: call("distributed_accumulation", "make_data")("8"), ValueError, "n must be a positive int; got '8'"),
        ("distributed_accumulation", "make_data", "shape", lambda: call("distributed_accumulation", "make_data")(0), ValueError, "n must be a positive int; got 0"),
        ("distributed_accumulation", "make_data", "nonfinite", lambda: call("distributed_accumulation", "make_data")(math.inf), ValueError, "n must be a positive int; got inf"),
        ("distributed_accumulation", "make_model", "type", lambda: call("distributed_accumulation", "make_model")("0"), RuntimeError, "manual_seed expected a long, but got str"),
        ("distributed_accumulation", "loss_fn", "type", lambda: call("distributed_accumulation", "loss_fn")(call("distributed_accumulation", "make_model")(), [1.0], None), TypeError, r"x and y must be tensors, x \(m, 3\) and y \(m, 1\); got list and NoneType: make them with make_data\(n\)"),
        ("distributed_accumulation", "loss_fn", "shape", lambda: call("distributed_accumulation", "loss_fn")(call("distributed_accumulation", "make_model")(), torch.ones(2, 3, dtype=torch.float64), torch.ones(2)), ValueError, r"x must be \(m, 3\) and y \(m, 1\); got \(2, 3\) and \(2,\)"),
        ("distributed_accumulation", "full_batch_gradient", "type", lambda: call("distributed_accumulation", "full_batch_gradient")(world_size="2"), ValueError, "world_size must be a positive int; got '2'"),
        ("distributed_accumulation", "full_batch_gradient", "shape", lambda: call("distributed_accumulation", "full_batch_gradient")(k=0), ValueError, "k must be a positive int; got 0"),
        ("distributed_accumulation", "by_hand", "type", lambda: call("distributed_accumulation", "by_hand")(0, 2, k=2.0), ValueError, "k must be a positive int; got 2.0"),
        ("distributed_accumulation", "by_hand", "shape", lambda: call("distributed_accumulation", "by_hand")(0, 0), ValueError, "world_size must be a positive int; got 0"),
        ("distributed_accumulation", "by_hand", "nonfinite", lambda: call("distributed_accumulation", "by_hand")(0, 2, m=math.inf), ValueError, "m must be a positive int; got inf"),
        # edge_semantics
        ("edge_semantics", "grad_at", "type", lambda: call("edge_semantics", "grad_at")(torch.sin, "1"), TypeError, "point must be a float or a list of floats, got str"),
        ("edge_semantics", "grad_at", "type", lambda: call("edge_semantics", "grad_at")(lambda x: 1.0, 1.0), TypeError, "fn must return a tensor, got float"),
        ("edge_semantics", "grad_at", "shape", lambda: call("edge_semantics", "grad_at")(torch.sin, [[1.0], [1.0, 2.0]]), ValueError, r"expected sequence of length 1 at dim 1 \(got 2\)"),
        ("edge_semantics", "grad_at", "nonfinite", lambda: call("edge_semantics", "grad_at")(torch.abs, [0.0, NAN]), ValueError, r"point must be finite, got \[0.0, nan\]"),
        ("edge_semantics", "complex_grad_by_parts", "type", lambda: call("edge_semantics", "complex_grad_by_parts")(lambda z: z.abs().sum(), [1 + 1j]), TypeError, "z must be a complex128 tensor"),
        ("edge_semantics", "complex_grad_by_parts", "type", lambda: call("edge_semantics", "complex_grad_by_parts")("abs", torch.ones(1, dtype=torch.complex128)), TypeError, "loss must be a function of z returning a real scalar, got str"),
        ("edge_semantics", "complex_grad_by_parts", "shape", lambda: call("edge_semantics", "complex_grad_by_parts")(lambda z: z.abs(), torch.ones(2, dtype=torch.complex128)), ValueError, r"loss must return a real 0-d tensor, got torch.float64 of shape \(2,\)"),
        ("edge_semantics", "complex_grad_by_parts", "shape", lambda: call("edge_semantics", "complex_grad_by_parts")(lambda z: z.abs().sum(), torch.ones(1, dtype=torch.complex64)), TypeError, "z must be a complex128 tensor"),
        ("edge_semantics", "complex_grad_by_parts", "nonfinite", lambda: call("edge_semantics", "complex_grad_by_parts")(lambda z: z.abs().sum(), torch.tensor([complex(NAN, 1.0)], dtype=torch.complex128)), ValueError, "z holds NaN or inf"),
        ("edge_semantics", "titled", "type", lambda: call("edge_semantics", "titled")(["flowchart TB"], "t", "d"), ValueError, "source must be mermaid text"),
        ("edge_semantics", "titled", "type", lambda: call("edge_semantics", "titled")("flowchart TB\n  a --> b", None, "d"), ValueError, "title must be one line of text, got None"),
        ("edge_semantics", "titled", "shape", lambda: call("edge_semantics", "titled")("flowchart TB\n  a --> b", "t", "two\nlines"), ValueError, r"description must be one line of text, got 'two\\nlines'"),
        ("edge_semantics", "titled", "nonfinite", lambda: call("edge_semantics", "titled")("flowchart TB\n  a --> b", NAN, "d"), ValueError, "title must be one line of text, got nan"),
        # engine_vs_torch
        ("engine_vs_torch", "torch_mlp", "type", lambda: call("engine_vs_torch", "torch_mlp")(32, 0), ValueError, "sizes must list two or more layer sizes"),
        ("engine_vs_torch", "torch_mlp", "shape", lambda: call("engine_vs_torch", "torch_mlp")((32,), 0), ValueError, "sizes must list two or more layer sizes"),
        ("engine_vs_torch", "copy_weights", "type", lambda: call("engine_vs_torch", "copy_weights")(te.MLP([2, 1]), call("engine_vs_torch", "torch_mlp")((2, 1), 0)), TypeError, "takes a torch nn.Sequential and an engine MLP, got MLP and Sequential"),
        ("engine_vs_torch", "copy_weights", "shape", lambda: call("engine_vs_torch", "copy_weights")(call("engine_vs_torch", "torch_mlp")((2, 3), 0), te.MLP([3, 2])), ValueError, "layer shapes differ"),
        ("engine_vs_torch", "train_both", "type", lambda: call("engine_vs_torch", "train_both")(steps="20"), TypeError, "steps, batch and seed must be ints"),
        ("engine_vs_torch", "train_both", "shape", lambda: call("engine_vs_torch", "train_both")(batch=0), ValueError, "steps and batch must be at least 1"),
        ("engine_vs_torch", "train_both", "nonfinite", lambda: call("engine_vs_torch", "train_both")(lr=NAN), ValueError, "lr positive"),
        # evaluation
        ("evaluation", "evaluating", "type", lambda: ctx(call("evaluation", "evaluating")(linear().parameters())), TypeError, "model must be a torch.nn.Module, got generator"),
        ("evaluation", "evaluate", "type", lambda: call("evaluation", "evaluate")(linear(), torch.ones(4, 2)), TypeError, r"batches is one tensor of shape \(4, 2\): pass an iterable of batches"),
        ("evaluation", "evaluate", "type", lambda: call("evaluation", "evaluate")(linear(), [(torch.ones(1, 2), torch.ones(1))]), TypeError, r"batch 0 is a tuple; pass input tensors only \(e.g. \(x for x, y in loader\)\)"),
        ("evaluation", "evaluate", "shape", lambda: call("evaluation", "evaluate")(linear(), [torch.ones(1, 3)]), RuntimeError, "mat1 and mat2 shapes cannot be multiplied"),
        ("evaluation", "tracking_profile", "type", lambda: call("evaluation", "tracking_profile")(bn_dropout(), [[1.0, 2.0]], "grad"), TypeError, "x must be an input tensor; got list"),
        ("evaluation", "tracking_profile", "shape", lambda: call("evaluation", "tracking_profile")(linear(), torch.ones(4, 2), "grad"), ValueError, "needs a BatchNorm layer and a Dropout layer"),
        ("evaluation", "tracking_profile", "nonfinite", lambda: call("evaluation", "tracking_profile")(bn_dropout(), torch.tensor([[NAN, 1.0], [0.0, 2.0]]), "grad"), ValueError, "x holds NaN or inf, through which dropout cannot be seen"),
        # exercises
        ("exercises", "attempt", "type", lambda: call("exercises", "attempt")(ht.check, "solution"), TypeError, r"attempt\(check, fn\): pass the module's check"),
        ("exercises.accumulation", "check", "type", lambda: acc.check(3), TypeError, r"check\(fn\): pass a function such as solution, got int"),
        ("exercises.accumulation", "check", "shape", lambda: acc.check(lambda: ([28.0, 56.0], ({"weight": torch.ones(1, 3), "bias": torch.ones(2)}, {"weight": torch.ones(1, 3), "bias": torch.ones(1)}))), AssertionError, r"bias: shape \(2,\), expected \(1,\)"),
        ("exercises.accumulation", "check", "nonfinite", lambda: acc.check(lambda: ([28.0, 56.0], ({"weight": torch.ones(1, 3), "bias": torch.tensor([NAN])}, {"weight": torch.ones(1, 3), "bias": torch.ones(1)}))), AssertionError, r"k=4: accumulated bias.grad holds NaN or inf: \[nan\]"),
        ("exercises.accumulation", "check_two_passes", "type", lambda: acc.check_two_passes(None), TypeError, "pass your function"),
        ("exercises.accumulation", "check_two_passes", "shape", lambda: acc.check_two_passes(lambda: [28.0]), AssertionError, r"should be \[28.0, 56.0\] \(28 \+ 28\), got \[28.0\]"),
        ("exercises.accumulation", "check_two_passes", "nonfinite", lambda: acc.check_two_passes(lambda: [NAN, NAN]), AssertionError, r"should be \[28.0, 56.0\] \(28 \+ 28\), got \[nan, nan\]"),
        ("exercises.accumulation", "check_micro_batches", "type", lambda: acc.check_micro_batches("solution"), TypeError, "pass your function"),
        ("exercises.accumulation", "check_micro_batches", "shape", lambda: acc.check_micro_batches(acc.solution_micro_batches, ks=(3,)), ValueError, r"ks must be a non-empty tuple of divisors of N = 8 \(1, 2, 4, 8\), got \(3,\)"),
        ("exercises.accumulation", "check_micro_batches", "nonfinite", lambda: acc.check_micro_batches(lambda k: ({"weight": torch.ones(1, 3), "bias": torch.tensor([math.inf])}, {"weight": torch.ones(1, 3), "bias": torch.ones(1)})), AssertionError, "accumulated bias.grad holds NaN or inf"),
        ("exercises.accumulation", "main", "type", lambda: acc.main(["-k", "three"]), SystemExit, "2"),
        ("exercises.accumulation", "main", "shape", lambda: acc.main(["-k", "3"]), SystemExit, "2"),
        ("exercises.broken_graph", "diagnose", "type", lambda: bg.diagnose(linear().parameters(), None, graph_loss()), TypeError, r"diagnose\(model, optimizer, loss\): pass the nn.Module"),
        ("exercises.broken_graph", "diagnose", "shape", lambda: bg.diagnose(linear(), torch.optim.SGD(linear().parameters(), 0.1), torch.ones(2)), TypeError, "loss must be the scalar loss tensor"),
        ("exercises.broken_graph", "first_step", "type", lambda: bg.first_step(3), ValueError, "variant must be one of"),
        ("exercises.broken_graph", "check", "type", lambda: bg.check([1.0]), TypeError, r"check\(train\): pass your function train\(steps, seed\), got list"),
        ("exercises.broken_graph", "check", "shape", lambda: bg.check(lambda steps, seed: [1.0, 0.1]), AssertionError, r"train must return 11 losses"),
        ("exercises.broken_graph", "check", "nonfinite", lambda: bg.check(lambda steps, seed: [1.0] * steps + [NAN]), AssertionError, "the losses are not all finite"),
        ("exercises.broken_graph", "loss_table", "type", lambda: bg.loss_table([[1.0, 2.0]]), TypeError, r"columns must be a dict \{name: losses\}, got list"),
        ("exercises.broken_graph", "loss_table", "shape", lambda: bg.loss_table({"a": [1.0, 2.0], "b": [1.0]}), ValueError, "all of one length"),
        ("exercises.broken_graph", "main", "type", lambda: bg.main(["--steps", "ten"]), SystemExit, "2"),
        ("exercises.broken_graph", "main", "shape", lambda: bg.main(["--steps", "0"]), SystemExit, "2"),
        ("exercises.gradient_check", "relative_error", "type", lambda: gc.relative_error([1.0], f64(1.0)), TypeError, "a and n must be tensors, got list and Tensor"),
        ("exercises.gradient_check", "relative_error", "shape", lambda: gc.relative_error(f64(1.0), f64(1.0, 2.0)), ValueError, r"shapes differ: \(1,\) and \(2,\)"),
        ("exercises.gradient_check", "check", "type", lambda: gc.check({}), TypeError, r"check\(fn\): pass your function fn\(seed\) -> dict, got dict"),
        ("exercises.gradient_check", "check", "shape", lambda: gc.check(gc.starter), AssertionError, "the check ran in torch.float32"),
        ("exercises.gradient_check", "check", "nonfinite", lambda: gc.check(lambda seed: {**gc.solution(seed), "autograd": NAN}), AssertionError, r"seed 0: autograd gives nan for W1\[\d, 2\]: not finite"),
        ("exercises.gradient_check", "main", "type", lambda: gc.main(["--seed", "zero"]), SystemExit, "2"),
        ("exercises.gradient_check", "main", "shape", lambda: gc.main(["--seed"]), SystemExit, "2"),
        ("exercises.hand_trace", "with_torch", "type", lambda: ht.with_torch("one", 2.0, 3.0), ValueError, "could not convert string to float: 'one'"),
        ("exercises.hand_trace", "with_torch", "shape", lambda: ht.with_torch([1.0], 2.0, 3.0), TypeError, "float\\(\\) argument must be a string or a real number, not 'list'"),
        ("exercises.hand_trace", "check", "type", lambda: ht.check("solution"), TypeError, r"check\(trace\): pass your function trace\(x, w1, w2\), got str"),
        ("exercises.hand_trace", "check", "shape", lambda: ht.check(lambda x, w1, w2: {"L": 1.0}), AssertionError, "trace must return a dict with keys"),
        ("exercises.hand_trace", "check", "nonfinite", lambda: ht.check(lambda x, w1, w2: dict.fromkeys(ht.KEYS, NAN)), AssertionError, r"at x=1, w1=2, w2=3: L is nan in your trace \(torch gives 25\)"),
        ("exercises.hand_trace", "main", "type", lambda: ht.main(["--x", "1"]), SystemExit, "2"),
        # finite_diff
        ("finite_diff", "central_difference", "type", lambda: call("finite_diff", "central_difference")(lambda w: w.sum(), [1.0]), TypeError, "x must be a float64 tensor, got list"),
        ("finite_diff", "central_difference", "shape", lambda: call("finite_diff", "central_difference")(lambda w: w.sum(), torch.ones(2)), TypeError, "x must be a float64 tensor, got torch.float32"),
        ("finite_diff", "central_difference", "shape", lambda: call("finite_diff", "central_difference")(lambda w: w.abs().sum(), torch.ones(2, dtype=torch.complex128)), TypeError, r"x must be a real float64 tensor, got torch.complex128: pass its real and imaginary parts as two real inputs"),
        ("finite_diff", "central_difference", "shape", lambda: call("finite_diff", "central_difference")(lambda w: w.sum(), torch.arange(2)), TypeError, r"got torch.int64, which has no gradient: pass x.double\(\)"),
        ("finite_diff", "central_difference", "shape", lambda: call("finite_diff", "central_difference")(lambda w: w, f64(1.0, 2.0)), ValueError, r"f must return a one-element tensor, got \(2,\)"),
        ("finite_diff", "central_difference", "nonfinite", lambda: call("finite_diff", "central_difference")(lambda w: w.sum(), f64(1.0, math.inf)), ValueError, "x holds inf at flat index 1: differentiate at a finite point"),
        ("finite_diff", "check_gradient", "type", lambda: call("finite_diff", "check_gradient")("f", f64(1.0)), TypeError, "f must be a function of x"),
        ("finite_diff", "check_gradient", "shape", lambda: call("finite_diff", "check_gradient")(lambda w: w.sum(), torch.ones(1)), TypeError, "x must be a float64 tensor, got torch.float32"),
        ("finite_diff", "check_gradient", "nonfinite", lambda: call("finite_diff", "check_gradient")(lambda t: t.abs().sqrt().sum(), f64(0.0, 1.0)), AssertionError, r"autograd gives nan at flat index 0 \(1 of 2 elements are not finite\)"),
        ("finite_diff", "check_gradient", "nonfinite", lambda: call("finite_diff", "check_gradient")(lambda t: torch.where(t > 0, t.sqrt(), t).sum(), f64(-1.0, 4.0)), AssertionError, "autograd gives nan at flat index 0"),
        ("finite_diff", "check_gradient", "nonfinite", lambda: call("finite_diff", "check_gradient")(lambda t: (1 / t).sum() * 0 + t.sum(), f64(0.0)), AssertionError, "autograd gives nan at flat index 0"),
        # forward_trace
        ("forward_trace", "trace_rows", "type", lambda: call("forward_trace", "trace_rows")(TRACE_HEADER, "| x | input | 1 | 1 |"), TypeError, "rows must be a list of rows, each a list of the cells' text; got str"),
        ("forward_trace", "trace_rows", "type", lambda: call("forward_trace", "trace_rows")(TRACE_HEADER, [["x", "input", 1.0, 1.0]]), TypeError, r"header and each row must be a list of the cells' text \(str\)"),
        ("forward_trace", "trace_rows", "shape", lambda: call("forward_trace", "trace_rows")(["x", "y"], [["1", "2"]]), AssertionError, r"a trace table has the columns Node \| Computed as \| Value \| Tangent, not x \| y"),
        ("forward_trace", "trace_rows", "shape", lambda: call("forward_trace", "trace_rows")(TRACE_HEADER, [["x", "input", "1"]]), AssertionError, "row 1 has 3 cells, not 4"),
        ("forward_trace", "check_trace", "type", lambda: call("forward_trace", "check_trace")([["x", "input", "1", "1"]]), TypeError, r"for rows of cells, pass trace_rows\(header, rows\)"),
        ("forward_trace", "check_trace", "type", lambda: call("forward_trace", "check_trace")([{"node": "x", "computed": "input", "value": 1.0, "tangent": 1.0}]), TypeError, r"to the cells' text \(str\)"),
        ("forward_trace", "check_trace", "shape", lambda: call("forward_trace", "check_trace")([{"node": "x", "computed": "input", "value": "1"}]), TypeError, r"each row must map \('node', 'computed', 'value', 'tangent'\)"),
        ("forward_trace", "check_trace", "shape", lambda: call("forward_trace", "check_trace")(trace(("x", "input", "1", "1"), ("y", "`torch.stack([x, x])`", "1", "1"))), AssertionError, "y: a trace node must be one number"),
        ("forward_trace", "check_trace", "shape", lambda: call("forward_trace", "check_trace")(trace(("x", "input", "1", "1"), ("y", "`x * 1j`", "0", "0"))), AssertionError, r"y: a trace node must be real, got 1j"),
        ("forward_trace", "check_trace", "nonfinite", lambda: call("forward_trace", "check_trace")(trace(("x", "input", "0", "1"), ("y", "`1 / x`", "0", "0"))), AssertionError, "y: the value shown is 0, but forward mode gives inf"),
        ("forward_trace", "check_trace", "nonfinite", lambda: call("forward_trace", "check_trace")(trace(("x", "input", "0", "1"), ("y", "`torch.log(x) * 0`", "0", "0"))), AssertionError, "y: the value shown is 0, but forward mode gives nan"),
        ("forward_trace", "check_trace", "nonfinite", lambda: call("forward_trace", "check_trace")(trace(("x", "input", "nan", "1"))), AssertionError, "x: the value cell 'nan' is not a plain decimal number"),
        # func_transforms
        ("func_transforms", "per_sample_grads_loop", "type", lambda: call("func_transforms", "per_sample_grads_loop")(mlp3().parameters(), torch.ones(5, 3), torch.zeros(5, dtype=torch.long)), TypeError, r"model must be a torch.nn.Module, got generator: pass the model itself, not model.parameters\(\)"),
        ("func_transforms", "per_sample_grads_loop", "type", lambda: call("func_transforms", "per_sample_grads_loop")(nn.Tanh(), torch.ones(5, 3), torch.zeros(5, dtype=torch.long)), ValueError, "model has no parameters"),
        ("func_transforms", "per_sample_grads_loop", "shape", lambda: call("func_transforms", "per_sample_grads_loop")(mlp3(), torch.ones(5, 3), torch.zeros(5)), ValueError, r"y must be an int64 tensor of shape \(5,\), one class per row of x; got torch.float32 \(5,\)"),
        ("func_transforms", "per_sample_grads_loop", "shape", lambda: call("func_transforms", "per_sample_grads_loop")(mlp3(), torch.ones(0, 3), torch.zeros(0, dtype=torch.long)), ValueError, r"x must be a \(N, D_in\) tensor with N >= 1, got \(0, 3\)"),
        ("func_transforms", "per_sample_grads_loop", "shape", lambda: call("func_transforms", "per_sample_grads_loop")(mlp3(), torch.ones(5, 4), torch.zeros(5, dtype=torch.long)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied"),
        ("func_transforms", "per_sample_grads_loop", "shape", lambda: call("func_transforms", "per_sample_grads_loop")(nn.BatchNorm1d(3), torch.ones(5, 3), torch.zeros(5, dtype=torch.long)), ValueError, r"^model \(BatchNorm1d\) normalises"),
        ("func_transforms", "per_sample_grads_vmap", "shape", lambda: call("func_transforms", "per_sample_grads_vmap")(nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)), torch.ones(5, 3), torch.zeros(5, dtype=torch.long)), ValueError, r"model.1 \(BatchNorm1d\) normalises with the statistics of its batch, so one example's gradient depends on the others: call model.eval\(\) first"),
        ("func_transforms", "per_sample_grads_loop", "shape", lambda: call("func_transforms", "per_sample_grads_loop")(mlp3(), torch.ones(2, 3), torch.tensor([0, -100])), ValueError, r"y holds a negative class index, -100: pass classes 0..C-1"),
        ("guards", "batch_statistics_layer", "type", lambda: call("guards", "batch_statistics_layer")(linear().parameters()), TypeError, "model must be a torch.nn.Module, got generator"),
        ("guards", "require_module", "type", lambda: call("guards", "require_module")([linear()], "net"), TypeError, r"net must be a torch.nn.Module, got list: pass the model itself, not model.parameters\(\) or a list of tensors$"),
        ("func_transforms", "per_sample_grads_vmap", "type", lambda: call("func_transforms", "per_sample_grads_vmap")(mlp3(), [[1.0, 2.0, 3.0]], torch.zeros(1, dtype=torch.long)), ValueError, r"x must be a \(N, D_in\) tensor with N >= 1, got list"),
        ("func_transforms", "per_sample_grads_vmap", "shape", lambda: call("func_transforms", "per_sample_grads_vmap")(mlp3(), torch.ones(3), torch.zeros(1, dtype=torch.long)), ValueError, r"got \(3,\)"),
        ("func_transforms", "per_sample_grads_vmap", "shape", lambda: call("func_transforms", "per_sample_grads_vmap")(mlp3(), torch.ones(5, 3, dtype=torch.float64), torch.zeros(5, dtype=torch.long)), RuntimeError, "expected m1 and m2 to have the same dtype, but got: double != float"),
        ("func_transforms", "measure", "type", lambda: call("func_transforms", "measure")(n="64"), ValueError, "n must be a positive int, got '64'"),
        ("func_transforms", "measure", "type", lambda: call("func_transforms", "measure")(seed="0"), TypeError, "seed must be an int, got '0'"),
        ("func_transforms", "measure", "shape", lambda: call("func_transforms", "measure")(classes=0), ValueError, "classes must be a positive int, got 0"),
        ("func_transforms", "measure", "nonfinite", lambda: call("func_transforms", "measure")(d_in=NAN), ValueError, "d_in must be a positive int, got nan"),
        ("func_transforms", "main", "type", lambda: call("func_transforms", "main")(["--n", "many"]), SystemExit, "2"),
        ("func_transforms", "main", "shape", lambda: call("func_transforms", "main")(["--repeats", "3"]), SystemExit, "2"),
        # function_api
        ("function_api", "Cube", "type", lambda: fa.Cube.apply([1.0]), TypeError, r"unsupported operand type\(s\) for \*\* or pow\(\): 'list' and 'int'"),
        ("function_api", "ScaleInPlace", "type", lambda: fa.ScaleInPlace.apply([1.0], 2.0), TypeError, "x must be a tensor, got list"),
        ("function_api", "ScaleInPlace", "type", lambda: fa.ScaleInPlace.apply(f64(1.0), f64(2.0)), TypeError, r"k must be a Python number, got Tensor; pass k.item\(\) for a 0-d tensor"),
        ("function_api", "ScaleInPlace", "shape", lambda: fa.ScaleInPlace.apply(leaf(1.0), 2.0), RuntimeError, "a leaf Variable that requires grad has been used in an in-place operation"),
        ("function_api", "ScaleInPlace", "shape", lambda: fa.ScaleInPlace.apply(torch.tensor([1]), 2.5), RuntimeError, "result type Float can't be cast to the desired output type Long"),
        ("function_api", "SortWithIndices", "type", lambda: fa.SortWithIndices.apply([3.0, 1.0]), TypeError, "x must be a tensor, got list"),
        ("function_api", "SquareAndCube", "type", lambda: fa.SquareAndCube.apply([1.0]), TypeError, r"unsupported operand type\(s\) for \*\* or pow\(\): 'list' and 'int'"),
        ("function_api", "compatibility", "type", lambda: fa.compatibility(fa.Cube, (f64(1.0),)), TypeError, r"fn must be a Function's apply, e.g. Cube.apply, not the class"),
        ("function_api", "compatibility", "shape", lambda: fa.compatibility(lambda t: t.argmax(), (f64(1.0, 2.0),)), ValueError, "fn returned no floating-point tensor at these inputs: there is nothing to differentiate"),
        ("function_api", "compatibility", "type", lambda: fa.compatibility(fa.Cube.apply, f64(1.0, 2.0)), TypeError, r"inputs must be a tuple of fn's arguments, e.g. \(x,\), got Tensor"),
        ("function_api", "compatibility", "type", lambda: fa.compatibility(fa.Cube.apply, (f64(1.0),), prepare=3), TypeError, "prepare must be a function of a tensor or None, got int"),
        ("function_api", "compatibility", "shape", lambda: fa.compatibility(fa.Cube.apply, (torch.ones(2),)), TypeError, r"inputs\[0\] must be a float64 tensor"),
        ("function_api", "compatibility", "shape", lambda: fa.compatibility(fa.Cube.apply, (f64(),)), ValueError, r"inputs\[0\] must be non-empty and finite"),
        ("function_api", "compatibility", "nonfinite", lambda: fa.compatibility(fa.Cube.apply, (f64(NAN, 2.0),)), ValueError, r"inputs\[0\] must be non-empty and finite: NaN or inf fails every check"),
        ("function_api", "compatibility", "nonfinite", lambda: fa.compatibility(fa.Cube.apply, (f64(1.0, math.inf),)), ValueError, r"inputs\[0\] must be non-empty and finite"),
        # grad_check
        ("grad_check", "report_dead_grads", "type", lambda: call("grad_check", "report_dead_grads")(linear().parameters()), TypeError, r"model must be a torch.nn.Module, got generator: pass the model itself, not model.parameters\(\)"),
        ("grad_check", "report_dead_grads", "shape", lambda: call("grad_check", "report_dead_grads")(nn.ReLU()), ValueError, "the model has no parameters"),
        # gradient_health
        ("gradient_health", "GradientFlow", "type", lambda: call("gradient_health", "GradientFlow")(linear().parameters()), TypeError, r"model must be a torch.nn.Module, got generator: pass the model itself, not model.parameters\(\)"),
        ("gradient_health", "GradientFlow", "shape", lambda: call("gradient_health", "GradientFlow")(nn.ReLU()), ValueError, "model has no parameters: there is no layer to inspect"),
        ("gradient_health", "GradientFlow", "shape", lambda: call("gradient_health", "GradientFlow")(nn.LSTM(2, 2)), ValueError, r"module\(s\) '' have parameters but none named weight"),
        ("gradient_health", "GradientFlow", "shape", lambda: call("gradient_health", "GradientFlow")(frozen()), ValueError, r"the weight of layer '' \(Linear\) does not require grad: unfreeze it"),
        ("gradient_health", "deep_mlp", "type", lambda: call("gradient_health", "deep_mlp")(depth="8"), ValueError, "depth and width must be ints >= 1, got '8' and 32"),
        ("gradient_health", "deep_mlp", "type", lambda: call("gradient_health", "deep_mlp")(depth=2, activation=nn.ReLU()), TypeError, r"activation must be a module class such as nn.ReLU \(not nn.ReLU\(\)\), got ReLU\(\)"),
        ("gradient_health", "deep_mlp", "shape", lambda: call("gradient_health", "deep_mlp")(depth=0), ValueError, "depth and width must be ints >= 1, got 0 and 32"),
        ("gradient_health", "deep_mlp", "nonfinite", lambda: call("gradient_health", "deep_mlp")(depth=2, init_gain=NAN), ValueError, "init_gain must be None or a positive finite number, got nan"),
        ("gradient_health", "deep_mlp", "nonfinite", lambda: call("gradient_health", "deep_mlp")(width=math.inf), ValueError, "depth and width must be ints >= 1, got 8 and inf"),
        ("gradient_health", "inspect", "type", lambda: call("gradient_health", "inspect")(linear().parameters(), torch.ones(1, 2)), TypeError, r"inspect\(model, x\) takes an nn.Module and an input tensor \(N, width\), got generator and Tensor"),
        ("gradient_health", "inspect", "type", lambda: call("gradient_health", "inspect")(linear(), [[1.0, 2.0]]), TypeError, "got Linear and list"),
        ("gradient_health", "inspect", "shape", lambda: call("gradient_health", "inspect")(linear(), torch.ones(1, 3)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied"),
        ("gradient_health", "table", "type", lambda: call("gradient_health", "table")([1.0]), TypeError, r"norms must be the dict GradientFlow records \(flow.norms\), got list"),
        ("gradient_health", "table", "type", lambda: call("gradient_health", "table")({"0": 1.0}), TypeError, r"norms\['0'\] is a float, not a dict"),
        ("gradient_health", "table", "shape", lambda: call("gradient_health", "table")({}), ValueError, "no norms recorded"),
        ("gradient_health", "xychart", "type", lambda: call("gradient_health", "xychart")([1.0], "t"), ValueError, r"norms must be the non-empty dict GradientFlow records"),
        ("gradient_health", "xychart", "type", lambda: call("gradient_health", "xychart")({"0": {"out": 1.0, "weight": 1.0}}, None), ValueError, "title must be one line of text without double quotes, got None"),
        ("gradient_health", "xychart", "shape", lambda: call("gradient_health", "xychart")({"0": {"out": 1.0, "weight": 1.0}}, "t", key="bias"), ValueError, "key must be 'out' or 'weight', got 'bias'"),
        ("gradient_health", "xychart", "shape", lambda: call("gradient_health", "xychart")({}, "t"), ValueError, "norms must be the non-empty dict"),
        ("gradient_health", "xychart", "nonfinite", lambda: call("gradient_health", "xychart")({"0": {"out": NAN, "weight": 1.0}}, "t"), ValueError, "layer '0': norm nan has no finite log10; use table"),
        ("gradient_health", "xychart", "nonfinite", lambda: call("gradient_health", "xychart")({"0": {"out": 1.0, "weight": math.inf}}, "t", key="weight"), ValueError, "norm inf has no finite log10"),
        # guards
        ("guards", "assert_no_graph", "type", lambda: call("guards", "assert_no_graph")(iter([graph_loss()]), "losses"), TypeError, r"losses is an iterator: pass list\(losses\)"),
        ("guards", "assert_no_graph", "shape", lambda: call("guards", "assert_no_graph")({"train": [1.0, graph_loss()]}, "logs"), AssertionError, r"logs\['train'\]\[1\] requires grad \(grad_fn=SumBackward0\)"),
        ("guards", "as_log_value", "type", lambda: call("guards", "as_log_value")(0.5), TypeError, r"loss is already a number \(float\): log it as it is, or float\(loss\)"),
        ("guards", "as_log_value", "type", lambda: call("guards", "as_log_value")(np.float32(1.5)), TypeError, r"loss is already a number \(float32\): log it"),
        ("guards", "as_log_value", "shape", lambda: call("guards", "as_log_value")(np.ones(3)), TypeError, r"expected a one-element tensor, got ndarray: reduce it first"),
        ("guards", "as_log_value", "shape", lambda: call("guards", "as_log_value")(torch.ones(3)), TypeError, r"expected a one-element tensor, got \(3,\): reduce it first"),
        ("guards", "assert_finite", "type", lambda: call("guards", "assert_finite")(torch.ones(2, requires_grad=True).grad, "w.grad"), TypeError, r"w.grad is None: if it is a .grad, backward has not run or did not reach that tensor"),
        ("guards", "assert_finite", "type", lambda: call("guards", "assert_finite")([1.0], "x"), TypeError, r"x: expected a tensor, got list: pass a tensor \(for a model's gradients, assert_finite_grads\(model\)\)"),
        ("guards", "assert_finite", "nonfinite", lambda: call("guards", "assert_finite")(torch.tensor([[1.0, 2.0], [math.inf, NAN]]), "h"), AssertionError, r"h has 1 NaN and 1 inf of 4 values, the first at index \(1, 0\)"),
        ("guards", "assert_finite_grads", "type", lambda: call("guards", "assert_finite_grads")(linear().parameters()), TypeError, r"module must be a torch.nn.Module, got generator: pass the model itself, not model.parameters\(\)"),
        ("guards", "assert_finite_grads", "shape", lambda: call("guards", "assert_finite_grads")(frozen()), AssertionError, "no parameter with requires_grad=True"),
        ("guards", "assert_finite_grads", "nonfinite", lambda: call("guards", "assert_finite_grads")(backward_with(linear(), NAN)), AssertionError, r"weight.grad has 2 NaN and 0 inf of 2 values, the first at index \(0, 0\)"),
        ("guards", "assert_no_stale_grads", "type", lambda: call("guards", "assert_no_stale_grads")([p for p in linear().parameters()]), TypeError, "module must be a torch.nn.Module, got list"),
        ("guards", "assert_no_stale_grads", "shape", lambda: call("guards", "assert_no_stale_grads")(frozen()), AssertionError, "no parameter with requires_grad=True"),
        ("guards", "assert_no_stale_grads", "nonfinite", lambda: call("guards", "assert_no_stale_grads")(backward_with(linear(), NAN)), AssertionError, "stale gradients in weight, bias"),
        ("guards", "assert_grads_flow", "type", lambda: call("guards", "assert_grads_flow")(torch.ones(2)), TypeError, "module must be a torch.nn.Module, got Tensor"),
        ("guards", "assert_grads_flow", "shape", lambda: call("guards", "assert_grads_flow")(frozen()), AssertionError, "no parameter with requires_grad=True"),
        ("guards", "snapshot", "type", lambda: call("guards", "snapshot")({"w": torch.ones(1)}), TypeError, "module must be a torch.nn.Module, got dict"),
        ("guards", "snapshot", "shape", lambda: call("guards", "snapshot")(frozen()), AssertionError, "no parameter with requires_grad=True"),
        ("guards", "assert_params_changed", "type", lambda: call("guards", "assert_params_changed")(linear(), list(linear().parameters())), TypeError, r"before must be the dict that snapshot\(module\) returned"),
        ("guards", "assert_params_changed", "shape", lambda: call("guards", "assert_params_changed")(linear(), {"w": torch.ones(1)}), ValueError, "before was taken from another module"),
        ("guards", "assert_params_changed", "nonfinite", _params_made_nan, AssertionError, "the step left NaN or inf in weight"),
        # hand_trace
        ("hand_trace", "gradients", "type", lambda: call("hand_trace", "gradients")(1.0, w=leaf(1.0)), ValueError, "loss must be a scalar tensor, got float"),
        ("hand_trace", "gradients", "shape", lambda: call("hand_trace", "gradients")(leaf(1.0, 2.0) * 2, w=leaf(1.0)), ValueError, r"loss must be a scalar tensor, got \(2,\)"),
        ("hand_trace", "gradients", "type", lambda: call("hand_trace", "gradients")(graph_loss(), w=2.0), TypeError, "w must be a tensor of loss's graph, got float"),
        ("hand_trace", "gradients", "type", lambda: call("hand_trace", "gradients")(graph_loss(), n=torch.tensor(2)), TypeError, r"n is torch.int64: only floating-point or complex tensors can require grad; build the loss from n.float\(\)"),
        # hvp
        ("hvp", "hvp_double_backward", "type", lambda: call("hvp", "hvp_double_backward")("f", f64(1.0), f64(1.0)), TypeError, "f must be a function of one tensor returning a scalar, got str"),
        ("hvp", "hvp_double_backward", "type", lambda: call("hvp", "hvp_double_backward")(lambda t: (t ** 3).sum(), [1.0], f64(1.0)), TypeError, r"x must be a floating-point tensor, e.g. torch.tensor\(\[1.0, 2.0\]\)"),
        ("hvp", "hvp_double_backward", "type", lambda: call("hvp", "hvp_double_backward")(lambda t: 1.0, f64(1.0), f64(1.0)), ValueError, "f must return a 0-d tensor, got float"),
        ("hvp", "hvp_double_backward", "shape", lambda: call("hvp", "hvp_double_backward")(lambda t: (t ** 3).sum(), f64(1.0, 2.0), f64(1.0)), ValueError, r"v must be a tensor of x's shape \(2,\), got \(1,\)"),
        ("hvp", "hvp_double_backward", "shape", lambda: call("hvp", "hvp_double_backward")(lambda t: t ** 3, f64(1.0, 2.0), f64(1.0, 1.0)), ValueError, r"f must return a 0-d tensor, got \(2,\): reduce it, e.g. .sum\(\)"),
        ("hvp", "hvp_three_ways", "shape", lambda: call("hvp", "hvp_three_ways")(lambda t: (t ** 3).sum(0, keepdim=True), f64(1.0, 2.0), f64(1.0, 1.0)), ValueError, r"f must return a 0-d tensor, got \(1,\): reduce it"),
        ("hvp", "hvp_three_ways", "type", lambda: call("hvp", "hvp_three_ways")(lambda t: (t ** 3).sum(), torch.tensor([1, 2]), torch.tensor([1, 1])), TypeError, "x must be a floating-point tensor"),
        ("hvp", "hvp_three_ways", "shape", lambda: call("hvp", "hvp_three_ways")(lambda t: (t ** 3).sum(), f64(1.0, 2.0), [1.0, 1.0]), ValueError, r"v must be a tensor of x's shape \(2,\), got list"),
        ("hvp", "gradient_penalty", "type", lambda: call("hvp", "gradient_penalty")(linear(), [[1.0, 2.0]], torch.ones(1, 2)), TypeError, r"real must be a floating-point tensor \(N, D\), got list"),
        ("hvp", "gradient_penalty", "type", lambda: call("hvp", "gradient_penalty")("critic", torch.ones(1, 2), torch.ones(1, 2)), TypeError, r"critic must be a model \(N, D\) -> \(N, 1\), a torch.nn.Module, got str"),
        ("hvp", "gradient_penalty", "shape", lambda: call("hvp", "gradient_penalty")(linear(), torch.ones(4, 2), torch.ones(2, 2)), ValueError, r"real and fake must both be \(N, D\), got \(4, 2\) and \(2, 2\)"),
        ("hvp", "gradient_penalty", "shape", lambda: call("hvp", "gradient_penalty")(linear(), torch.ones(4, 2, dtype=torch.long), torch.ones(4, 2)), TypeError, "real must be a floating-point tensor .* got torch.int64"),
        ("hvp", "gradient_penalty", "nonfinite", lambda: call("hvp", "gradient_penalty")(linear(), torch.ones(4, 2), torch.full((4, 2), NAN)), ValueError, "fake holds NaN or inf: pass finite samples"),
        # jacobian_cost
        ("jacobian_cost", "jacobian_by_vjps", "type", lambda: call("jacobian_cost", "jacobian_by_vjps")(torch.sin, [1.0]), ValueError, r"x must be a 1-D floating-point tensor \(n,\), got list: pass torch.as_tensor\(x, dtype=torch.float64\).flatten\(\)"),
        ("jacobian_cost", "jacobian_by_vjps", "shape", lambda: call("jacobian_cost", "jacobian_by_vjps")(torch.sin, torch.ones(2, 2)), ValueError, r"x must be a 1-D floating-point tensor \(n,\), got torch.float32 tensor of shape \(2, 2\): flatten it first"),
        ("jacobian_cost", "jacobian_by_jvps", "type", lambda: call("jacobian_cost", "jacobian_by_jvps")("sin", torch.ones(2)), TypeError, "f must be a function of one tensor, got str"),
        ("jacobian_cost", "jacobian_by_vjps", "type", lambda: call("jacobian_cost", "jacobian_by_vjps")(lambda t: (t.sin(), t.cos()), torch.ones(2)), ValueError, r"f returned a tuple: return one tensor \(m,\), e.g. torch.cat"),
        ("jacobian_cost", "jacobian_by_vjps", "type", lambda: call("jacobian_cost", "jacobian_by_vjps")(lambda t: t.sum().item(), torch.ones(2)), ValueError, r"f returned a float, not a tensor: f's output does not depend on x through differentiable operations: f leaves autograd \(.detach\(\), .item\(\)"),
        ("jacobian_cost", "jacobian_by_jvps", "shape", lambda: call("jacobian_cost", "jacobian_by_jvps")(torch.sin, torch.arange(3)), ValueError, r"got torch.int64 tensor of shape \(3,\): pass x.double\(\)"),
        ("jacobian_cost", "jacobian_by_jvps", "shape", lambda: call("jacobian_cost", "jacobian_by_jvps")(torch.sin, torch.ones(2, dtype=torch.complex64)), ValueError, r"got torch.complex64 tensor of shape \(2,\): pass x.real or x.abs\(\) as a float tensor"),
        # optim_in_backward
        ("optim_in_backward", "step_in_backward", "type", lambda: call("optim_in_backward", "step_in_backward")(linear(), sgd(linear().parameters())), TypeError, r"make_optimizer must be a function of a parameter list, e.g. lambda ps: torch.optim.SGD\(ps, lr=0.1\); got SGD"),
        ("optim_in_backward", "step_in_backward", "type", lambda: call("optim_in_backward", "step_in_backward")(linear().parameters(), sgd), TypeError, r"model must be a torch.nn.Module, got generator: pass the model itself, not model.parameters\(\)"),
        ("optim_in_backward", "step_in_backward", "shape", lambda: call("optim_in_backward", "step_in_backward")(frozen(), sgd), ValueError, "model has no parameter that requires grad: pass a module with one"),
        ("optim_in_backward", "step_in_backward", "shape", lambda: call("optim_in_backward", "step_in_backward")(linear(), lambda ps: None), TypeError, "make_optimizer must return a torch.optim.Optimizer, got NoneType"),
        ("optim_in_backward", "step_in_backward", "shape", lambda: call("optim_in_backward", "step_in_backward")(linear(), lambda ps: torch.optim.SGD(linear().parameters(), lr=0.1)), ValueError, r"make_optimizer must build its optimizer over the list it is given, e.g. lambda ps: torch.optim.SGD\(ps, lr=0.1\); given one parameter, it built one over 2 tensor\(s\)"),
        ("optim_in_backward", "step_in_backward", "nonfinite", lambda: call("optim_in_backward", "step_in_backward")(linear(), lambda ps: torch.optim.SGD(ps, lr=NAN)), ValueError, "the optimizer's lr is nan: every step would make the parameters NaN"),
        ("optim_in_backward", "step_in_backward", "shape", lambda: call("optim_in_backward", "step_in_backward")(linear(), lambda ps: torch.optim.LBFGS(ps)), ValueError, "LBFGS.step needs a closure that computes the loss again, which a hook inside backward cannot run: use an optimizer whose step needs none, such as SGD or AdamW"),
        ("optim_in_backward", "step_in_backward", "type", lambda: call("optim_in_backward", "step_in_backward")(linear(), sgd, step_if=True), TypeError, "step_if must be a function of no arguments that returns True on the micro-batch that should step, got bool"),
        ("optim_in_backward", "GradBytes", "type", lambda: call("optim_in_backward", "GradBytes")(linear().parameters()), TypeError, r"model must be a torch.nn.Module, got generator: pass the model itself, not model.parameters\(\) or a list of tensors \(loose tensors: an nn.ParameterList of them\)"),
        ("optim_in_backward", "GradBytes", "shape", lambda: call("optim_in_backward", "GradBytes")(frozen()), ValueError, "model has no parameter that requires grad: pass a module with one"),
        # precision
        ("precision", "tolerance", "type", lambda: call("precision", "tolerance")(torch.float16, "8"), ValueError, "n is the length of the op's longest reduction, a positive int; got '8'"),
        ("precision", "tolerance", "shape", lambda: call("precision", "tolerance")(torch.float64, 8), ValueError, "dtype must be one of"),
        ("precision", "tolerance", "nonfinite", lambda: call("precision", "tolerance")(torch.float16, math.inf), ValueError, "a positive int; got inf"),
        ("precision", "relative_error", "type", lambda: call("precision", "relative_error")(torch.exp, [1.0], dtype=torch.float16), TypeError, "pass the inputs as float64 tensors"),
        ("precision", "relative_error", "shape", lambda: call("precision", "relative_error")(torch.exp, torch.ones(2), dtype=torch.float16), TypeError, "pass the inputs as float64 tensors"),
        ("precision", "relative_error", "shape", lambda: call("precision", "relative_error")(torch.exp, f64(), dtype=torch.float16), ValueError, "an input is empty: pass at least one element"),
        ("precision", "relative_error", "type", lambda: call("precision", "relative_error")(lambda t: (t, t), f64(1.0), dtype=torch.float16), TypeError, "fn and reference must return one tensor; got tuple and tuple"),
        ("precision", "assert_close_to_reference", "type", lambda: call("precision", "assert_close_to_reference")("exp", f64(1.0), dtype=torch.float16, n=1), TypeError, "fn must be callable; got str"),
        ("precision", "assert_close_to_reference", "shape", lambda: call("precision", "assert_close_to_reference")(torch.exp, f64(1.0), dtype=torch.float64, n=1), ValueError, "dtype must be one of"),
        ("precision", "assert_close_to_reference", "nonfinite", lambda: call("precision", "assert_close_to_reference")(torch.exp, f64(12.0), dtype=torch.float16, n=1), AssertionError, "relative error inf"),
        # recipes
        ("recipes", "accumulate_gradients", "shape", lambda: call("recipes", "accumulate_gradients")(nn.Tanh(), nn.functional.mse_loss, torch.ones(4, 2), torch.ones(4, 2), 2), ValueError, "model has no parameters: there is nothing to accumulate gradients into"),
        ("recipes", "accumulate_gradients", "type", lambda: call("recipes", "accumulate_gradients")(linear().parameters(), nn.functional.mse_loss, torch.ones(4, 2), torch.ones(4, 1), 2), TypeError, "model must be a torch.nn.Module, got generator: pass the model itself"),
        ("recipes", "accumulate_gradients", "type", lambda: call("recipes", "accumulate_gradients")(linear(), nn.functional.mse_loss, [torch.ones(4, 2)], torch.ones(4, 1), 2), TypeError, "inputs and targets must be tensors"),
        ("recipes", "accumulate_gradients", "shape", lambda: call("recipes", "accumulate_gradients")(linear(), nn.functional.mse_loss, torch.ones(4, 2), torch.ones(4, 1), 3), ValueError, "N = 4 is not divisible by k = 3"),
        ("recipes", "accumulate_gradients", "shape", lambda: call("recipes", "accumulate_gradients")(linear(), nn.functional.mse_loss, torch.ones(4, 2), torch.ones(3, 1), 2), ValueError, "inputs has 4 rows and targets 3"),
        ("recipes", "accumulate_gradients", "shape", lambda: call("recipes", "accumulate_gradients")(linear(), nn.functional.mse_loss, torch.ones(4, 2), torch.tensor(1.0), 2), ValueError, "targets is 0-d: pass one target per row of inputs"),
        ("recipes", "accumulate_gradients", "type", lambda: call("recipes", "accumulate_gradients")(linear(), nn.functional.mse_loss, torch.ones(4, 2), torch.ones(4, 1), 2.0), ValueError, r"got 2\.0: pass a Python int$"),
        # saved_bytes
        ("saved_bytes", "track_saved", "type", lambda: ctx(call("saved_bytes", "track_saved")(exclude=linear())), TypeError, r"exclude takes an iterable of tensors, got Linear: pass model.parameters\(\)"),
        ("saved_bytes", "track_saved", "shape", lambda: ctx(call("saved_bytes", "track_saved")(exclude=[1.0])), TypeError, "exclude must hold tensors"),
        ("saved_bytes", "track_saved", "type", lambda: ctx(call("saved_bytes", "track_saved")(exclude=3)), TypeError, r"exclude takes an iterable of tensors, got int: pass model.parameters\(\)"),
        ("saved_bytes", "track_saved", "shape", lambda: ctx(call("saved_bytes", "track_saved")(exclude=(lambda g: (list(g), g)[1])(linear().parameters()))), ValueError, r"exclude yielded no tensor: .* pass a list, list\(model.parameters\(\)\), which may be empty"),
        ("saved_bytes", "saved_bytes", "type", lambda: call("saved_bytes", "saved_bytes")(3, torch.ones(2)), TypeError, "fn must be callable"),
        ("saved_bytes", "saved_bytes", "shape", lambda: call("saved_bytes", "saved_bytes")(torch.exp, torch.ones(2, device="meta", requires_grad=True)), ValueError, "a saved tensor is on the meta device, which allocates no memory to count"),
        ("saved_bytes", "saved_bytes", "type", lambda: call("saved_bytes", "saved_bytes")(nn.LSTM(2, 3), torch.ones(4, 1, 2)), TypeError, r"fn returned a tuple, not a tensor: measure one output, e.g. lambda x: model\(x\)\[0\]"),
        ("saved_bytes", "saved_bytes", "shape", lambda: call("saved_bytes", "saved_bytes")(lambda w: torch.sparse.mm(torch.eye(2).to_sparse(), w), torch.ones(2, 1, requires_grad=True)), ValueError, r"layout torch.sparse_coo, which has no single storage to count: .*\.to_dense\(\)"),
        ("saved_bytes", "saved_bytes", "shape", lambda: call("saved_bytes", "saved_bytes")(torch.exp, torch.ones(2)), ValueError, "fn returned no tensor that requires grad"),
        # scalar_engine
        ("scalar_engine", "Value", "type", lambda: se.Value("1"), TypeError, "Value holds an int or float, got str"),
        ("scalar_engine", "Value", "shape", lambda: se.Value(np.ones(2)), TypeError, "Value holds an int or float, got ndarray"),
        ("scalar_engine", "as_value", "type", lambda: se.as_value(None), TypeError, "a Value combines only with Values, ints and floats, got NoneType"),
        ("scalar_engine", "as_value", "shape", lambda: se.as_value([1.0]), TypeError, "got list"),
        ("scalar_engine", "add", "type", lambda: se.Value(1.0) + "2", TypeError, "a Value combines only with Values, ints and floats, got str"),
        ("scalar_engine", "add", "shape", lambda: se.Value(1.0) + torch.ones(2), TypeError, "got Tensor"),
        ("scalar_engine", "mul", "type", lambda: se.Value(1.0) * None, TypeError, "got NoneType"),
        ("scalar_engine", "mul", "shape", lambda: se.Value(1.0) * [2.0], TypeError, "got list"),
        ("scalar_engine", "div", "type", lambda: se.Value(1.0) / "2", TypeError, "a Value combines only with Values, ints and floats, got str"),
        ("scalar_engine", "div", "shape", lambda: se.Value(1.0) / torch.ones(2), TypeError, "got Tensor"),
        ("scalar_engine", "power", "type", lambda: se.Value(2.0) ** se.Value(3.0), TypeError, "only a constant int or float exponent"),
        ("scalar_engine", "power", "shape", lambda: se.Value(-8.0) ** (1 / 3), ValueError, "is not a real number: the base must be >= 0"),
        ("scalar_engine", "rpower", "type", lambda: 2 ** se.Value(3.0), TypeError, "for a Value exponent e and a base > 0 write"),
        ("scalar_engine", "log", "shape", lambda: se.Value(-1.0).log(), ValueError, r"log needs a value >= 0 \(log 0 = -inf\), got -1"),
        ("scalar_engine", "backward", "type", lambda: se.Value(1.0).backward(accumulate="yes"), TypeError, r"accumulate must be True \(\+=, correct\) or False"),
        ("scalar_engine", "to_mermaid", "type", lambda: se.Value(1.0).to_mermaid(direction=None), ValueError, "direction must be one of LR, RL, TB, BT"),
        # scalar_mlp
        ("scalar_mlp", "MLP", "type", lambda: call("scalar_mlp", "MLP")((2, "3", 1)), ValueError, "sizes must be two or more positive ints"),
        ("scalar_mlp", "MLP", "shape", lambda: call("scalar_mlp", "MLP")((2,)), ValueError, "sizes must be two or more positive ints"),
        ("scalar_mlp", "MLP", "type", lambda: call("scalar_mlp", "MLP")(3), TypeError, r"sizes must be a tuple of layer sizes, e.g. \(2, 3, 1\); got 3"),
        ("scalar_mlp", "train", "type", lambda: call("scalar_mlp", "train")(call("scalar_mlp", "MLP")((1, 1)), [[1.0]], [1.0], 1, 0.1), TypeError, r"each input and each target is a sequence of numbers, e.g. X=\[\[0.5\] \* 1\], T=\[\[1.0\] \* 1\]"),
        ("scalar_mlp", "to_torch", "type", lambda: call("scalar_mlp", "to_torch")(linear()), TypeError, "expected an MLP, got Linear"),
        ("scalar_mlp", "train", "type", lambda: call("scalar_mlp", "train")(call("scalar_mlp", "MLP")((1, 1)), [[1.0]], [[1.0]], "3", 0.1), ValueError, "steps must be an int >= 0, got '3'"),
        ("scalar_mlp", "train", "shape", lambda: call("scalar_mlp", "train")(call("scalar_mlp", "MLP")((2, 1)), [[1.0]], [[1.0]], 1, 0.1), ValueError, "each input needs 2 numbers"),
        ("scalar_mlp", "train", "nonfinite", lambda: call("scalar_mlp", "train")(call("scalar_mlp", "MLP")((1, 1)), [[1.0]], [[1.0]], 1, NAN), ValueError, "lr must be a positive finite number, got nan"),
        ("scalar_mlp", "train_torch", "type", lambda: call("scalar_mlp", "train_torch")(call("scalar_mlp", "MLP")((1, 1)), [[1.0]], [[1.0]], 1, 0.1), TypeError, r"params must be the list of \(W, b\) pairs that to_torch\(mlp\) returns, got MLP"),
        ("scalar_mlp", "train_torch", "shape", lambda: call("scalar_mlp", "train_torch")(call("scalar_mlp", "to_torch")(call("scalar_mlp", "MLP")((2, 1))), [[1.0]], [[1.0]], 1, 0.1), ValueError, "each input needs 2 numbers"),
        ("scalar_mlp", "train_torch", "nonfinite", lambda: call("scalar_mlp", "train_torch")(call("scalar_mlp", "to_torch")(call("scalar_mlp", "MLP")((1, 1))), [[1.0]], [[1.0]], 1, NAN), ValueError, "lr must be a positive finite number, got nan"),
        # shapes
        ("shapes", "expect_shape", "type", lambda: call("shapes", "expect_shape")([1.0], "N", "x"), TypeError, "x: expected a torch.Tensor, got list"),
        ("shapes", "expect_shape", "shape", lambda: call("shapes", "expect_shape")(torch.ones(3, 2), "N D", "x", N=4), AssertionError, r"x: expected \(N, D\) with N=4, got shape \(3, 2\): dimension 0 \(N\) is 3, expected 4"),
        # tensor_engine
        ("tensor_engine", "Tensor", "type", lambda: T(None), TypeError, "Tensor data is None: pass a number or a"),
        ("tensor_engine", "Tensor", "type", lambda: T("1.0, 2.0"), TypeError, "got str"),
        ("tensor_engine", "Tensor", "type", lambda: T([1.0], requires_grad="no"), TypeError, "requires_grad must be True or False, got 'no'"),
        ("tensor_engine", "Tensor", "shape", lambda: T([[1.0, 2.0], [3.0]]), TypeError, "rectangular"),
        ("tensor_engine", "Tensor", "type", lambda: T("3"), TypeError, "must be real numbers .*got str: '3'"),
        ("tensor_engine", "Tensor", "type", lambda: T(np.array([1 + 2j])), TypeError, r"pass the real part, np.real\(x\)"),
        ("tensor_engine", "Tensor", "type", lambda: (T([1.0], requires_grad=True) * 2).backward(T([1.0])), TypeError, "the seed gradient must be real numbers.*pass its .data"),
        ("tensor_engine", "tensor", "type", lambda: te.tensor({"a": 1}), TypeError, "got dict"),
        ("tensor_engine", "tensor", "shape", lambda: te.tensor([[1.0], [2.0, 3.0]]), TypeError, "rectangular"),
        ("tensor_engine", "broadcast_shape", "type", lambda: te.broadcast_shape("N", (2,)), TypeError, "'str' object cannot be interpreted as an integer"),
        ("tensor_engine", "broadcast_shape", "shape", lambda: te.broadcast_shape((2, 3), (2,)), ValueError, r"shapes \(2, 3\) and \(2,\) do not broadcast"),
        ("tensor_engine", "unbroadcast", "type", lambda: te.unbroadcast("g", (2,)), ValueError, "could not convert string to float"),
        ("tensor_engine", "unbroadcast", "type", lambda: te.unbroadcast(np.ones(3), 3), TypeError, r"shape must be a tuple of ints, an input's .shape; got int"),
        ("tensor_engine", "unbroadcast", "shape", lambda: te.unbroadcast(np.ones(3), (2, 3)), ValueError, r"a gradient of shape \(3,\) cannot come from broadcasting \(2, 3\)"),
        ("tensor_engine", "add", "type", lambda: T([1.0]) + None, TypeError, "Tensor data is None"),
        ("tensor_engine", "add", "shape", lambda: T(np.ones((2, 3))) + T(np.ones(2)), ValueError, r"shapes \(2, 3\) and \(2,\) do not broadcast"),
        ("tensor_engine", "mul", "type", lambda: T([1.0]) * "x", TypeError, "got str"),
        ("tensor_engine", "mul", "shape", lambda: T(np.ones(3)) * T(np.ones(2)), ValueError, "do not broadcast"),
        ("tensor_engine", "div", "type", lambda: T([1.0]) / None, TypeError, "Tensor data is None"),
        ("tensor_engine", "div", "shape", lambda: T(np.ones((2, 3))) / T(np.ones(2)), ValueError, r"shapes \(2, 3\) and \(2,\) do not broadcast"),
        ("tensor_engine", "power", "type", lambda: T([1.0]) ** T([2.0]), TypeError, "only a constant exponent is supported"),
        ("tensor_engine", "matmul", "type", lambda: T(np.ones((2, 2))) @ "W", TypeError, "got str"),
        ("tensor_engine", "matmul", "shape", lambda: T(np.ones((2, 3))) @ T(np.ones((2, 3))), ValueError, r"matmul needs \(N, D\) @ \(D, M\); got \(2, 3\) @ \(2, 3\)"),
        ("tensor_engine", "sum_", "type", lambda: T(np.ones((2, 3))).sum(axis=1.0), TypeError, "axis must be None, an int or a tuple of ints, got 1.0"),
        ("tensor_engine", "sum_", "type", lambda: T(np.ones((2, 3))).sum(axis=True), TypeError, "axis must be None, an int or a tuple of ints, got True"),
        ("tensor_engine", "sum_", "shape", lambda: T(np.ones((2, 3))).sum(axis=2), ValueError, "axis 2 is out of range for a tensor with 2 dimensions"),
        ("tensor_engine", "mean", "type", lambda: T(np.ones((2, 3))).mean(axis="rows"), TypeError, "axis must be None, an int or a tuple of ints"),
        ("tensor_engine", "mean", "shape", lambda: T(np.ones((2, 3))).mean(axis=(0, -2)), ValueError, "names a dimension twice"),
        ("tensor_engine", "reshape", "type", lambda: T(np.ones(6)).reshape("2, 3"), TypeError, "'str' object cannot be interpreted as an integer"),
        ("tensor_engine", "reshape", "shape", lambda: T(np.ones(6)).reshape(4), ValueError, r"cannot reshape array of size 6 into shape \(4,\)"),
        ("tensor_engine", "transpose", "type", lambda: T(np.ones((2, 3))).transpose((0.0, 1.0)), ValueError, r"must be ints in \[-2, 2\)"),
        ("tensor_engine", "transpose", "shape", lambda: T(np.ones((2, 3))).transpose((0, -2)), ValueError, "must be a permutation of the 2 dimensions"),
        ("tensor_engine", "logsumexp", "type", lambda: T(np.ones((2, 3))).logsumexp(axis=None), TypeError, "logsumexp reduces over one axis: pass an int"),
        ("tensor_engine", "logsumexp", "shape", lambda: T(np.ones((2, 3))).logsumexp(axis=-3), ValueError, "axis -3 is out of range"),
        ("tensor_engine", "cross_entropy", "type", lambda: te.cross_entropy(np.ones((2, 3)), [0, 1]), TypeError, r"logits must be a Tensor \(N, C\), got ndarray: wrap it, Tensor\(x\)"),
        ("tensor_engine", "cross_entropy", "shape", lambda: te.cross_entropy(T(np.ones((2, 3))), [0.0, 1.0]), ValueError, r"targets must be integers of shape \(2,\); got float64"),
        ("tensor_engine", "cross_entropy", "shape", lambda: te.cross_entropy(T(np.ones((2, 3))), [0, 3]), ValueError, r"targets must lie in \[0, 3\)"),
        ("tensor_engine", "Linear", "type", lambda: te.Linear(2.0, 3, np.random.default_rng(0)), TypeError, "Linear sizes must be ints, got 2.0, 3"),
        ("tensor_engine", "Linear", "shape", lambda: te.Linear(0, 3, np.random.default_rng(0)), ValueError, "Linear needs positive sizes"),
        ("tensor_engine", "MLP", "type", lambda: te.MLP(32), ValueError, "sizes lists the input size and at least one layer size"),
        ("tensor_engine", "MLP", "shape", lambda: te.MLP([32]), ValueError, "sizes lists the input size and at least one layer size"),
        ("tensor_engine", "SGD", "type", lambda: te.SGD(te.MLP([2, 1]), 0.1), TypeError, r"SGD takes the parameters, not the model: pass model.parameters\(\)"),
        ("tensor_engine", "SGD", "shape", lambda: te.SGD([], 0.1), ValueError, "SGD needs a non-empty list of Tensors"),
        ("tensor_engine", "SGD", "type", lambda: te.SGD(T([1.0], requires_grad=True), 0.1), TypeError, r"not one Tensor: pass \[x\]"),
        ("tensor_engine", "SGD", "nonfinite", lambda: te.SGD(te.MLP([2, 1]).parameters(), NAN), ValueError, "lr must be positive; got nan"),
        # two_layer
        ("two_layer", "make_tensors", "type", lambda: call("two_layer", "make_tensors")(N="4"), TypeError, "sizes must be ints, got N='4'"),
        ("two_layer", "make_tensors", "type", lambda: call("two_layer", "make_tensors")(seed=None), TypeError, "seed must be an int, such as 0, got None"),
        ("two_layer", "make_tensors", "shape", lambda: call("two_layer", "make_tensors")(H=0), ValueError, "every size must be at least 1, got N=4, D_in=3, H=0, D_out=2"),
        ("two_layer", "make_tensors", "type", lambda: call("two_layer", "make_tensors")(dtype=torch.int64), TypeError, "dtype must be a floating-point dtype such as torch.float64, got torch.int64"),
        ("two_layer", "forward", "type", lambda: call("two_layer", "forward")({**call("two_layer", "make_tensors")(), "X": torch.ones(4, 3)}), TypeError, "W1 is torch.float64 and X torch.float32: pass every tensor in one dtype"),
        ("two_layer", "forward", "type", lambda: call("two_layer", "forward")({**call("two_layer", "make_tensors")(), "X": [[1.0, 2.0, 3.0]]}), TypeError, r"X must be a tensor of shape \('N', 'D_in'\), got list"),
        ("two_layer", "forward", "shape", lambda: call("two_layer", "forward")({**call("two_layer", "make_tensors")(), "W1": torch.ones(4, 5, dtype=torch.float64)}), ValueError, "W1 has D_in = 4 but an earlier tensor has D_in = 3"),
        ("two_layer", "shapes", "type", lambda: call("two_layer", "shapes")({"Z1": torch.ones(2)}, "Z1"), TypeError, r"names must be a list of names, e.g. \['Z1'\]"),
        ("two_layer", "shapes", "shape", lambda: call("two_layer", "shapes")({"Z1": torch.ones(2)}, ["P"]), ValueError, r"no tensor named \['P'\]"),
        ("two_layer", "backward", "type", lambda: call("two_layer", "backward")([]), ValueError, r"cache lacks .*: pass the dict that forward\(\) returns"),
        # views
        ("views", "describe", "type", lambda: call("views", "describe")(np.ones(2)), TypeError, "t: expected a torch.Tensor, got ndarray"),
        ("views", "describe", "shape", lambda: call("views", "describe")(torch.eye(2).to_sparse()), ValueError, "only strided .* got layout torch.sparse_coo"),
        ("views", "describe", "shape", lambda: call("views", "describe")(quiet(lambda: torch.eye(2).to_sparse_csr())), ValueError, r"got layout torch.sparse_csr: pass t.values\(\) for its memory"),
        ("views", "describe", "shape", lambda: call("views", "describe")(quiet(lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]))), ValueError, r"has no single shape and stride \(a nested tensor\): pass one of its tensors, t.unbind\(\)\[i\]"),
        ("views", "shares_storage", "type", lambda: call("views", "shares_storage")(torch.ones(2), [1.0]), TypeError, "b: expected a torch.Tensor, got list"),
        ("views", "shares_storage", "shape", lambda: call("views", "shares_storage")(torch.eye(2).to_sparse(), torch.ones(2)), ValueError, "a: only strided"),
        ("views", "element_offsets", "type", lambda: call("views", "element_offsets")(3), TypeError, "t: expected a torch.Tensor, got int"),
        ("views", "is_nested", "type", lambda: call("views", "is_nested")(np.ones(2)), TypeError, "t: expected a torch.Tensor, got ndarray"),
        ("views", "element_offsets", "shape", lambda: call("views", "element_offsets")(torch.eye(2).to_sparse()), ValueError, "only strided"),
        # workshop: the checker a reader runs, and torch's own layers it compares against
        ("workshop.check", "check", "type", lambda: wc.check("maxpool", "backward"), TypeError, r"check\('maxpool', backward\): pass your function backward\(grad_y, x\)"),
        ("workshop.check", "check", "type", lambda: wc.check(wc.get_task, wt.backward), TypeError, r"check\(task, backward\): task must be a task name such as 'linear' .* got function"),
        ("workshop.check", "check", "type", lambda: wc.check("linear", wt.backward, forward="x @ W + b"), TypeError, r"forward must be a function forward\(x, W, b\) -> y"),
        ("workshop.check", "check", "shape", lambda: wc.check("Linear", wt.backward), KeyError, "unknown task 'Linear'; the tasks are: softmax_ce, logsumexp"),
        ("workshop.check", "compare", "type", lambda: wc.compare("grad_x", [1.0, 2.0], f64(1.0, 2.0), "case", "backward"), wc.Mismatch, "grad_x on case: expected a tensor, got list"),
        ("workshop.check", "compare", "type", lambda: wc.compare("grad_x", f64(1.0, 2.0), [1.0, 2.0], "case", "backward"), TypeError, "want must be torch's float32 or float64 tensor to compare against, got list"),
        ("workshop.check", "compare", "shape", lambda: wc.compare("grad_x", f64(1.0, 2.0, 3.0), f64(1.0, 2.0), "case", "backward"), wc.Mismatch, r"grad_x on case: shape \(3,\), expected \(2,\)"),
        ("workshop.check", "compare", "shape", lambda: wc.compare("grad_x", torch.ones(2), f64(1.0, 1.0), "case", "backward"), wc.Mismatch, "dtype torch.float32, expected torch.float64"),
        ("workshop.check", "compare", "shape", lambda: wc.compare("grad_x", torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long), "case", "backward"), TypeError, "got a torch.int64 tensor"),
        ("workshop.check", "compare", "nonfinite", lambda: wc.compare("grad_x", f64(1.0, NAN), f64(1.0, 2.0), "case", "backward"), wc.Mismatch, r"first wrong entry at \(1,\): expected 2, got nan\n1 of 2 entries wrong, 1 of them nan or inf"),
        ("workshop.check", "compare", "nonfinite", lambda: wc.compare("grad_x", f64(math.inf, 2.0), f64(1.0, 2.0), "case", "backward"), wc.Mismatch, "expected 1, got inf"),
        ("workshop.check", "compare", "nonfinite", lambda: wc.compare("grad_x", f64(1.0, 2.0), f64(1.0, NAN), "case", "backward"), RuntimeError, "torch's own grad_x is not finite on case: a defect of the task"),
        ("workshop.check", "get_task", "type", lambda: wc.get_task(wt), TypeError, r"get_task\(name\): name must be a task name \(a str\), one of softmax_ce, .*; got module"),
        ("workshop.check", "get_task", "shape", lambda: wc.get_task("softmax-ce"), KeyError, "unknown task 'softmax-ce'; the tasks are: softmax_ce"),
        ("workshop.check", "load", "type", lambda: wc.load(3, wt), TypeError, r"load\(path, mod\): path must be the path of a Python file \(a str or Path\), got int"),
        ("workshop.check", "load", "type", lambda: wc.load(wc.starter_path("linear"), None), TypeError, r"load\(path, mod\): task must be a task name .* got NoneType"),
        ("workshop.check", "load", "shape", lambda: wc.load(ROOT / "snippets" / "workshop" / "__init__.py", wt), AttributeError, r"defines no function backward: define backward\(grad_y, x, W, b\)"),
        ("workshop.check", "load", "shape", lambda: wc.load(ROOT / "no_such_file.py", wt), FileNotFoundError, "no such file: .*no_such_file.py"),
        ("workshop.check", "run_checks", "type", lambda: wc.run_checks("linear", wt.forward, wt.backward, None), TypeError, r"report must be a Report \(check\(\) makes one\), got NoneType"),
        ("workshop.check", "run_checks", "type", lambda: wc.run_checks("linear", wt.forward, None, wc.Report("t")), TypeError, "backward must be a function, got NoneType"),
        ("workshop.check", "run_checks", "shape", lambda: wc.run_checks(torch, wt.forward, wt.backward, wc.Report("t")), TypeError, r"run_checks\(task, ...\): task must be a task name .* got module"),
        ("workshop.check", "starter_path", "type", lambda: wc.starter_path(3), TypeError, "name must be a task name"),
        ("workshop.check", "starter_path", "shape", lambda: wc.starter_path("linear.py"), KeyError, "unknown task 'linear.py'"),
        ("workshop.check", "Report", "type", lambda: wc.Report(["check"]), TypeError, r"Report\(title\): title must be a str, the report's first line; got list"),
        ("workshop.softmax_ce", "torch_forward", "type", lambda: call("workshop.softmax_ce", "torch_forward")([[1.0, 2.0]], torch.zeros(1, dtype=torch.long)), TypeError, "argument 'input' .* must be Tensor, not list"),
        ("workshop.softmax_ce", "torch_forward", "shape", lambda: call("workshop.softmax_ce", "torch_forward")(torch.ones(2, 3), torch.zeros(4, dtype=torch.long)), ValueError, r"Expected input batch_size \(2\) to match target batch_size \(4\)"),
        ("workshop.logsumexp", "torch_forward", "type", lambda: call("workshop.logsumexp", "torch_forward")([1.0, 2.0]), TypeError, "argument 'input' .* must be Tensor, not list"),
        ("workshop.batchnorm", "torch_forward", "shape", lambda: call("workshop.batchnorm", "torch_forward")(torch.ones(4, 3), torch.ones(2), torch.ones(2)), RuntimeError, "weight should contain 3 elements not 2"),
        ("workshop.attention", "torch_forward", "type", lambda: call("workshop.attention", "torch_forward")([[1.0]], torch.ones(1, 1), torch.ones(1, 1)), TypeError, "argument 'query' .* must be Tensor, not list"),
        ("workshop.linear", "torch_forward", "type", lambda: call("workshop.linear", "torch_forward")([1.0, 2.0], torch.ones(2, 1), torch.ones(1)), TypeError, "argument 'input' .* must be Tensor, not list"),
        ("workshop.embedding", "torch_forward", "type", lambda: call("workshop.embedding", "torch_forward")([0, 1], torch.ones(3, 2)), TypeError, "argument 'indices' .* must be Tensor, not list"),
        ("workshop.embedding", "torch_forward", "shape", lambda: call("workshop.embedding", "torch_forward")(torch.tensor([0.0, 1.0]), torch.ones(3, 2)), RuntimeError, "'indices' to have one of the following scalar types: Long, Int"),
        ("workshop.maxpool", "torch_forward", "type", lambda: call("workshop.maxpool", "torch_forward")([[[1.0, 2.0]]]), TypeError, "argument 'input' .* must be Tensor, not list"),
        ("workshop.maxpool", "torch_forward", "shape", lambda: call("workshop.maxpool", "torch_forward")(torch.ones(2, 2, 3, 6)), RuntimeError, "max_pool1d: Expected 2D or 3D"),
    ]


def _params_made_nan():
    from snippets.guards import assert_params_changed, snapshot

    model = linear()
    before = snapshot(model)
    with torch.no_grad():
        model.weight.fill_(NAN)
    assert_params_changed(model, before)


# ----------------------------------------------------------------------------------------------
# Kinds that do not apply, or behaviour left as it is, with the reason
# ----------------------------------------------------------------------------------------------

NO_TENSOR = "takes no tensor or float that could be NaN/inf"
FAITHFUL = "NaN/inf in, NaN/inf out, as the float or torch arithmetic it mirrors (a faithful result)"
AS_TORCH = "NaN/inf in, torch's value and gradient out (tests/test_engine_edges.py compares them with torch)"
RAW_FUNCTION = ("the bare autograd Function shown as a template; torch reports a wrong input "
                "('unsupported operand'); check_function and softplus are the checked entry points")
EXERCISE = ("an exercise's starter, solution or fixture: it takes only a seed or a step count "
            "from the exercise's own code; check() validates what the reader's function returns")
NO_ARGS = "takes no argument (or only self)"
REFERENCE = ("a workshop task's reference layer, shown on its page and kept flat to read; its docstring "
             "states the shapes and the checker runs it on the task's own cases. Other input gets what "
             "its torch ops do with it (the first op that cannot take it raises; NaN in gives NaN out); "
             "the checker (snippets/workshop/check.py) is what validates code and rejects NaN or inf")
TASK_CASES = ("the checker's case generator: run_checks calls it with the task's own labels (CASES, "
              "STABLE) and float32/float64 only; not for a reader")
TORCH_LAYER = "torch's own layer, the checker's reference: torch's errors and NaN propagation apply unchanged"
RANK_FUNCTION = ("a rank function: run_ranks calls it in each process of a job with its rank and world size "
                 "(run_ranks checks them, and shard() refuses a world size other than the example's 2)")
RANK_FUNCTIONS = {
    "scale.ddp": "construction_and_average accumulate with_summing_hook unused_parameter_error unused_parameters "
                 "checkpoint_with_find_unused checkpointed_steps static_graph_tour tour accumulation_step "
                 "accumulation_step_fixed logged_step buffers_after_evaluation buffers_at_construction "
                 "no_sync_decided_at_forward no_sync_at_first_step ignored_output_steps "
                 "bucket_sizes output_nodes penalty_after_create_graph",
    "scale.fsdp": "optimizer_order sharded_parameters_and_gradients between_forward_and_backward accumulate "
                  "mixed_precision hooks_on_a_sharded_parameter tour edit_gradient_with_a_tensor "
                  "edit_gradient_with_a_dtensor scale_gradient_with_one_element evaluation_first hook_in_forward",
}


def _exempt():
    e = {}

    def add(module, names, kinds, reason):
        for name in names.split():
            for kind in kinds.split():
                e[(module, name, kind)] = reason

    add("autograd_graph", "walk to_mermaid", "nonfinite", "reads the graph, not the values")
    add("autograd_graph", "node_label", "nonfinite", "takes a graph node, not values")
    add("bench_engine", "bench main", "nonfinite", NO_TENSOR)
    add("explain", "explain main normalise drop_tails", "nonfinite", "takes text; a NaN in a message is text like any other")
    add("explain", "normalise drop_tails", "shape", "any text is a message: one that names no error gives its words, "
        "one without a hint is returned as it is (tests/test_explain.py)")
    add("contract", "StableSoftplus", "type shape", RAW_FUNCTION)
    add("contract", "StableSoftplus", "nonfinite", FAITHFUL + "; softplus() rejects it")
    add("contract", "saved_bytes_per_element", "nonfinite", "counts bytes of saved tensors; values are not read")
    add("contract", "grads_are_finite", "nonfinite", "returns False: detecting NaN/inf is its job (tests/test_contract.py)")
    add("custom_function", "Square", "type shape nonfinite", RAW_FUNCTION)
    add("custom_function", "ScaledPow", "nonfinite", FAITHFUL)
    add("custom_losses", "StableLogSumExp SoftmaxCrossEntropy StoredSoftmaxCrossEntropy", "nonfinite",
        FAITHFUL + " (as F.cross_entropy and torch.logsumexp do; a row of -inf is handled)")
    add("determinism", "seed_worker", "type shape nonfinite", "DataLoader calls it with a worker id it does not use")
    add("determinism", "rng_preserved", "type shape nonfinite", NO_ARGS)
    add("determinism", "deterministic_algorithms", "shape nonfinite", "takes one bool")
    add("determinism", "run_twice", "nonfinite", "returns nan when a run made NaN, as documented")
    add("distributed_accumulation", "make_model", "shape nonfinite", "takes one int seed; torch reports anything else")
    add("distributed_accumulation", "loss_fn", "nonfinite", FAITHFUL)
    add("distributed_accumulation", "full_batch_gradient", "nonfinite", "sizes are checked as positive ints (see by_hand)")
    add("scale.ddp", "make_model", "shape", "takes one number, the value of every weight")
    add("scale.ddp", "loss_fn", "nonfinite", FAITHFUL)
    add("scale.ddp", "full_batch_gradients", "shape nonfinite", "takes a module of the page (its shapes are the page's); "
        "a NaN weight gives NaN gradients, as autograd does")
    add("scale.ddp", "Checkpointed", "shape nonfinite", "takes three bools")
    add("scale.ddp", "TwoHeads BothHeads", "type shape nonfinite", NO_ARGS)
    add("scale.ddp", "counting_mean_hook summing_hook bucket_sizes_hook bucket_sizes_mean_hook", "type shape nonfinite",
        "a communication hook: DDP calls it with the state given to register_comm_hook and a GradBucket")
    add("scale.ddp", RANK_FUNCTIONS["scale.ddp"], "type shape nonfinite", RANK_FUNCTION)
    add("scale.fsdp", "make_model", "nonfinite", "takes a dtype")
    add("scale.fsdp", "loss_fn", "nonfinite", FAITHFUL)
    add("scale.fsdp", "shard_model", "shape nonfinite", "takes the page's model and a device mesh; fully_shard "
        "checks the mesh and the options")
    add("scale.fsdp", RANK_FUNCTIONS["scale.fsdp"], "type shape nonfinite", RANK_FUNCTION)
    add("scale.fsdp", "local_shapes", "nonfinite", RANK_FUNCTION + "; sizes is checked by the rows above")
    add("scale.compiled", "CompileLog", "shape nonfinite", "takes one bool, aot")
    add("scale.compiled", "Graph", "type shape nonfinite", "the record CompileLog fills from a graph; a reader reads it")
    add("scale.compiled", "op_name", "type shape nonfinite", "names any graph node's target: a target it does not "
        "know is named by its str() (tests/test_scale_compiled.py)")
    add("scale.custom_op", "setup_context backward", "type shape nonfinite", "the op's autograd formula, called by "
        "autograd with the op's inputs, never by a reader; the op checks its own (tests/test_scale_custom_op.py)")
    add("engine_vs_torch", "torch_mlp copy_weights", "nonfinite", NO_TENSOR)
    add("evaluation", "evaluating", "shape nonfinite", "takes only a module")
    add("evaluation", "evaluate", "nonfinite", FAITHFUL + " (an evaluation reports what the model computes)")
    add("exercises", "attempt", "shape nonfinite", "takes two functions")
    add("exercises.accumulation", "hand_trace_leaves make_batch starter_two_passes starter_micro_batches "
        "solution_two_passes solution_two_passes_retained solution_micro_batches starter solution",
        "type shape nonfinite", EXERCISE)
    add("exercises.accumulation", "main", "nonfinite", NO_TENSOR)
    add("exercises.broken_graph", "make_data make_model full_batch_loss starter starter_frozen "
        "starter_optimizer starter_item solution", "type shape nonfinite", EXERCISE)
    add("exercises.broken_graph", "diagnose", "nonfinite", "reports NaN gradients as 'nonfinite' (report_dead_grads)")
    add("exercises.broken_graph", "first_step", "shape nonfinite", "takes one variant name")
    add("exercises.broken_graph", "loss_table", "nonfinite", "shows nan/inf in the table (a diverged run), without a bar")
    add("exercises.broken_graph", "main", "nonfinite", NO_TENSOR)
    add("exercises.gradient_check", "loss_of_W1 starter solution", "type shape nonfinite", EXERCISE)
    add("exercises.gradient_check", "relative_error", "nonfinite", FAITHFUL + "; check() rejects it")
    add("exercises.gradient_check", "main", "nonfinite", NO_TENSOR)
    add("exercises.hand_trace", "starter solution", "type shape nonfinite", EXERCISE)
    add("exercises.hand_trace", "with_torch", "nonfinite", FAITHFUL + "; check() compares at fixed finite points")
    add("exercises.hand_trace", "main", "shape nonfinite", "takes no option")
    add("forward_trace", "trace_rows", "nonfinite", "returns the cells as text; check_trace rejects a 'nan' or 'inf' cell")
    add("func_transforms", "per_sample_grads_loop per_sample_grads_vmap", "nonfinite",
        FAITHFUL + " (an example with NaN gets NaN gradients, as backward gives)")
    add("func_transforms", "main", "nonfinite", NO_TENSOR + " (--n is an int; measure() rejects n < 1)")
    add("function_api", "Cube SquareAndCube", "shape", "elementwise: any shape, as x ** 3 and x ** 2")
    add("function_api", "SortWithIndices", "shape", "sorts along the last dim of any shape, as x.sort(dim=-1) does")
    add("function_api", "Cube SquareAndCube ScaleInPlace", "nonfinite", FAITHFUL)
    add("function_api", "SortWithIndices", "nonfinite", FAITHFUL + " (NaN sorts last, as x.sort does)")
    add("gradient_health", "GradientFlow inspect", "nonfinite",
        "records the norms as they are, NaN included: table() flags them (test_table_flags_a_nonfinite_norm)")
    add("gradient_health", "table", "nonfinite", "flags a NaN/inf norm with '<- not finite' (test_table_flags_a_nonfinite_norm)")
    add("hvp", "hvp_double_backward hvp_three_ways", "nonfinite", FAITHFUL)
    add("optim_in_backward", "GradBytes", "nonfinite", "counts bytes of .grad tensors; values are not read")
    add("grad_check", "report_dead_grads", "nonfinite", "reports a NaN/inf gradient as 'nonfinite': that is its job")
    add("guards", "GuardError", "type shape nonfinite", "an exception class")
    add("exercises", "CheckError", "type shape nonfinite", "an exception class")
    add("guards", "require_module", "shape nonfinite", "checks a model's type only; the functions that call it check the rest")
    add("guards", "batch_statistics_layer", "shape nonfinite", "takes a module and reads its layers' types and modes, "
        "not values")
    add("guards", "assert_no_graph", "nonfinite", "checks for a graph, not values; assert_finite checks values")
    add("guards", "as_log_value", "nonfinite", "returns nan for a NaN loss: the logged value is the truth")
    add("guards", "assert_finite", "shape", "any shape and dtype (an integer tensor is finite)")
    add("guards", "assert_grads_flow", "nonfinite", "checks that gradients arrive; assert_finite_grads checks their values")
    add("guards", "snapshot", "nonfinite", "copies the parameters as they are; assert_params_changed rejects NaN/inf after the step")
    add("hand_trace", "gradients", "nonfinite", "returns torch's gradients, NaN included: a hand trace compares against them")
    add("jacobian_cost", "jacobian_by_vjps jacobian_by_jvps", "nonfinite", FAITHFUL)
    add("precision", "relative_error", "nonfinite", "returns nan for a NaN or inf input (no finite reference to measure against) "
        "and inf for an overflow in dtype, as documented (tests/test_degenerate_input.py); assert_close_to_reference fails on both")
    add("recipes", "accumulate_gradients", "nonfinite",
        FAITHFUL + " (returns the NaN loss; guards.assert_finite_grads catches the gradients)")
    add("saved_bytes", "SavedTensors", "type shape nonfinite", "made by track_saved, not by a reader")
    add("saved_bytes", "track_saved saved_bytes", "nonfinite", "counts bytes of saved tensors; values are not read")
    add("scalar_engine", "Value as_value add mul div", "nonfinite", AS_TORCH)
    add("scalar_engine", "power", "nonfinite", AS_TORCH + "; -inf ** 0.5 raises, as any fractional power of a negative number")
    add("scalar_engine", "topological_order", "type shape nonfinite",
        "called by backward on a Value; a non-Value has no ._inputs and Python says so (the page keeps the engine under 240 lines)")
    add("scalar_engine", "backward zero_grad to_mermaid", "shape nonfinite", "a method of Value: only flags")
    add("scalar_engine", "zero_grad", "type", NO_ARGS)
    add("scalar_engine", "exp tanh relu", "type shape nonfinite", NO_ARGS + "; " + AS_TORCH)
    add("scalar_engine", "log", "type nonfinite", NO_ARGS + "; " + AS_TORCH + "; log(-inf) raises, as for any negative number")
    add("scalar_engine", "rpower", "shape nonfinite", "always raises: a Value exponent is not supported")
    add("scalar_mlp", "MLP to_torch", "nonfinite", NO_TENSOR)
    add("scalar_mlp", "to_torch", "shape", "takes an MLP, whose shapes its constructor checked")
    add("shapes", "ShapeError", "type shape nonfinite", "an exception class")
    add("shapes", "expect_shape", "nonfinite", "reads shapes only")
    add("tensor_engine", "no_grad", "type shape nonfinite", NO_ARGS)
    add("tensor_engine", "Tensor tensor add mul div power matmul sum_ mean reshape transpose logsumexp "
        "cross_entropy unbroadcast", "nonfinite", AS_TORCH)
    add("tensor_engine", "power", "shape", "elementwise: any shape")
    add("tensor_engine", "broadcast_shape Linear MLP", "nonfinite", NO_TENSOR)
    add("two_layer", "make_tensors shapes", "nonfinite", NO_TENSOR)
    add("two_layer", "forward backward", "nonfinite", FAITHFUL)
    add("two_layer", "backward", "shape", "takes forward()'s cache, whose shapes forward() checked")
    add("views", "describe shares_storage element_offsets", "nonfinite", "reads shapes, strides and storage, not values")
    add("views", "is_nested", "shape", "any tensor is a fair question: every layout and shape gets True or False")
    add("views", "is_nested", "nonfinite", "reads the layout and strides, not values")
    for task in ("attention", "batchnorm", "embedding", "layernorm", "linear", "logsumexp", "maxpool", "softmax_ce",
                 "custom_op"):
        add(f"workshop.{task}", "forward backward", "type shape nonfinite", REFERENCE)
        add(f"workshop.{task}", "cases", "type shape nonfinite", TASK_CASES)
        if task in ("logsumexp", "softmax_ce", "custom_op", "layernorm"):
            add(f"workshop.{task}", "stable_cases", "type shape nonfinite", TASK_CASES)
        add(f"workshop.{task}", "torch_forward", "nonfinite", TORCH_LAYER)
    for task in ("batchnorm", "layernorm"):
        add(f"workshop.{task}", "torch_forward", "type", TORCH_LAYER + " (a list fails at x.size() or x.shape, naming the list)")
    for task in ("logsumexp", "layernorm", "attention", "linear"):
        add(f"workshop.{task}", "torch_forward", "shape",
            TORCH_LAYER + " (any number of leading dimensions is valid input to this layer)")
    add("workshop.check", "check run_checks", "nonfinite",
        "a NaN or inf from the reader's forward or backward is a failed Report, not an exception "
        "(test_workshop_check_fails_a_nan_or_inf_result; compare's rows above)")
    add("workshop.check", "get_task load starter_path", "nonfinite", "takes a task name or a file path, no numbers")
    add("workshop.check", "tasks default_record", "type shape nonfinite", NO_ARGS)
    add("workshop.check", "Report", "shape nonfinite", "made by check() with its own title; a reader reads str(report)")
    add("workshop.check", "Mismatch", "type shape nonfinite", "an exception class, raised by compare()")
    add("workshop.check", "LoadError", "type shape nonfinite", "an exception class, raised by load()")
    add("workshop.check", "draw size", "type shape nonfinite", TASK_CASES)
    add("workshop.check", "compute judge", "type shape nonfinite",
        "the checker's two halves, called by check() with what it drew and validated: compute in the child "
        "process, judge in the parent; a NaN or inf from the reader is a failed Report (tests/test_workshop.py)")
    add("workshop.check", "rebuild", "type shape nonfinite", "rebuilds in the child process what ship() made; only "
        "the checker calls it")
    add("workshop.check", "ship", "shape nonfinite", "takes a function: its type is checked (the row above)")
    add("workshop.check", "failures", "type shape nonfinite", "reads the count of failed checks a record folder holds: "
        "a missing or unreadable record counts 0 (tests/test_workshop.py)")
    add("workshop.custom_op", "torch_forward", "type shape", TORCH_LAYER + " (x * sigmoid(a * x): Python's and "
        "torch's errors for a list or a shape that does not broadcast)")
    add("workshop.custom_op", "opcheck", "shape nonfinite", "takes a function: its type is checked (the row above)")
    add("workshop.custom_op", "register setup_context", "type shape nonfinite", "the operator's autograd "
        "registration: register is called by the module and opcheck() with a checked backward, setup_context "
        "by autograd with the operator's inputs")
    return e


CASES = _cases()
EXEMPT = _exempt()


def _public_names():
    """{(module, name)} for every function and class defined in a public module of snippets."""
    found = set()
    for info in pkgutil.walk_packages(snippets.__path__, "snippets."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        short = info.name.removeprefix("snippets.")
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != info.name:
                continue
            if inspect.isfunction(value) or inspect.isclass(value):
                found.add((short, name))
    return found


@pytest.mark.parametrize(
    "module, name, kind, thunk, error, message",
    CASES,
    ids=[f"{m}.{n}-{k}-{i}" for i, (m, n, k, *_rest) in enumerate(CASES)],
)
def test_bad_input_fails_loudly(module, name, kind, thunk, error, message, capsys):
    with pytest.raises(BaseException) as caught:
        thunk()
    assert type(caught.value) is error or (error is AssertionError and isinstance(caught.value, AssertionError)), (
        f"{type(caught.value).__name__}: {caught.value}"
    )
    text = str(caught.value)
    if error is SystemExit:  # argparse: status 2 and a usage line on stderr
        assert caught.value.code == int(message)
        assert "usage: python -m snippets." in capsys.readouterr().err
    else:
        assert re.search(message, text), f"{message!r} not found in {text!r}"


def test_every_public_name_is_in_the_table():
    names = _public_names()
    assert len(names) >= 150  # the modules were found
    covered = {(m, n, k) for m, n, k, *_rest in CASES} | set(EXEMPT)
    missing = sorted(f"{m}.{n} ({k})" for m, n in names for k in KINDS if (m, n, k) not in covered)
    assert not missing, "add rows to CASES (or a reason to EXEMPT) for: " + ", ".join(missing)
    stale = sorted({f"{m}.{n}" for m, n, *_rest in [*CASES, *EXEMPT]} - {f"{m}.{n}" for m, n in names})
    assert not stale, f"the table names functions that no longer exist: {stale}"
    both = sorted(f"{m}.{n} ({k})" for m, n, k in EXEMPT if any(c[:3] == (m, n, k) for c in CASES))
    assert not both, f"a kind is both tested and exempted: {both}"


def test_the_table_covers_what_the_issue_asks():
    """The table is not a token one: most public names have rows, and there are many of them."""
    names = _public_names()
    tested = {(m, n) for m, n, *_rest in CASES}
    assert len(tested) >= 100, len(tested)
    assert len(CASES) >= 200, len(CASES)
    assert len(names) >= 150


# ----------------------------------------------------------------------------------------------
# Regressions: the cases of the issue, each as a reader met it
# ----------------------------------------------------------------------------------------------

def test_check_gradient_no_longer_passes_a_nan_backward():
    from snippets.finite_diff import check_gradient

    x = f64(0.0, 1.0)
    with pytest.raises(AssertionError, match="autograd gives nan at flat index 0"):
        check_gradient(lambda t: t.abs().sqrt().sum(), x)
    # the torch.where trap: the unused branch's NaN gradient still flows through the where
    with pytest.raises(AssertionError, match="autograd gives nan"):
        check_gradient(lambda t: torch.where(t > 0, t.sqrt(), torch.zeros_like(t)).sum(), f64(-1.0, 4.0))
    # opting in: equal NaNs on both sides count as agreement, a NaN on one side still fails
    analytic, numeric = check_gradient(lambda t: (t * NAN).sum(), f64(1.0), allow_nonfinite=True)
    assert analytic.isnan().all() and numeric.isnan().all()
    with pytest.raises(AssertionError, match="gradient mismatch at flat index 0"):
        check_gradient(lambda t: t.abs().sqrt().sum(), x, allow_nonfinite=True)
    # the numeric side is named too
    with pytest.raises(AssertionError, match="the central difference gives inf at flat index 0"):
        check_gradient(_numeric_inf, f64(0.0))


def _numeric_inf(t):
    # autograd: d/dt of t * 1 = 1 (finite); numeric: f(+h) = inf, f(-h) = 0, so the quotient is inf
    return t.sum() + torch.where(t > 0, torch.full_like(t, math.inf), torch.zeros_like(t)).detach().sum()


def test_a_hand_trace_of_nans_fails():
    from snippets.exercises.hand_trace import KEYS, check, solution

    check(solution)
    with pytest.raises(AssertionError, match="L is nan in your trace"):
        check(lambda x, w1, w2: dict.fromkeys(KEYS, NAN))
    with pytest.raises(AssertionError, match="dL/dw1 is inf in your trace"):
        check(lambda x, w1, w2: {**solution(x, w1, w2), "dL/dw1": math.inf})
    with pytest.raises(AssertionError, match="must be a number"):
        check(lambda x, w1, w2: {**solution(x, w1, w2), "L": True})


def test_tensor_engine_transpose_with_a_negative_axis_matches_torch():
    from snippets.tensor_engine import Tensor

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 2))
    a = Tensor(x, requires_grad=True)
    (a.transpose((-1, 1, -3)) * Tensor(w)).sum().backward()
    t = torch.tensor(x, requires_grad=True)
    (t.permute(2, 1, 0) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad, t.grad.numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("engine", ["tensor_engine", "scalar_engine"])
def test_engines_walk_a_5000_op_graph_without_recursion(engine):
    if engine == "tensor_engine":
        from snippets.tensor_engine import Tensor as Make
    else:
        Make = importlib.import_module(f"snippets.{engine}").Value
    limit = sys.getrecursionlimit()
    a = Make(1.0, requires_grad=True) if engine == "tensor_engine" else Make(1.0)
    h = a
    for _ in range(2500):  # an RNN-like chain: two ops per step, the input used at every step
        h = h * 0.5 + a
    h.backward()
    assert sys.getrecursionlimit() == limit
    assert float(np.asarray(a.grad)) == pytest.approx(2 - 0.5 ** 2500)  # sum of 0.5**k, k < 2501


def test_evaluate_rejects_a_tensor_where_batches_are_expected():
    from snippets.evaluation import evaluate

    model, X = linear(), torch.ones(4, 2)
    with pytest.raises(TypeError, match=r"batches is one tensor of shape \(4, 2\)"):
        evaluate(model, X)
    assert evaluate(model, [X]).shape == (4, 1) == evaluate(model, X.split(2)).shape


def test_assert_no_graph_checks_containers_and_passes_leaves():
    from snippets.guards import GuardError, assert_no_graph

    model = linear()
    for p in model.parameters():
        assert_no_graph(p, "p")  # a leaf keeps no graph
    loss = model(torch.ones(1, 2)).sum()
    with pytest.raises(GuardError, match=r"losses\[1\] requires grad"):
        assert_no_graph([loss.detach(), loss], "losses")
    with pytest.raises(GuardError, match=r"preds\[0\] requires grad"):
        assert_no_graph((loss,), "preds")
    with pytest.raises(GuardError, match=r"log\['val'\] requires grad"):
        assert_no_graph({"train": loss.item(), "val": loss}, "log")
    assert_no_graph([loss.item(), loss.detach(), {"x": [1.0]}], "log")


def _run(*args):
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_accumulation_command_line_uses_k(capsys):
    from snippets.exercises.accumulation import main

    main(["-k", "2"])
    out = capsys.readouterr().out
    assert "micro-batches k=2, scaled by 1/k" in out and "k=4" not in out
    with pytest.raises(SystemExit) as caught:
        main(["-k", "3"])
    assert caught.value.code == 2 and "-k 3: k must be a positive divisor of N = 8" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:'snippets.exercises.hand_trace' found in sys.modules:RuntimeWarning")
def test_command_lines_print_help_and_reject_unknown_arguments(capsys, tmp_path, monkeypatch):
    from bookbuild.notebook_gen import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as caught:
        main(["--help"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.startswith("usage: python -m bookbuild.notebook_gen")
    assert not any(tmp_path.iterdir())  # no folder named --help
    monkeypatch.setattr(sys, "argv", ["hand_trace.py", "--bogus"])  # the __main__ block passes sys.argv on
    with pytest.raises(SystemExit) as caught:
        runpy.run_module("snippets.exercises.hand_trace", run_name="__main__")
    assert caught.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_a_library_module_run_as_a_program_says_so():
    done = _run("snippets.finite_diff")
    assert done.returncode == 2
    assert "python -m snippets.finite_diff: this module has no command line; import it instead" in done.stderr


def test_every_module_either_has_a_command_line_or_refuses_to_run():
    """Static, so it costs no process per module: a module with a __main__ block parses its
    arguments with argparse (snippets._cli.parser or argparse itself); the others are refused
    by snippets/__init__.py (tested on one module above)."""
    for info in pkgutil.walk_packages(snippets.__path__, "snippets."):
        path = Path(importlib.util.find_spec(info.name).origin)
        text = path.read_text(encoding="utf-8")
        if '__name__ == "__main__"' in text:
            assert "parser(" in text or "argparse" in text, f"{info.name}: parse the command line with argparse"


def _private_torch_names(source):
    """The private torch names a module's code uses (``torch._dynamo``, ``torch.autograd._x``,
    ``torch._C``, ``from torch._x import y``), read from its syntax tree: comments and the
    strings a module matches against error messages do not count."""
    import ast

    def dotted(node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""

    def private(name):
        parts = name.split(".")
        return parts[0] == "torch" and any(p.startswith("_") and not p.startswith("__") for p in parts[1:])

    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            names = [dotted(node)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            names = []
        found.update(n for n in names if private(n))
    return found


def test_no_private_torch_api_in_snippets():
    """The reader's package declares any torch: only torch's public API may be used."""
    assert _private_torch_names("import torch._dynamo\nfrom torch import _C\nx = torch.autograd._engine_run_backward") == {
        "torch._dynamo", "torch._C", "torch.autograd._engine_run_backward"}
    assert not _private_torch_names("t._version\ntorch.__version__\ntext = 'torch._dynamo.exc.Unsupported'  # torch._C")
    used = {}
    for info in pkgutil.walk_packages(snippets.__path__, "snippets."):
        path = Path(importlib.util.find_spec(info.name).origin)
        names = _private_torch_names(path.read_text(encoding="utf-8"))
        if names:
            used[str(path.relative_to(ROOT))] = sorted(names)
    assert not used, f"private torch API in snippets/: {used}; use the public API"


def test_command_lines_refuse_a_seed_torch_cannot_take_by_name(capsys):
    """torch's generators take seeds from -2**63 to 2**64 - 1; beyond, the command line says so
    (exit status 2) instead of ending in torch's "Overflow when unpacking long long"."""
    from snippets import func_transforms
    from snippets.exercises import gradient_check

    for main in (gradient_check.main, func_transforms.main):
        for bad in (2 ** 64, -2 ** 63 - 1):
            with pytest.raises(SystemExit) as caught:
                main(["--seed", str(bad)])
            err = capsys.readouterr().err
            assert caught.value.code == 2 and "Traceback" not in err
            assert f"error: argument --seed: {bad} is outside torch's range of seeds, -2**63 to 2**64 - 1" in err
    with pytest.raises(ValueError, match=r"seed 18446744073709551616 is outside torch's range of seeds"):
        func_transforms.measure(seed=2 ** 64)


def test_exercise_options_change_what_runs(capsys):
    from snippets.exercises import broken_graph, gradient_check

    broken_graph.main(["--steps", "2"])
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line[:4].strip().isdigit() or line.startswith(" end")]
    assert rows == ["0", "1", "end"]
    gradient_check.main(["--seed", "1"])
    seed_1 = capsys.readouterr().out
    gradient_check.main([])
    assert seed_1 != capsys.readouterr().out


def test_table_flags_a_nonfinite_norm():
    from snippets.gradient_health import table

    ok = table({"0": {"out": 0.5, "weight": 2.0}})
    assert "not finite" not in ok
    for bad in (NAN, math.inf):
        lines = table({"0": {"out": 0.5, "weight": 2.0}, "2": {"out": bad, "weight": 1.0}}).splitlines()
        assert lines[1].endswith("2") and lines[2].endswith("<- not finite"), lines


def test_compatibility_reports_a_nan_backward_as_a_failure():
    from snippets.function_api import Cube, compatibility

    class NanBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * NAN

    assert compatibility(Cube.apply, (f64(1.0, 2.0),))["backward"] == "yes"
    assert compatibility(NanBackward.apply, (f64(1.0, 2.0),))["backward"].startswith("no")


def test_workshop_check_fails_a_nan_or_inf_result():
    """The workshop's checker: a NaN or inf anywhere in what the reader returns is a FAIL."""
    from snippets.workshop.check import check, get_task

    reference = get_task("linear").backward
    assert check("linear", reference, seed=1).passed  # the reference passes: the checks below can fail only on the NaN
    ns = {"torch": torch}
    exec(inspect.getsource(reference), ns)  # a reader's copy: the reference itself is refused as a reader's code
    right = ns["backward"]

    def one_inf(grad_y, x, W, b):
        grad_x, grad_W, grad_b = right(grad_y, x, W, b)
        grad_W = grad_W.clone()
        grad_W[0, 1] = math.inf
        return grad_x, grad_W, grad_b

    text = str(check("linear", one_inf, seed=1))
    assert "FAIL  backward: grad_W is wrong on case 1 of 6 (seed 1)" in text and "first wrong entry at (0, 1)" in text
    assert "got inf" in text

    def nan_forward(x, W, b):
        return (x @ W + b) * NAN

    text = str(check("linear", right, nan_forward, seed=1))
    assert "FAIL  forward: output is wrong on" in text and "got nan" in text and text.endswith("a check failed")


def test_workshop_check_run_as_a_program_points_to_the_command_line():
    done = _run("snippets.workshop.check")
    assert done.returncode == 2
    assert ("python -m snippets.workshop.check: this module has no command line; "
            "run python -m snippets.workshop, or import it") in done.stderr


# ----------------------------------------------------------------------------------------------
# The notebook generator (bookbuild/notebook_gen.py): book tooling,
# not reader code, so not in the table of snippets' public names; its input checks all the same.


def tool(module, name):
    def run(*args, **kwargs):
        return getattr(importlib.import_module(f"bookbuild.{module}"), name)(*args, **kwargs)
    return run


TOOL_CASES = [
        ("bookbuild.notebook_gen", "section", "type", lambda: tool("notebook_gen", "section")("hand_trace", 3), ValueError, "has no section 3"),
        ("bookbuild.notebook_gen", "section", "shape", lambda: tool("notebook_gen", "section")("hand_trace", "nope"), ValueError, "has no section 'nope'"),
        ("bookbuild.notebook_gen", "build", "type", lambda: tool("notebook_gen", "build")(3), ValueError, "unknown notebook 3; known:"),
        ("bookbuild.notebook_gen", "text", "type", lambda: tool("notebook_gen", "text")("hand_trace"), ValueError, "unknown notebook 'hand_trace'; known:"),
        ("bookbuild.notebook_gen", "main", "type", lambda: tool("notebook_gen", "main")(["--help-me"]), SystemExit, "2"),
        ("bookbuild.notebook_gen", "main", "shape", lambda: tool("notebook_gen", "main")(["a", "b"]), SystemExit, "2"),
        ("bookbuild.notebook_gen", "cells", "type", lambda: tool("notebook_gen", "cells")(importlib.import_module("snippets.workshop.linear")), TypeError, "name must be a task name"),
        ("bookbuild.notebook_gen", "cells", "shape", lambda: tool("notebook_gen", "cells")("w-linear"), KeyError, "unknown task 'w-linear'"),
        ("bookbuild.notebook_gen", "workshop", "type", lambda: tool("notebook_gen", "workshop")(None), TypeError, "name must be a task name"),
        ("bookbuild.notebook_gen", "workshop", "shape", lambda: tool("notebook_gen", "workshop")("Linear"), KeyError, "unknown task 'Linear'"),
]


@pytest.mark.parametrize("module, name, kind, thunk, error, message", TOOL_CASES,
                         ids=[f"{m}.{n}-{k}-{i}" for i, (m, n, k, *_rest) in enumerate(TOOL_CASES)])
def test_the_notebook_generator_rejects_bad_input(module, name, kind, thunk, error, message, capsys):
    with pytest.raises(BaseException) as caught:
        thunk()
    assert type(caught.value) is error, f"{type(caught.value).__name__}: {caught.value}"
    if error is SystemExit:
        assert caught.value.code == int(message)
        assert "usage: python -m bookbuild.notebook_gen" in capsys.readouterr().err
    else:
        assert re.search(message, str(caught.value)), f"{message!r} not found in {caught.value!s}"
