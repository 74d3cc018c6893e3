"""snippets.scale.mixed_precision: the spacing of a dtype, the updates it keeps, and a GradScaler
step in the right order (clip after unscale_, a skipped step read from the scale)."""

import math

import pytest
import torch
from torch import nn

from snippets.scale.mixed_precision import applied_update, scaled_step, ulp


@pytest.mark.parametrize("x, dtype, want", [
    (1.0, torch.bfloat16, 2.0 ** -7),       # 8 significant bits
    (1.5, torch.bfloat16, 2.0 ** -7),
    (3.0, torch.bfloat16, 2.0 ** -6),       # one binade up: twice the gap
    (-3.0, torch.bfloat16, 2.0 ** -6),      # the spacing at |x|
    (0.1, torch.bfloat16, 2.0 ** -11),      # 0.1 rounds into [2**-4, 2**-3)
    (1.0, torch.float16, 2.0 ** -10),       # 11 significant bits
    (1e-6, torch.float16, 2.0 ** -24),      # a subnormal: the fixed spacing below the smallest normal
    (1.0, torch.float32, 2.0 ** -23),
    (1.0, torch.float64, 2.0 ** -52),
])
def test_ulp_is_the_gap_to_the_next_number(x, dtype, want):
    assert ulp(x, dtype) == want


@pytest.mark.parametrize("w, delta, want", [
    (1.5, 0.003, 0.0),                      # below half the gap (2**-8): lost
    (1.5, -0.001, 0.0),
    (1.5, 0.004, 2.0 ** -7),                # above half the gap: a whole gap
    (1.5, 0.0078125, 2.0 ** -7),
    (1.0, 2.0 ** -8, 0.0),                  # a tie: 1.0 is the even neighbour
    (1.0 + 2.0 ** -7, 2.0 ** -8, 2.0 ** -7),  # a tie: the even neighbour is above
    (1.0, -2.0 ** -9, 0.0),                 # below 1 the gap is 2**-8: a tie, 1.0 is even
    (1.0, -0.003, -(2.0 ** -8)),            # more than half of that smaller gap
])
def test_applied_update_in_bfloat16(w, delta, want):
    assert applied_update(w, delta, torch.bfloat16) == want


def test_float32_keeps_what_bfloat16_loses():
    assert applied_update(1.5, 0.003, torch.float32) == pytest.approx(0.003, rel=1e-4)


def _model_opt_scaler(**scaler_kwargs):
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    return model, torch.optim.SGD(model.parameters(), lr=1.0), torch.amp.GradScaler("cpu", **scaler_kwargs)


def _loss(model, scale=1.0):
    torch.manual_seed(1)
    return model(torch.randn(8, 4)).pow(2).mean() * scale


def test_the_norm_is_the_true_gradient_norm_and_the_step_is_clipped():
    model, opt, scaler = _model_opt_scaler()
    reference = nn.Linear(4, 1)
    reference.load_state_dict(model.state_dict())
    _loss(reference, scale=100.0).backward()                    # a norm far above max_norm
    true_norm = torch.cat([p.grad.flatten() for p in reference.parameters()]).norm().item()
    before = [p.detach().clone() for p in model.parameters()]
    log = scaled_step(_loss(model, scale=100.0), opt, scaler, max_norm=1.0)
    assert log["norm"] == pytest.approx(true_norm, rel=1e-4)    # not true_norm * 65536
    step = torch.cat([(b - p.detach()).flatten() for b, p in zip(before, model.parameters())])
    assert step.norm().item() == pytest.approx(1.0, rel=1e-4)   # lr 1: the clipped gradient itself
    assert log["stepped"] is True


def test_without_max_norm_there_is_no_norm_and_the_step_is_the_gradient():
    model, opt, scaler = _model_opt_scaler()
    reference = nn.Linear(4, 1)
    reference.load_state_dict(model.state_dict())
    _loss(reference).backward()
    want = [p.detach() - p.grad for p in reference.parameters()]
    log = scaled_step(_loss(model), opt, scaler)
    assert log["norm"] is None
    for got, w in zip(model.parameters(), want):
        torch.testing.assert_close(got.detach(), w, rtol=1e-5, atol=1e-6)


def test_an_inf_skips_the_step_and_halves_the_scale():
    model, opt, scaler = _model_opt_scaler()
    before = [p.detach().clone() for p in model.parameters()]
    log = scaled_step(_loss(model) * math.inf, opt, scaler, max_norm=1.0)
    assert log["stepped"] is False
    assert log["scale"] == 65536.0 / 2
    assert all(torch.equal(b, p.detach()) for b, p in zip(before, model.parameters()))


def test_a_clean_step_that_grows_the_scale_counts_as_stepped():
    model, opt, scaler = _model_opt_scaler(growth_interval=1)
    log = scaled_step(_loss(model), opt, scaler)
    assert log["stepped"] is True and log["scale"] == 2 * 65536.0


def test_a_scale_whose_reciprocal_overflows_is_refused_before_it_writes_inf():
    model, opt, scaler = _model_opt_scaler(init_scale=2.0 ** -127)
    scaled_step(_loss(model) * math.inf, opt, scaler)                 # skipped: the scale halves
    assert scaler.get_scale() == 2.0 ** -128                          # 144 halvings from 65536
    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(FloatingPointError, match=r"reciprocal overflows float32: .*scaler.update\(new_scale=2.0\*\*16\)"):
        scaled_step(_loss(model), opt, scaler)                        # finite: would step with inf or NaN
    assert all(torch.equal(b, p.detach()) for b, p in zip(before, model.parameters()))


@pytest.mark.parametrize("scale", [2.0 ** -128, 2.0 ** -149, 0.0])
def test_smaller_scales_down_to_zero_are_refused(scale):
    model, opt, scaler = _model_opt_scaler(init_scale=scale)
    with pytest.raises(FloatingPointError, match="reciprocal overflows float32"):
        scaled_step(_loss(model), opt, scaler)


def test_the_smallest_scale_with_a_finite_reciprocal_still_steps():
    model, opt, scaler = _model_opt_scaler(init_scale=2.0 ** -127)
    assert scaled_step(_loss(model), opt, scaler)["stepped"] is True


def test_a_disabled_scaler_still_steps():
    model, opt, _ = _model_opt_scaler()
    log = scaled_step(_loss(model), opt, torch.amp.GradScaler("cpu", enabled=False), max_norm=1.0)
    assert log["stepped"] is True and log["scale"] == 1.0
