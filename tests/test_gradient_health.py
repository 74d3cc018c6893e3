"""snippets/gradient_health.py: the recorded norms against norms computed without hooks."""

import math

import pytest
import torch
from torch import nn

from snippets.gradient_health import GradientFlow, deep_mlp, inspect, table, xychart


def reference_norms(model, x):
    """Per Linear: norm of dL/d(output) (via retain_grad) and of the weight's .grad."""
    model.zero_grad(set_to_none=True)
    outs = {}
    handles = []
    for name, m in model.named_modules():
        if isinstance(m, nn.Linear):
            def keep(mod, inp, out, name=name):
                out.retain_grad()
                outs[name] = out
            handles.append(m.register_forward_hook(keep))
    model(x).pow(2).mean().backward()
    for h in handles:
        h.remove()
    layers = dict(model.named_modules())
    return {n: {"out": o.grad.norm().item(), "weight": layers[n].weight.grad.norm().item()} for n, o in outs.items()}


@pytest.mark.parametrize("activation, gain", [(nn.Sigmoid, None), (nn.ReLU, 2 ** 0.5), (nn.Tanh, 3.0)])
def test_norms_match_a_hook_free_computation(activation, gain):
    torch.manual_seed(3)
    x = torch.randn(8, 16)
    want = reference_norms(deep_mlp(depth=5, width=16, activation=activation, init_gain=gain), x)
    got = inspect(deep_mlp(depth=5, width=16, activation=activation, init_gain=gain), x)
    assert list(got) == list(want) == ["0", "2", "4", "6", "8"]
    for name in want:
        for key in ("out", "weight"):
            assert math.isclose(got[name][key], want[name][key], rel_tol=1e-6), (name, key)


def test_inspector_changes_no_gradient_and_removes_its_hooks():
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    plain = deep_mlp(depth=3, width=8)
    plain(x).pow(2).mean().backward()
    model = deep_mlp(depth=3, width=8)
    with GradientFlow(model) as flow:
        model(x).pow(2).mean().backward()
    for a, b in zip(plain.parameters(), model.parameters()):
        assert torch.equal(a.grad, b.grad)
    for _, m in flow.layers:
        assert not m._forward_hooks
        assert not m.weight._backward_hooks
    # after the with block, a new backward records nothing new
    before = {k: dict(v) for k, v in flow.norms.items()}
    model(x * 2).pow(2).mean().backward()
    assert flow.norms == before


def test_a_backward_after_the_block_records_nothing_and_the_table_says_where_to_run_it():
    """Forward inside the block, backward after it: the output hooks go with the weight hooks,
    so no row is half recorded (a weight missing beside an output would read as unused)."""
    torch.manual_seed(0)
    model = deep_mlp(depth=2, width=4)
    with GradientFlow(model) as flow:
        loss = model(torch.randn(3, 4)).pow(2).mean()
    loss.backward()
    assert flow.norms == {"0": {}, "2": {}}
    with pytest.raises(ValueError, match="run forward and backward inside"):
        table(flow.norms)


def test_a_forward_before_the_block_is_named_as_the_reason_no_output_gradient_was_recorded():
    """Forward before the block, backward inside it: the weights' gradients are recorded, the
    outputs' are not; the table says to move the forward, not that the loss skips the layer."""
    torch.manual_seed(0)
    model = deep_mlp(depth=2, width=4)
    loss = model(torch.randn(3, 4)).pow(2).mean()
    with GradientFlow(model) as flow:
        loss.backward()
    text = table(flow.norms)
    assert text.count("no output gradient: run the forward inside `with GradientFlow(model)`") == 2, text
    assert "the loss does not use this layer" not in text


def test_a_gradient_too_small_for_a_float32_norm_is_not_read_as_a_cut():
    """Entries of about 1e-25: their float32 squares underflow, so ``.norm()`` reads 0; the
    inspector's float64 norm reads the gradient."""
    layer = nn.Linear(2, 1)
    x = torch.full((1, 2), 1e-25)
    with GradientFlow(layer) as flow:
        layer(x).pow(2).mean().backward()
    grad = layer.weight.grad
    assert bool((grad != 0).all()) and grad.norm().item() == 0.0
    assert flow.norms[""]["weight"] == pytest.approx(grad.double().norm().item(), rel=1e-6)
    assert flow.norms[""]["weight"] > 0


def test_sigmoid_vanishes_and_he_init_does_not():
    torch.manual_seed(1)
    x = torch.randn(16, 32)
    sig = inspect(deep_mlp(activation=nn.Sigmoid), x)
    assert sig["0"]["out"] < 1e-4 * sig["14"]["out"]
    he = inspect(deep_mlp(activation=nn.ReLU, init_gain=2 ** 0.5), x)
    assert he["0"]["out"] > 0.1 * he["14"]["out"]


def test_table_and_chart_text():
    norms = {"0": {"out": 0.001, "weight": 0.5}, "2": {"out": 10.0, "weight": 2.0}}
    assert table(norms).splitlines() == [
        " layer   grad out  grad weight",
        "     0      0.001          0.5",
        "     2         10            2",
    ]
    chart = xychart(norms, "t")
    assert chart.splitlines()[0] == "---" and "xychart-beta" in chart.splitlines()
    assert '    y-axis "log10 gradient norm" -4 --> 1' in chart.splitlines()
    assert "accTitle: t" in chart and "accDescr:" in chart
    assert chart.splitlines()[-1] == "    bar [-3, 1]"
    assert xychart(norms, "t", key="weight").splitlines()[-1] == "    bar [-0.3, 0.3]"


@pytest.mark.parametrize("bad", [0.0, float("nan"), float("inf")])
def test_chart_refuses_norms_without_a_log(bad):
    with pytest.raises(ValueError, match="no finite log10"):
        xychart({"0": {"out": bad, "weight": 1.0}}, "t")


def test_bad_input():
    with pytest.raises(TypeError, match="nn.Module"):
        GradientFlow(torch.ones(2))
    with pytest.raises(ValueError, match="model has no parameters"):
        GradientFlow(nn.ReLU())
    with pytest.raises(ValueError, match="no norms recorded"):
        table({})
    with pytest.raises(ValueError, match="no gradient recorded"):
        table({"0": {}})
    with pytest.raises(ValueError, match="key must be"):
        xychart({"0": {"out": 1.0}}, "t", key="bias")
    with pytest.raises(ValueError, match="depth and width"):
        deep_mlp(depth=0)


def test_a_sparse_embedding_is_inspected_by_the_norm_of_its_gradients_values():
    """nn.Embedding(sparse=True) hands its weight hook a sparse gradient: its norm is the
    norm of the values (a float64 norm of a sparse tensor is refused by torch)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(5, 3, sparse=True), nn.Linear(3, 2))
    norms = inspect(model, torch.tensor([1, 2, 2]))
    dense = nn.Sequential(nn.Embedding(5, 3), nn.Linear(3, 2))
    dense.load_state_dict(model.state_dict())
    assert norms["0"]["weight"] == pytest.approx(inspect(dense, torch.tensor([1, 2, 2]))["0"]["weight"])
    assert model[0].weight.grad.is_sparse
