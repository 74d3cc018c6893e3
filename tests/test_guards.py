"""Tests of snippets/guards.py: each guard passes on a correct training step and fails, with
its message, on the bug it exists for."""

import warnings

import pytest
import torch

from snippets.guards import (
    GuardError,
    as_log_value,
    assert_finite,
    assert_finite_grads,
    assert_grads_flow,
    assert_no_graph,
    assert_no_stale_grads,
    assert_params_changed,
    snapshot,
)


def setup():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    return model, torch.optim.SGD(model.parameters(), lr=0.1), x, y


def test_a_correct_step_passes_every_guard():
    model, opt, x, y = setup()
    running = 0.0
    for _ in range(2):
        opt.zero_grad()
        assert_no_stale_grads(model)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        assert_grads_flow(model)
        assert_finite_grads(model)
        before = snapshot(model)
        opt.step()
        assert_params_changed(model, before)
        running += as_log_value(loss)
        assert_no_graph(running, "running")
    assert isinstance(running, float)


def test_forgotten_zero_grad_is_caught():
    model, opt, x, y = setup()
    torch.nn.functional.mse_loss(model(x), y).backward()
    with pytest.raises(GuardError, match="stale gradients in 0.weight, 0.bias, 2.weight, 2.bias"):
        assert_no_stale_grads(model)
    model.zero_grad()  # set_to_none: passes
    assert_no_stale_grads(model)


def test_logging_the_loss_tensor_is_caught():
    model, _, x, y = setup()
    loss = torch.nn.functional.mse_loss(model(x), y)
    total = 0.0 + loss
    with pytest.raises(GuardError, match="total requires grad .grad_fn=AddBackward0"):
        assert_no_graph(total, "total")
    assert_no_graph(loss.detach())
    assert as_log_value(loss) == pytest.approx(loss.detach().item())


def test_a_view_taken_under_no_grad_keeps_the_graph_and_is_caught():
    model, _, x, y = setup()
    out = model(x)
    with torch.no_grad():
        kept = out[:, 0]                              # no grad_fn, but its base has one
    assert kept.grad_fn is None                      # (it reports requires_grad=True)
    with pytest.raises(GuardError, match=r"kept\[0\] is a view of a tensor with a graph \(grad_fn=AddmmBackward0\)"):
        assert_no_graph([kept], "kept")
    assert_no_graph(kept.detach())                    # a view of nothing with a graph
    assert_no_graph(x[:, 0])                          # a view of data


def test_the_stale_gradient_message_names_the_optimizer_that_must_hold_them():
    model, _, x, y = setup()
    torch.nn.functional.mse_loss(model(x), y).backward()
    with pytest.raises(GuardError, match="call zero_grad\\(\\) before each backward, on an optimizer that holds them"):
        assert_no_stale_grads(model)


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors is a no-op")
def test_an_empty_parameter_is_skipped_and_a_rounded_away_step_names_the_dtype():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 0))   # the second is empty
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = snapshot(model)
    model(torch.randn(4, 3)).sum().backward()          # (4, 0): no element reaches the loss
    model[0](torch.randn(4, 3)).sum().backward()
    assert_grads_flow(model)
    opt.step()
    assert_params_changed(model, before)
    small = torch.nn.Linear(2, 1).bfloat16()
    with torch.no_grad():
        small.bias.fill_(1.0)                          # bfloat16's spacing at 1 is 2**-7
    before = snapshot(small)
    small(torch.ones(1, 2, dtype=torch.bfloat16)).sum().backward()
    torch.optim.SGD(small.parameters(), lr=1e-3).step()   # 1e-3 is below half of it
    with pytest.raises(GuardError, match=r"did not change bias: .*below the parameter's spacing \(likeliest in float16 or bfloat16"):
        assert_params_changed(small, before)


def test_a_detached_branch_is_caught_by_grads_flow():
    model, _, x, y = setup()
    h = model[0](x).detach()  # the bug: cuts the first layer off
    torch.nn.functional.mse_loss(model[2](model[1](h)), y).backward()
    with pytest.raises(GuardError, match=r"no gradient reached: 0\.weight, 0\.bias"):
        assert_grads_flow(model)


def test_a_dead_relu_layer_is_named_with_its_own_causes_not_a_cut_graph_s():
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    with torch.no_grad():
        model[0].bias.fill_(-10.0)  # every pre-activation below 0 on this batch: the ReLU passes none
    model(torch.ones(4, 2)).sum().backward()
    with pytest.raises(GuardError) as info:
        assert_grads_flow(model)
    message = str(info.value)
    assert "all-zero gradient: 0.weight, 0.bias, 2.weight. Look for a ReLU that is 0 on the whole batch" in message
    assert "no gradient reached" not in message, message
    assert message.endswith("after zero_grad(set_to_none=False), also for .detach(), .item() or "
                            "torch.no_grad() between them and the loss"), message


def test_zero_learning_rate_is_caught_by_params_changed():
    model, _, x, y = setup()
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    torch.nn.functional.mse_loss(model(x), y).backward()
    before = snapshot(model)
    opt.step()
    with pytest.raises(GuardError, match="did not change 0.weight"):
        assert_params_changed(model, before)


def test_nan_gradient_is_caught():
    x = torch.tensor([0.0, 4.0], requires_grad=True)
    (torch.sqrt(x) * torch.tensor([0.0, 1.0])).sum().backward()  # 0 * inf = nan in the first slot
    assert torch.isnan(x.grad[0]) and x.grad[1].item() == 0.25
    with pytest.raises(GuardError, match="has 1 NaN and 0 inf of 2 values"):
        assert_finite(x.grad, "x.grad")
    model = torch.nn.Linear(2, 1)
    model.weight.grad = torch.tensor([[float("inf"), 1.0]])
    with pytest.raises(GuardError, match="weight.grad has 0 NaN and 1 inf"):
        assert_finite_grads(model)
    with pytest.raises(GuardError, match="z has 1 NaN and 0 inf of 2 values"):   # nan+inf*j: one bad value
        assert_finite(torch.tensor([complex(float("nan"), float("inf")), 1j]), "z")


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: assert_finite([1.0]), TypeError, "expected a tensor, got list"),
        (lambda: assert_grads_flow(torch.ones(2)), TypeError, "module must be a torch.nn.Module"),
        (lambda: as_log_value(torch.ones(3)), TypeError, r"got \(3,\): reduce it first"),
        (lambda: assert_params_changed(torch.nn.Linear(1, 1), [1]), TypeError, "snapshot"),
        (
            lambda: assert_params_changed(torch.nn.Linear(1, 1), {"x": torch.ones(1)}),
            ValueError,
            "another module",
        ),
        (lambda: assert_grads_flow(torch.nn.Linear(1, 1).requires_grad_(False)), GuardError, "nothing would be trained"),
    ],
)
def test_bad_input_says_what_to_do(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_assert_no_graph_walks_every_container_it_accepts():
    import collections

    import numpy as np

    loss = (torch.ones(2, requires_grad=True) * 2).sum()
    holders = {
        "a deque": (collections.deque([1.0, loss]), r"log\[1\]"),
        "a set": ({loss}, r"list\(log\)\[0\]"),
        "a frozenset": (frozenset([loss]), r"list\(log\)\[0\]"),
        "dict values": ({"val": loss}.values(), r"list\(log\)\[0\]"),
        "dict items": ({"val": loss}.items(), r"list\(log\)\[0\]\[1\]"),
        "a dict key": ({loss: "val"}, r"list\(log\)\[0\]"),
        "a nested dict": ({"a": {"b": [0.5, loss]}}, r"log\['a'\]\['b'\]\[1\]"),
        "an OrderedDict": (collections.OrderedDict(val=loss), r"log\['val'\]"),
    }
    for name, (holder, where) in holders.items():
        with pytest.raises(GuardError, match=where + r" requires grad \(grad_fn=SumBackward0\)"):
            assert_no_graph(holder, "log")
    with pytest.raises(TypeError, match=r"log is an iterator: pass list\(log\)"):
        assert_no_graph(iter([loss]), "log")
    # what holds no graph passes: detached values, numbers, text, arrays of numbers, a list that holds itself
    itself = [loss.detach()]
    itself.append(itself)
    for fine in (itself, collections.deque([loss.item()]), {loss.detach()}, {"a": "text"}.values(),
                 np.ones((3, 3)), range(10 ** 12), b"bytes"):
        assert_no_graph(fine, "log")


def test_a_sparse_gradient_is_checked_by_its_values():
    emb = torch.nn.Embedding(4, 2, sparse=True)
    emb(torch.tensor([0, 2])).sum().backward()
    assert emb.weight.grad.is_sparse
    assert_finite_grads(emb)  # finite: passes
    emb.weight.grad = torch.sparse_coo_tensor([[1]], [[float("nan"), 0.0]], (4, 2), check_invariants=True)
    with pytest.raises(GuardError, match="weight.grad has 1 NaN and 0 inf of 8 values, the first at index \\(1, 0\\)"):
        assert_finite_grads(emb)


def test_assert_no_graph_walks_a_dataclass_and_a_namespace_and_refuses_other_objects():
    import dataclasses
    from types import SimpleNamespace

    @dataclasses.dataclass
    class Record:
        step: int
        loss: object

    loss = (torch.ones(2, requires_grad=True) * 2).sum()
    for holder, where in ((Record(3, loss), r"log\.loss"), (SimpleNamespace(loss=[loss]), r"log\.loss\[0\]")):
        with pytest.raises(GuardError, match=where + r" requires grad \(grad_fn=SumBackward0\)"):
            assert_no_graph(holder, "log")
    assert_no_graph(Record(3, loss.item()), "log")
    with pytest.raises(TypeError, match=r"log is of type object, whose insides assert_no_graph cannot see: "
                                         r"pass the values it holds, e.g. a list of them"):
        assert_no_graph(object(), "log")

    @dataclasses.dataclass(slots=True)
    class Slotted:
        loss: object

    with pytest.raises(GuardError, match=r"log\.loss requires grad"):
        assert_no_graph(Slotted(loss), "log")
    assert_no_graph([None, 1, 2.5, True, ..., torch.float32, torch.device("cpu"), torch.finfo(torch.float16),
                     int, Record], "log")


def test_assert_no_graph_sees_the_graph_a_create_graph_backward_leaves_in_grad():
    w = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings():                  # torch warns of the cycle once per process
        warnings.simplefilter("ignore", UserWarning)
        (w ** 3).sum().backward(create_graph=True)   # w.grad = 3 w^2, with a graph
    with pytest.raises(GuardError, match=r"w\.grad has a graph \(grad_fn=\w+\), left by a backward with create_graph=True"):
        assert_no_graph(w, "w")
    w.grad = None
    assert_no_graph(w, "w")
