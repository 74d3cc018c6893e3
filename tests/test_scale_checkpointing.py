"""snippets.scale.checkpointing.checkpoint_costs: bytes saved and layers recomputed, against the
shapes; gradients unchanged by checkpointing; hooks removed, also after an error."""

import pytest
import torch
from torch import nn

from snippets.scale.checkpointing import MODES, checkpoint_costs

N, D = 4, 3


def blocks(depth=2):
    torch.manual_seed(0)
    return nn.Sequential(*(nn.Sequential(nn.Linear(D, 2 * D), nn.ReLU(), nn.Linear(2 * D, D))
                           for _ in range(depth)))


def batch(requires_grad=False):
    torch.manual_seed(1)
    return torch.randn(N, D).requires_grad_(requires_grad)


def test_bytes_follow_from_the_shapes():
    # plain: per block its input (N, D) and the ReLU output (N, 2D); then the output, saved by pow
    assert checkpoint_costs(blocks(2), batch(), "none")["saved"] == 4 * (2 * (N * D + N * 2 * D) + N * D)
    # checkpointed: per block its input only; then the output
    assert checkpoint_costs(blocks(2), batch(), "non-reentrant")["saved"] == 4 * (2 * N * D + N * D)


def test_non_reentrant_stops_in_the_second_linear():
    costs = checkpoint_costs(blocks(2), batch(), "non-reentrant")
    assert costs["started"] == {name: 1 for name in ("0.0", "0.1", "0.2", "1.0", "1.1", "1.2")}
    assert costs["finished"] == {"0.0": 1, "0.1": 1, "1.0": 1, "1.1": 1}


@pytest.mark.parametrize("mode", ["non-reentrant, no early stop", "reentrant"])
def test_without_early_stop_every_layer_runs_again(mode):
    costs = checkpoint_costs(blocks(2), batch(requires_grad=(mode == "reentrant")), mode)
    every = {name: 1 for name in ("0.0", "0.1", "0.2", "1.0", "1.1", "1.2")}
    assert costs["started"] == every and costs["finished"] == every


def test_nothing_runs_again_without_checkpointing():
    costs = checkpoint_costs(blocks(1), batch(), "none")
    assert costs["started"] == {} and costs["finished"] == {}


@pytest.mark.parametrize("mode", MODES[1:])
def test_gradients_are_those_of_the_plain_model(mode):
    plain = blocks()
    checkpoint_costs(plain, batch(requires_grad=True), "none")
    model = blocks()
    checkpoint_costs(model, batch(requires_grad=True), mode)
    for p, q in zip(plain.parameters(), model.parameters()):
        assert torch.equal(p.grad, q.grad)


def test_the_reentrant_variant_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="every block here is a segment, so no block would get a gradient"):
        checkpoint_costs(blocks(), batch(), "reentrant")


class Fails(nn.Module):
    def forward(self, x):
        raise RuntimeError("a layer that fails")


@pytest.mark.parametrize("model", [blocks(1), nn.Sequential(nn.Linear(D, D), Fails())], ids=["returns", "raises"])
def test_hooks_are_removed(model):
    try:
        checkpoint_costs(model, batch(), "non-reentrant")
    except RuntimeError as exc:
        assert "a layer that fails" in str(exc)
    for m in model.modules():
        assert not m._forward_hooks and not m._forward_pre_hooks
