"""Tests of snippets/precision.py: tolerances checked against finfo arithmetic, and the
helper must pass correct ops and fail numerically broken ones."""

import math

import pytest
import torch

from snippets.precision import assert_close_to_reference, relative_error, tolerance

DTYPES = (torch.bfloat16, torch.float16)


def layer_norm(x):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + 1e-5)


def test_tolerance_is_the_stated_formula():
    assert tolerance(torch.bfloat16, 1) == pytest.approx(2 * 2.0**-7 + 2.0**-23)
    assert tolerance(torch.float16, 100) == pytest.approx(2 * 2.0**-10 + 10 * 2.0**-23)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [16, 256])
def test_correct_ops_pass(dtype, n):
    g = torch.Generator().manual_seed(n)
    A = torch.randn(8, n, dtype=torch.float64, generator=g)
    B = torch.randn(n, 8, dtype=torch.float64, generator=g)
    assert_close_to_reference(torch.matmul, A, B, dtype=dtype, n=n)
    assert_close_to_reference(lambda t: torch.softmax(t, -1), 3 * A, dtype=dtype, n=n)
    assert_close_to_reference(layer_norm, A, dtype=dtype, n=n)
    assert_close_to_reference(layer_norm, A, dtype=dtype, n=n,
                              reference=lambda t: torch.nn.functional.layer_norm(t, (n,), eps=1e-5))


def test_fails_on_softmax_that_overflows_in_float16():
    def naive_softmax(x):
        e = x.exp()  # exp(20) > 65504, the float16 maximum
        return e / e.sum(-1, keepdim=True)

    x = torch.randn(4, 16, dtype=torch.float64) + 20
    assert_close_to_reference(naive_softmax, x, dtype=torch.bfloat16, n=16)  # range is wide enough
    with pytest.raises(AssertionError, match="exceeds tolerance"):
        assert_close_to_reference(naive_softmax, x, dtype=torch.float16, n=16)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fails_on_a_sum_accumulated_in_low_precision(dtype):
    def loop_sum(x):
        acc = torch.zeros(x.shape[0], dtype=x.dtype)
        for i in range(x.shape[1]):
            acc = acc + x[:, i]  # rounds to dtype at every step
        return acc

    x = torch.rand(4, 512, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert relative_error(loop_sum, x, dtype=dtype) > 3 * torch.finfo(dtype).eps
    with pytest.raises(AssertionError, match="exceeds tolerance"):
        assert_close_to_reference(loop_sum, x, dtype=dtype, n=512)
    assert_close_to_reference(lambda t: t.sum(-1), x, dtype=dtype, n=512)


def test_fails_on_a_wrong_op_against_a_reference():
    x = torch.randn(4, 8, dtype=torch.float64)
    with pytest.raises(AssertionError):
        assert_close_to_reference(lambda t: torch.softmax(t, 0), x, dtype=torch.bfloat16, n=8,
                                  reference=lambda t: torch.softmax(t, -1))


def test_input_checks():
    x = torch.randn(3, 3)
    with pytest.raises(TypeError, match="float64"):
        relative_error(torch.relu, x, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="positive int"):
        tolerance(torch.bfloat16, 0)
    with pytest.raises(ValueError, match="dtype must be"):
        tolerance(torch.float64, 4)
    with pytest.raises(TypeError, match="inputs' dtype"):
        relative_error(lambda t: t.float(), x.double(), dtype=torch.bfloat16)
    assert math.isinf(relative_error(lambda t: t * 1e5, x.double() + 5, dtype=torch.float16))  # overflows float16 only
    assert math.isnan(relative_error(lambda t: t * float("inf"), x.double() + 5, dtype=torch.float16))  # no finite reference


def test_an_op_that_writes_its_input_is_measured_against_the_unwritten_input():
    x = torch.linspace(-2, 2, 64, dtype=torch.float64)
    assert relative_error(torch.exp_, x, dtype=torch.bfloat16) == relative_error(torch.exp, x, dtype=torch.bfloat16)


def test_a_sum_that_overflows_reads_as_an_error_of_one_and_the_hint_names_overflow():
    def naive_softmax(t):
        e = t.exp()
        return e / e.sum(-1, keepdim=True)

    logits = torch.full((1, 16), 9.0, dtype=torch.float64)    # each exp fits float16, the sum does not
    assert relative_error(naive_softmax, logits, dtype=torch.float16) == 1.0
    with pytest.raises(AssertionError, match="look for overflow or accumulation in the low-precision dtype"):
        assert_close_to_reference(naive_softmax, logits, dtype=torch.float16, n=16)
