"""snippets.scale.compiled: what CompileLog records and when, and eager_vs_compiled's comparison."""

import operator

import pytest
import torch
from torch import nn

from snippets.scale.compiled import CompileLog, eager_vs_compiled, op_name


@pytest.fixture(autouse=True)
def fresh_compiler():
    """Every test compiles its functions afresh (compiled code is cached per code object)."""
    torch.compiler.reset()
    yield
    torch.compiler.reset()


def tanh_loss(x, w):
    return (x * w).tanh().sum()


def mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))


def test_forward_compiles_at_the_call_and_backward_at_the_first_backward():
    log = CompileLog(aot=True)
    step = torch.compile(tanh_loss, backend=log)
    w = torch.ones(3, requires_grad=True)
    loss = step(torch.tensor([1.0, 2.0, 3.0]), w)
    assert log.kinds == ["forward"]
    loss.backward()
    assert log.kinds == ["forward", "backward"]
    step(torch.tensor([4.0, 5.0, 6.0]), w).backward()        # the same guards: nothing new
    assert log.kinds == ["forward", "backward"]
    with torch.no_grad():
        step(torch.ones(3), w)
    assert log.kinds == ["forward", "backward", "inference"]
    assert "tanh_backward" in log.graphs[1].ops
    assert "tanh_backward" not in log.graphs[0].ops + log.graphs[2].ops


def test_backward_graph_lists_what_the_forward_saved():
    log = CompileLog(aot=True)
    w = torch.ones(3, requires_grad=True)
    torch.compile(tanh_loss, backend=log)(torch.ones(3), w).backward()
    backward = log.graphs[1]
    # tanh's backward needs tanh's output, and w's gradient needs x: two (3,) tensors; no tangent
    assert len(backward.saved) == 2
    assert all(shape == (3,) for _, shape in backward.saved)
    assert not any(name.startswith("tangents") for name, _ in backward.saved)
    assert log.graphs[0].saved == ()                          # only a backward graph has saved inputs


def test_gradients_through_the_log_equal_eager_ones():
    x = torch.tensor([0.5, -1.0, 2.0])
    w = torch.tensor([1.0, 2.0, -0.5], requires_grad=True)
    torch.compile(tanh_loss, backend=CompileLog(aot=True))(x, w).backward()
    compiled = w.grad.clone()
    w.grad = None
    tanh_loss(x, w).backward()
    torch.testing.assert_close(compiled, w.grad, rtol=0, atol=0)


def test_dynamo_log_counts_recompilations_and_graph_breaks():
    log = CompileLog()
    step = torch.compile(tanh_loss, backend=log)
    w = torch.ones(3, requires_grad=True)
    step(torch.ones(3), w)
    step(torch.zeros(3), w)                                   # new values: reused
    assert len(log) == 1
    step(torch.ones(3), w.detach())                           # requires_grad changed
    assert len(log) == 2
    assert log.kinds == ["dynamo", "dynamo"]
    assert log.graphs[0].ops == ("mul", "tanh", "sum")

    def with_branch(x):
        h = x.tanh()
        if h.sum() > 0:
            h = h * 2
        return h.sum()

    broken = CompileLog()
    torch.compile(with_branch, backend=broken)(torch.ones(2))
    assert len(broken) == 2


def test_a_second_batch_size_makes_the_batch_dimension_symbolic():
    log = CompileLog()
    step = torch.compile(lambda x, w: (x @ w).sum(), backend=log)
    w = torch.ones(3, requires_grad=True)
    counts = []
    for n in (8, 5, 7):
        step(torch.ones(n, 3), w)
        counts.append(len(log))
    assert counts == [1, 2, 2]


def test_each_log_is_a_backend_of_its_own():
    first, second = CompileLog(), CompileLog()
    w = torch.ones(3, requires_grad=True)
    torch.compile(tanh_loss, backend=first)(torch.ones(3), w)
    torch.compile(tanh_loss, backend=second)(torch.ones(3), w)
    assert (len(first), len(second)) == (1, 1)


def test_op_name():
    assert op_name(torch.ops.aten.addmm.default) == "addmm"
    assert op_name(torch.ops.aten.mul.Tensor) == "mul"
    assert op_name(operator.mul) == "mul"
    assert op_name(torch.tanh) == "tanh"
    assert op_name("sum") == "sum"
    assert op_name(torch.ops.higher_order.cond) == "cond"
    unknown = object()
    assert op_name(unknown) == str(unknown)


def test_op_name_of_a_custom_op_keeps_its_namespace():
    from snippets.scale.custom_op import scaled_softplus  # noqa: F401 - defines the op

    assert op_name(torch.ops.autograd_book.scaled_softplus.default) == "autograd_book.scaled_softplus"


def test_eager_vs_compiled_on_aot_eager_is_exact():
    result = eager_vs_compiled(mlp(), torch.randn(8, 3))
    assert result["node"] == "CompiledFunctionBackward"
    assert result["max_abs_diff"] == 0.0
    assert result["max_abs_grad"] > 0.0


def test_eager_vs_compiled_sees_a_wrong_gradient():
    """A backend whose graph computes something else must show a difference."""
    def doubling(gm, example_inputs):
        return lambda *args: [2 * out for out in gm.forward(*args)]

    result = eager_vs_compiled(mlp(), torch.randn(4, 3), backend=doubling)
    assert not (result["max_abs_diff"] <= 1e-6 * result["max_abs_grad"])


def test_eager_vs_compiled_compiles_past_the_shared_recompile_limit():
    """Every compiled built-in module shares one count of recompilations (8 by default), and
    models of different depths fail each other's guards: the tenth is still compiled, not
    compared with an eager run of itself."""
    nodes = [eager_vs_compiled(nn.Sequential(*[nn.Linear(3, 3), nn.Tanh()] * depth),
                               torch.randn(4, 3))["node"] for depth in range(1, 11)]
    assert nodes == ["CompiledFunctionBackward"] * 10


def test_eager_vs_compiled_refuses_a_run_torch_made_eager():
    """Past the limit of compilations in a process, torch runs the model eagerly: comparing
    that run with the eager one would report no difference."""
    with torch._dynamo.config.patch(accumulated_recompile_limit=1):
        eager_vs_compiled(mlp(0), torch.randn(4, 3))
        model = mlp(1)
        with pytest.raises(RuntimeError, match=r"torch ran the model eagerly \(its output's node is "):
            eager_vs_compiled(model, torch.randn(4, 3))
    assert all(p.grad is None for p in model.parameters())


def test_eager_vs_compiled_leaves_no_gradient_behind():
    model = mlp()
    eager_vs_compiled(model, torch.randn(4, 3))
    assert all(p.grad is None for p in model.parameters())


def test_eager_vs_compiled_replays_dropout_and_names_an_unused_parameter():
    torch.manual_seed(0)
    dropped = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 1))
    assert eager_vs_compiled(dropped.train(), torch.randn(4, 3))["max_abs_diff"] == 0.0

    class Spare(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.spare = torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)

        def forward(self, x):
            return self.used(x)

    model = Spare()
    with pytest.raises(ValueError, match=r"parameters \['spare.weight', 'spare.bias'\] get no gradient"):
        eager_vs_compiled(model, torch.ones(2, 3))
    assert all(p.grad is None for p in model.parameters())


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="aot must be True"):
        CompileLog(aot=1)
    with pytest.raises(ValueError, match="no parameter that requires grad"):
        eager_vs_compiled(mlp().requires_grad_(False), torch.ones(2, 3))
    with pytest.raises(ValueError, match="NaN or inf"):
        eager_vs_compiled(mlp(), torch.tensor([[float("inf"), 0.0, 0.0]]))
    with pytest.raises(TypeError, match="options must be None or a dict"):
        eager_vs_compiled(mlp(), torch.ones(2, 3), options=[("cpp.vec_isa_ok", False)])
