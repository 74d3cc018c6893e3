"""Tests of snippets/shapes.py: shapes made by torch operations, checked against specs
written by hand; every failure names the tensor, the dimension and both sizes."""

import pytest
import torch

from snippets.shapes import ShapeError, expect_shape


def test_binds_names_and_returns_them():
    x = torch.zeros(4, 3)
    assert expect_shape(x, "N D", "x") == {"N": 4, "D": 3}


def test_known_sizes_are_kept_and_enforced():
    x = torch.zeros(4, 3)
    dims = expect_shape(x, "N D", "x")
    y = (x @ torch.zeros(3, 2)).sum(1)  # (N,)
    assert expect_shape(y, "N", "y", **dims) == {"N": 4, "D": 3}
    with pytest.raises(ShapeError, match=r"y: expected \(D,\) with D=3, got shape \(4,\): dimension 0 \(D\) is 4, expected 3"):
        expect_shape(y, "D", "y", **dims)


def test_literal_sizes():
    expect_shape(torch.zeros(5, 1), "N 1")
    with pytest.raises(ShapeError, match=r"dimension 1 is 2, expected 1"):
        expect_shape(torch.zeros(5, 2), "N 1")


def test_a_repeated_name_must_mean_one_size():
    expect_shape(torch.zeros(3, 3), "D D")
    with pytest.raises(ShapeError, match=r"dimension 1 \(D\) is 4, expected 3"):
        expect_shape(torch.zeros(3, 4), "D D")


def test_the_broadcast_loss_bug_is_caught():
    pred = torch.zeros(4, 1)   # (N, 1)
    target = torch.zeros(4)    # (N,)
    diff = pred - target       # broadcasts to (N, N)
    assert diff.shape == (4, 4)
    dims = expect_shape(target, "N", "target")
    with pytest.raises(ShapeError, match=r"diff: expected 1 dimension \(N,\), got 2 dimensions: shape \(4, 4\)"):
        expect_shape(diff, "N", "diff", **dims)


def test_zero_d_tensor_has_the_empty_spec():
    assert expect_shape(torch.tensor(1.0), "", "loss") == {}
    with pytest.raises(ShapeError, match=r"loss: expected 0 dimensions \(\), got 1 dimension"):
        expect_shape(torch.ones(1), "", "loss")


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        (([1, 2], "N"), {}, TypeError, "expected a torch.Tensor, got list"),
        ((torch.zeros(2), 2), {}, TypeError, "spec must be a string"),
        ((torch.zeros(2), "N-1"), {}, ValueError, "neither a dimension name nor a size"),
        ((torch.zeros(2), "(N,)"), {}, ValueError, "neither a dimension name nor a size"),
        ((torch.zeros(2), "\u00b2"), {}, ValueError, "neither a dimension name nor a size"),  # isdigit()
        ((torch.zeros(2), "N"), {"N": 2.0}, ValueError, "must be a non-negative int"),
        ((torch.zeros(2), "N"), {"N": True}, ValueError, "must be a non-negative int"),
    ],
)
def test_bad_arguments_say_what_to_write(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        expect_shape(*args, **kwargs)


def test_any_name_passes_on_including_the_names_of_the_arguments():
    dims = expect_shape(torch.zeros(5, 3), "t name", "x")
    assert dims == {"t": 5, "name": 3}
    assert expect_shape(torch.zeros(5), "t", "y", **dims) == dims
    with pytest.raises(ShapeError, match=r"y: expected \(name,\) with name=3, got shape \(5,\)"):
        expect_shape(torch.zeros(5), "name", "y", **dims)


def test_shape_error_is_an_assertion_error():
    assert issubclass(ShapeError, AssertionError)


def test_a_name_passed_by_keyword_says_to_pass_it_positionally():
    with pytest.raises(TypeError, match=r"pass the tensor's name positionally, expect_shape\(t, spec, 'x'\)"):
        expect_shape(torch.zeros(2, 3), "N D", name="x")
