"""Unit tests of snippets/: the graph walker and the hand-trace helper, including their
errors on bad input."""

import pytest
import torch

from snippets.autograd_graph import node_label, to_mermaid, walk
from snippets.hand_trace import gradients


def hand_trace_graph(x=2.0, w=3.0, b=1.0):
    x, w, b = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    z = w * x
    y = z + b
    return dict(x=x, w=w, b=b, z=z, y=y, L=y ** 2)


def test_walk_visits_each_node_once_following_next_functions():
    t = hand_trace_graph()
    nodes, edges = walk(t["L"])
    assert [type(n).__name__ for n in nodes] == [
        "PowBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad", "AccumulateGrad", "AccumulateGrad",
    ]
    # every edge is an entry of next_functions, and every non-None entry is an edge
    for i, node in enumerate(nodes):
        children = [nodes[j] for a, j in edges if a == i]
        assert children == [fn for fn, _ in node.next_functions if fn is not None]


def test_a_fork_is_one_node_with_two_incoming_edges():
    a = torch.tensor(3.0, requires_grad=True)
    nodes, edges = walk(a * a)
    assert [type(n).__name__ for n in nodes] == ["MulBackward0", "AccumulateGrad"]
    assert edges == [(0, 1), (0, 1)]


def test_inputs_without_grad_are_left_out():
    w = torch.tensor(3.0, requires_grad=True)
    nodes, edges = walk(w * torch.tensor(2.0))
    assert len(nodes) == 2 and edges == [(0, 1)]


def test_mermaid_labels_leaves_by_name_and_is_deterministic():
    t = hand_trace_graph()
    names = {k: t[k] for k in "xwb"}
    text = to_mermaid(t["L"], names)
    assert text == to_mermaid(t["L"], names)
    assert text.splitlines()[0] == "flowchart LR"
    assert '["AccumulateGrad (w)"]' in text and text.count(" --> ") == 5
    leaf_node = t["w"].grad_fn  # None: a leaf has no grad_fn
    assert leaf_node is None
    assert node_label(t["z"].grad_fn) == "MulBackward0"


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: torch.tensor(1.0, requires_grad=True), ValueError, "is a leaf"),
        (lambda: torch.tensor(1.0) * 2, ValueError, "no grad_fn"),
        (lambda: 3.0, TypeError, "expected a torch.Tensor, got float"),
    ],
)
def test_walk_rejects_tensors_without_a_graph(make, error, message):
    with pytest.raises(error, match=message):
        walk(make())


def test_mermaid_escapes_a_quote_in_a_name():
    t = hand_trace_graph()
    text = to_mermaid(t["L"], {'w"]': t["w"]})
    assert '["AccumulateGrad (w#quot;])"]' in text
    assert all(line.count('"') in (0, 2) for line in text.splitlines())


def test_to_mermaid_rejects_unknown_direction():
    with pytest.raises(ValueError, match="direction must be one of"):
        to_mermaid(hand_trace_graph()["L"], direction="sideways")


def test_gradients_match_the_hand_trace_and_backward():
    t = hand_trace_graph()
    grads = gradients(t["L"], **t)
    assert {k: v.item() for k, v in grads.items()} == {"x": 42.0, "w": 28.0, "b": 14.0, "z": 14.0, "y": 14.0, "L": 1.0}
    assert t["w"].grad is None  # autograd.grad writes no .grad
    t["L"].backward()  # the graph was retained
    for leaf in "xwb":
        assert t[leaf].grad.item() == grads[leaf].item()


def test_gradients_at_an_asymmetric_point_against_the_formulas():
    x, w, b = -1.5, 0.25, 4.0
    t = hand_trace_graph(x, w, b)
    y = w * x + b
    grads = gradients(t["L"], x=t["x"], w=t["w"], b=t["b"])
    assert grads["w"].item() == pytest.approx(2 * y * x)
    assert grads["x"].item() == pytest.approx(2 * y * w)
    assert grads["b"].item() == pytest.approx(2 * y)


@pytest.mark.parametrize(
    "loss, kwargs, message",
    [
        (lambda t: t["w"] * torch.ones(2), lambda t: {"w": t["w"]}, r"scalar tensor, got \(2,\)"),
        (lambda t: 1.0, lambda t: {"w": t["w"]}, "scalar tensor, got float"),
        (lambda t: t["L"].detach(), lambda t: {"w": t["w"]}, "does not require grad"),
        (lambda t: t["L"], lambda t: {}, "name at least one tensor"),
        (lambda t: t["L"], lambda t: {"c": torch.tensor(1.0)}, "c does not require grad"),
        (lambda t: t["L"], lambda t: {"v": torch.tensor(1.0, requires_grad=True)}, "no gradient from loss reaches v"),
    ],
)
def test_gradients_rejects_bad_input_with_a_message(loss, kwargs, message):
    t = hand_trace_graph()
    with pytest.raises(ValueError, match=message):
        gradients(loss(t), **kwargs(t))


def test_gradients_names_a_backward_that_returned_none():
    class Stop(torch.autograd.Function):  # uses w, and gives it no gradient
        @staticmethod
        def forward(ctx, w):
            return w * 2

        @staticmethod
        def backward(ctx, g):
            return None

    w = torch.tensor(1.0, requires_grad=True)
    with pytest.raises(ValueError, match="no gradient from loss reaches w: .* a backward on the way returned None"):
        gradients(Stop.apply(w) + 1.0 * w.detach(), w=w)
