"""Tests of snippets/evaluation.py: outputs checked against the model run by hand in eval mode
under no_grad, modes checked module by module, bytes checked against the saved-tensor counter."""

import pytest
import torch

from snippets import evaluation
from snippets.evaluation import HOWS, evaluate, evaluating, tracking_profile
from snippets.saved_bytes import track_saved

D_IN, H, D_OUT = 4, 8, 3


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(D_IN, H),
        torch.nn.BatchNorm1d(H),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.5),
        torch.nn.Linear(H, D_OUT),
    )


def batches(sizes=(5, 3, 7)):
    g = torch.Generator().manual_seed(1)
    return [torch.randn(n, D_IN, generator=g) for n in sizes]


def reference_outputs(model, xs):
    """Eval mode and no_grad, by hand: what evaluate must reproduce."""
    was = model.training
    model.eval()
    with torch.no_grad():
        out = torch.cat([model(x) for x in xs])
    model.train(was)
    return out


def test_evaluate_matches_eval_mode_under_no_grad():
    model = make_model()
    model.train()
    xs = batches()
    want = reference_outputs(model, xs)
    got = evaluate(model, xs)
    assert got.shape == (sum(len(x) for x in xs), D_OUT)
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_evaluate_is_deterministic_despite_dropout():
    model = make_model()
    model.train()
    xs = batches()
    assert torch.equal(evaluate(model, xs), evaluate(model, xs))
    # the bug it prevents: in train mode, dropout makes two passes differ
    with torch.no_grad():
        assert not torch.equal(model(xs[0]), model(xs[0]))


def test_evaluate_records_no_graph_and_keeps_no_saved_tensors():
    model = make_model()
    with track_saved(exclude=model.parameters()) as saved:
        out = evaluate(model, batches())
    assert saved.calls == 0 and saved.alive_bytes() == 0
    assert not out.requires_grad and out.grad_fn is None
    assert out.is_inference()
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


def test_evaluate_does_not_move_batchnorm_statistics():
    model = make_model()
    model.train()
    bn = model[1]
    mean, var, n = bn.running_mean.clone(), bn.running_var.clone(), bn.num_batches_tracked.clone()
    evaluate(model, batches())
    assert torch.equal(bn.running_mean, mean) and torch.equal(bn.running_var, var)
    assert torch.equal(bn.num_batches_tracked, n)


@pytest.mark.parametrize("training", [True, False])
def test_previous_mode_is_restored(training):
    model = make_model()
    model.train(training)
    evaluate(model, batches())
    assert all(m.training is training for m in model.modules())


def test_mixed_submodule_modes_are_restored_one_by_one():
    model = make_model()
    model.train()
    model[1].eval()  # a frozen batch norm inside a training model
    evaluate(model, batches())
    assert model.training and model[0].training and model[3].training
    assert model[1].training is False


def test_modes_restored_after_an_exception():
    model = make_model()
    model.train()
    with pytest.raises(RuntimeError):
        # wrong feature size: the Linear raises inside the block
        evaluate(model, [torch.randn(2, D_IN + 1)])
    assert all(m.training for m in model.modules())
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


def test_evaluating_yields_the_model_in_eval_and_inference_mode():
    model = make_model()
    model.train()
    with evaluating(model) as m:
        assert m is model
        assert not any(sub.training for sub in model.modules())
        assert torch.is_inference_mode_enabled()
    assert model.training


def test_input_errors_say_what_to_do():
    model = make_model()
    with pytest.raises(TypeError, match="torch.nn.Module"):
        evaluate(lambda x: x, batches())
    with pytest.raises(ValueError, match="at least one input tensor"):
        evaluate(model, [])
    with pytest.raises(TypeError, match="pass input tensors only"):
        evaluate(model, [(torch.randn(2, D_IN), torch.randn(2))])
    with pytest.raises(ValueError, match="how must be one of"):
        tracking_profile(model, torch.randn(2, D_IN), "off")
    with pytest.raises(ValueError, match="BatchNorm layer and a Dropout layer"):
        tracking_profile(torch.nn.Linear(D_IN, 2), torch.randn(2, D_IN), "grad")
    with pytest.raises(TypeError, match="input tensor"):
        tracking_profile(model, [1.0], "grad")


class Pair(torch.nn.Module):  # returns (output, hidden), as nn.LSTM does
    def forward(self, x):
        return x, x


class Mean(torch.nn.Module):  # returns a 0-d tensor
    def forward(self, x):
        return x.mean()


@pytest.mark.parametrize("model, what", [(Pair(), "tuple"), (Mean(), "a 0-d tensor")])
def test_evaluate_names_an_output_it_cannot_join(model, what):
    with pytest.raises(TypeError, match=f"model returned {what} for batch 0; .* shape \\(B, ...\\)"):
        evaluate(model, batches())


def test_tracking_profile_refuses_what_it_cannot_measure():
    untracked = make_model()
    untracked[1] = torch.nn.BatchNorm1d(H, track_running_stats=False)
    with pytest.raises(ValueError, match="keeps no running statistics"):
        tracking_profile(untracked, torch.randn(4, D_IN), "grad")
    with pytest.raises(ValueError, match="x is empty"):  # every measurement would read "unchanged"
        tracking_profile(make_model(), torch.randn(0, D_IN), "grad")
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):  # torch's own check
        tracking_profile(make_model(), torch.randn(1, D_IN), "grad")


def test_tracking_profile_reads_any_dropout_layer():
    model = make_model()
    model[3] = torch.nn.Dropout1d(0.5)  # drops whole channels of (N, C, L) or (C, L) inputs
    assert tracking_profile(model, torch.randn(16, D_IN), "grad")["dropout_active"]


def test_tracking_profile_against_direct_observation():
    model = make_model()
    x = torch.randn(16, D_IN)
    profile = {how: tracking_profile(model, x, how) for how in HOWS}
    # recording: only grad mode on records, whatever the layer mode
    assert profile["grad"]["requires_grad"] and profile["eval"]["requires_grad"]
    for how in ("no_grad", "inference_mode", "detach", "eval+inference_mode"):
        assert not profile[how]["requires_grad"]
    assert profile["no_grad"]["saves"] == profile["inference_mode"]["saves"] == 0
    assert profile["detach"]["saves"] == profile["grad"]["saves"] > 0  # recorded, then cut
    assert profile["detach"]["kept_bytes"] == 0 < profile["grad"]["kept_bytes"]
    # layer behaviour: only eval mode changes it
    for how in ("grad", "no_grad", "inference_mode", "detach"):
        assert profile[how]["dropout_active"] and profile[how]["bn_stats_move"]
    for how in ("eval", "eval+inference_mode"):
        assert not profile[how]["dropout_active"] and not profile[how]["bn_stats_move"]
    # inference tensors: no version counter, cannot be saved for backward
    for how in HOWS:
        inference = how in ("inference_mode", "eval+inference_mode")
        assert profile[how]["version_counter"] is not inference
        assert profile[how]["joins_graph"] is not inference
        assert profile[how]["params_require_grad"]


def test_params_require_grad_is_read_during_the_pass(monkeypatch):
    # a construct that froze the parameters for the pass and unfroze them after it: the
    # profile must see the frozen flag (a reading taken after the construct saw True)
    real_forward = evaluation._forward

    def freezing_forward(model, x, how):
        model.requires_grad_(False)
        try:
            return real_forward(model, x, how)
        finally:
            model.requires_grad_(True)

    monkeypatch.setattr(evaluation, "_forward", freezing_forward)
    model = make_model()
    assert tracking_profile(model, torch.randn(16, D_IN), "no_grad")["params_require_grad"] is False
    assert all(p.requires_grad for p in model.parameters())


def test_tracking_profile_bytes_match_a_hand_count():
    # eval mode, grad on: the first Linear saves its input x (N, D_IN); BatchNorm in eval
    # saves its input (N, H); ReLU saves its output (N, H), which the last Linear saves
    # again (Dropout in eval mode is the identity); BatchNorm also saves its running mean
    # and variance (H,) each, buffers that are not excluded. Float32: 4 bytes each.
    model = make_model()
    N = 16
    x = torch.randn(N, D_IN)
    kept = tracking_profile(model, x, "eval")["kept_bytes"]
    assert kept == 4 * (N * (D_IN + H + H) + 2 * H)


def test_tracking_profile_leaves_the_model_as_it_was():
    model = make_model()
    model.train()
    model[1].eval()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    for how in HOWS:
        tracking_profile(model, torch.randn(8, D_IN), how)
    for k, v in model.state_dict().items():
        assert torch.equal(v, state[k]), k
    assert [m.training for m in model.modules()] == [True, True, False, True, True, True]
    assert all(p.grad is None for p in model.parameters())


def test_a_lazy_layer_is_refused_until_a_forward_pass_created_it():
    """Created under inference mode, a lazy weight would be an inference tensor that never trains."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LazyLinear(2), torch.nn.LazyBatchNorm1d())
    x = torch.ones(4, 3)
    for call in (lambda: evaluate(model, [x]), lambda: evaluating(model).__enter__()):
        with pytest.raises(ValueError, match=r"lazy layer whose 0.weight is not created yet: run one forward pass "
                                             "outside inference mode first"):
            call()
    assert isinstance(model[0].weight, torch.nn.parameter.UninitializedParameter)   # refused before any forward
    model(x).sum().backward()                     # created outside inference mode: it trains
    assert model[0].weight.grad is not None and not model[0].weight.is_inference()
    assert evaluate(model, [x]).shape == (4, 2)


def test_tracking_profile_refuses_a_batch_with_nan():
    """A NaN in x: two passes cannot tell a dropped entry (NaN * 0) from a kept one, in any mode."""
    x = torch.randn(4, D_IN)
    x[0, 0] = float("nan")
    for how in ("grad", "eval"):
        with pytest.raises(ValueError, match="x holds NaN or inf, through which dropout cannot be seen"):
            tracking_profile(make_model(), x, how)
    model = make_model()
    with torch.no_grad():
        model[-1].weight[0, 0] = float("nan")     # the model makes the NaN itself
    for how in ("grad", "eval"):
        with pytest.raises(ValueError, match="the model's output holds NaN or inf"):
            tracking_profile(model, torch.randn(4, D_IN), how)
