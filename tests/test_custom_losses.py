"""Tests of snippets/custom_losses.py: values and gradients against torch's own logsumexp,
softmax and cross_entropy, gradcheck and gradgradcheck in float64, large inputs, bad inputs."""

import pytest
import torch
import torch.nn.functional as F
from torch.autograd.gradcheck import GradcheckError

from snippets.custom_losses import SoftmaxCrossEntropy, StableLogSumExp, StoredSoftmaxCrossEntropy
from snippets.saved_bytes import saved_bytes


def randn64(*shape, seed=0):
    torch.manual_seed(seed)
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


# ---- StableLogSumExp -----------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 3), (1, 1), (2, 3, 5), (7,)])
def test_logsumexp_value_and_gradient_match_torch(shape):
    x = randn64(*shape)
    g = torch.randn(shape[:-1], dtype=torch.float64)
    out = StableLogSumExp.apply(x)
    ref = torch.logsumexp(x, dim=-1)
    assert out.shape == ref.shape == shape[:-1]
    torch.testing.assert_close(out, ref)
    (mine,) = torch.autograd.grad(out, x, g)
    (want,) = torch.autograd.grad(ref, x, g)
    torch.testing.assert_close(mine, want)


def test_logsumexp_gradient_rows_are_the_softmax():
    x = randn64(3, 4)
    StableLogSumExp.apply(x).sum().backward()
    torch.testing.assert_close(x.grad, torch.softmax(x.detach(), dim=-1))
    torch.testing.assert_close(x.grad.sum(-1), torch.ones(3, dtype=torch.float64))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_logsumexp_passes_gradcheck_and_gradgradcheck(seed):
    x = randn64(4, 3, seed=seed)
    assert torch.autograd.gradcheck(StableLogSumExp.apply, (x,))
    assert torch.autograd.gradgradcheck(StableLogSumExp.apply, (x,))


def test_logsumexp_is_finite_where_the_naive_formula_overflows():
    x = torch.tensor([[1000.0, 1000.0], [-1000.0, -1000.0]], requires_grad=True)  # float32
    naive = torch.log(torch.exp(x).sum(-1))
    assert torch.isinf(naive).all()  # exp(1000) = inf, and exp(-1000) = 0 -> log 0 = -inf
    out = StableLogSumExp.apply(x)
    expected = torch.tensor([1000.0, -1000.0]) + torch.log(torch.tensor(2.0))
    torch.testing.assert_close(out.detach(), torch.logsumexp(x.detach(), dim=-1))
    torch.testing.assert_close(out.detach(), expected, rtol=1e-6, atol=1e-4)  # float32 spacing at 1000: 6e-5
    out.sum().backward()
    x_ref = x.detach().clone().requires_grad_(True)
    torch.logsumexp(x_ref, dim=-1).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad)  # torch's backward uses exp(x - out) too
    # exp(x - out) inherits the rounding of out (|out| * 6e-8 in float32): 0.5 to within 1e-4
    torch.testing.assert_close(x.grad, torch.full((2, 2), 0.5), rtol=0, atol=1e-4)


def test_logsumexp_of_a_row_of_minus_inf_matches_torch():
    x = torch.tensor([[float("-inf"), float("-inf")], [0.0, float("-inf")]])
    torch.testing.assert_close(StableLogSumExp.apply(x), torch.logsumexp(x, dim=-1))


@pytest.mark.parametrize(
    "bad, error, message",
    [
        (torch.tensor([[1, 2]]), TypeError, "floating-point"),
        ([[1.0, 2.0]], TypeError, "floating-point"),
        (torch.tensor(1.0), ValueError, "non-empty last dimension"),
        (torch.zeros(3, 0), ValueError, "non-empty last dimension"),
    ],
)
def test_logsumexp_rejects_bad_input(bad, error, message):
    with pytest.raises(error, match=message):
        StableLogSumExp.apply(bad)


# ---- SoftmaxCrossEntropy --------------------------------------------------------------------

TARGET = torch.tensor([0, 2, 1, 2])  # (N,) = (4,)


def test_cross_entropy_value_and_gradient_match_torch():
    logits = randn64(4, 3)
    loss = SoftmaxCrossEntropy.apply(logits, TARGET)
    ref = F.cross_entropy(logits, TARGET)
    assert loss.shape == torch.Size([])
    torch.testing.assert_close(loss, ref)
    (mine,) = torch.autograd.grad(loss, logits)
    (want,) = torch.autograd.grad(ref, logits)
    torch.testing.assert_close(mine, want)


def test_cross_entropy_gradient_is_softmax_minus_onehot_over_n():
    logits = randn64(4, 3)
    SoftmaxCrossEntropy.apply(logits, TARGET).backward()
    p = torch.softmax(logits.detach(), dim=1)
    p[torch.arange(4), TARGET] -= 1.0
    torch.testing.assert_close(logits.grad, p / 4)
    torch.testing.assert_close(logits.grad.sum(1), torch.zeros(4, dtype=torch.float64))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cross_entropy_passes_gradcheck_and_gradgradcheck(seed):
    logits = randn64(4, 3, seed=seed)
    fn = lambda t: SoftmaxCrossEntropy.apply(t, TARGET)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (logits,))
    assert torch.autograd.gradgradcheck(fn, (logits,))


def test_cross_entropy_second_derivative_matches_torch():
    logits = randn64(4, 3)
    v = torch.randn(4, 3, dtype=torch.float64)
    hv = []
    for loss_fn in (SoftmaxCrossEntropy.apply, F.cross_entropy):
        (g,) = torch.autograd.grad(loss_fn(logits, TARGET), logits, create_graph=True)
        (h,) = torch.autograd.grad((g * v).sum(), logits)  # a Hessian-vector product
        hv.append(h)
    torch.testing.assert_close(hv[0], hv[1])


def test_cross_entropy_is_finite_at_large_logits():
    logits = torch.tensor([[1000.0, 1000.0], [1000.0, 0.0]], requires_grad=True)  # float32
    target = torch.tensor([0, 1])
    loss = SoftmaxCrossEntropy.apply(logits, target)
    torch.testing.assert_close(loss.detach(), F.cross_entropy(logits.detach(), target))
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()


@pytest.mark.parametrize("fn", [SoftmaxCrossEntropy, StoredSoftmaxCrossEntropy])
def test_cross_entropy_keeps_the_log_2_of_a_tie_at_1e17(fn):
    # lse - logit rounds m + log 2 to m there (float64's spacing at 1e17 is 16): a loss of 0
    logits = torch.tensor([[1e17, 1e17, 0.0]], dtype=torch.float64, requires_grad=True)
    target = torch.tensor([0])
    loss = fn.apply(logits, target)
    loss.backward()
    reference = logits.detach().clone().requires_grad_()
    F.cross_entropy(reference, target).backward()
    torch.testing.assert_close(loss.detach(), torch.tensor(0.5, dtype=torch.float64).log().neg())
    torch.testing.assert_close(logits.grad, reference.grad)


def test_stored_variant_agrees_to_first_order_and_fails_gradgradcheck():
    logits = randn64(4, 3)
    fn = lambda t: StoredSoftmaxCrossEntropy.apply(t, TARGET)  # noqa: E731
    torch.testing.assert_close(fn(logits), F.cross_entropy(logits, TARGET))
    assert torch.autograd.gradcheck(fn, (logits,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        torch.autograd.gradgradcheck(fn, (logits,))


def test_stored_variant_keeps_one_more_n_by_c_tensor_when_the_logits_live_anyway():
    n, c = 8, 5
    torch.manual_seed(0)
    logits = torch.randn(n, c, requires_grad=True)  # a leaf: alive whatever the graph keeps
    target = torch.randint(0, c, (n,))
    _, recompute = saved_bytes(lambda: SoftmaxCrossEntropy.apply(logits, target))
    _, stored = saved_bytes(lambda: StoredSoftmaxCrossEntropy.apply(logits, target))
    assert recompute == n * c * 4 + n * 8  # logits (float32) + target (int64)
    assert stored == n * c * 4 + n * 8  # softmax + target: the same count ...
    _, recompute_extra = saved_bytes(lambda: SoftmaxCrossEntropy.apply(logits, target), exclude=[logits])
    _, stored_extra = saved_bytes(lambda: StoredSoftmaxCrossEntropy.apply(logits, target), exclude=[logits])
    assert recompute_extra == n * 8  # ... but saving the live input adds nothing
    assert stored_extra == n * c * 4 + n * 8


@pytest.mark.parametrize(
    "logits, target, error, message",
    [
        (torch.zeros(2, 3), torch.tensor([0.0, 1.0]), TypeError, "int64 tensor of class indices"),
        (torch.zeros(2, 3), torch.tensor([0, 1], dtype=torch.int32), TypeError, "use target.long"),
        (torch.zeros(2, 3), torch.tensor([0, 1, 2]), ValueError, r"shape \(N,\) = \(2,\)"),
        (torch.zeros(2, 3), torch.tensor([[0], [1]]), ValueError, r"shape \(N,\) = \(2,\)"),
        (torch.zeros(2, 3), torch.tensor([0, 3]), ValueError, r"outside \[0, 3\)"),
        (torch.zeros(2, 3, 4), torch.tensor([0, 1]), ValueError, r"logits must be \(N, C\)"),
        (torch.zeros(2, 3, dtype=torch.int64), torch.tensor([0, 1]), TypeError, "floating-point"),
        (torch.zeros(0, 3), torch.zeros(0, dtype=torch.int64), ValueError, "empty batch"),
    ],
)
@pytest.mark.parametrize("fn", [SoftmaxCrossEntropy, StoredSoftmaxCrossEntropy])
def test_cross_entropy_rejects_bad_input(fn, logits, target, error, message):
    with pytest.raises(error, match=message):
        fn.apply(logits, target)


@pytest.mark.parametrize("fn", [SoftmaxCrossEntropy, StoredSoftmaxCrossEntropy])
def test_cross_entropy_at_a_certain_row_and_an_infinite_logit_matches_torch(fn):
    # a loss of exactly 0 is +0.0, as torch's; a row holding +inf is NaN, as torch's (not inf)
    for row in ([[0.0, -1000.0]], [[float("inf"), 1.0]]):
        logits = torch.tensor(row, dtype=torch.float64)
        ours, theirs = fn.apply(logits, torch.tensor([0])), F.cross_entropy(logits, torch.tensor([0]))
        assert str(ours) == str(theirs), (row, ours, theirs)
