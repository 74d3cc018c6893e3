"""Tests of snippets/views.py: positions checked against the storage torch really reads, and
aliasing checked by writing through one tensor and looking through the other."""

import warnings

import pytest
import torch

from snippets.views import describe, element_offsets, is_nested, shares_storage


def base():
    return torch.arange(24.0).reshape(2, 3, 4).clone()  # a base tensor, not a view


VIEWS = {
    "view": lambda a: a.view(6, 4),
    "transpose": lambda a: a.transpose(0, 2),
    "permute": lambda a: a.permute(1, 2, 0),
    "slice": lambda a: a[:, 1:, ::2],
    "select": lambda a: a[1, 2],
    "expand": lambda a: a[:, :1, :].expand(2, 5, 4),
    "unsqueeze": lambda a: a.unsqueeze(1),
    "diagonal": lambda a: a[0].diagonal(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_offsets_index_the_flat_storage_to_give_the_tensor(name):
    a = base()
    v = VIEWS[name](a)
    flat = a.reshape(-1)  # a is contiguous, so its storage in order is a.reshape(-1)
    positions = element_offsets(v)
    assert positions.shape == v.shape
    assert torch.equal(flat[positions], v)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_storage_and_a_write_shows_through(name):
    a = base()
    v = VIEWS[name](a)
    assert shares_storage(a, v) and shares_storage(v, a)
    before = a.clone()
    a.add_(100)  # write through the base
    assert torch.equal(v, VIEWS[name](before + 100))


@pytest.mark.parametrize(
    "copy",
    [
        lambda a: a.clone(),
        lambda a: a[:, torch.tensor([0, 2])],
        lambda a: a[a > 5],
        lambda a: a.transpose(0, 2).contiguous(),
        lambda a: a.transpose(0, 2).reshape(-1),
    ],
)
def test_copies_do_not_share_storage(copy):
    a = base()
    c = copy(a)
    assert not shares_storage(a, c)
    snapshot = c.clone()
    a.add_(100)
    assert torch.equal(c, snapshot)


def test_offsets_of_a_contiguous_tensor_count_up():
    a = base()
    assert torch.equal(element_offsets(a).reshape(-1), torch.arange(24))
    assert torch.equal(element_offsets(a[1]).reshape(-1), torch.arange(12, 24))


def test_describe_reports_what_torch_reports():
    t = base().transpose(0, 2)[1:]
    text = describe(t)
    assert f"shape {tuple(t.shape)}" in text
    assert f"stride {t.stride()}" in text
    assert f"offset {t.storage_offset()}" in text
    assert "contiguous False" in text
    assert "contiguous True" in describe(base())


def test_empty_tensors_share_nothing():
    assert not shares_storage(torch.empty(0), torch.empty(0))


def test_two_storages_over_the_same_memory_share_it():
    # from_dlpack of a row makes a storage of its own that starts at the row: not a's start
    a = torch.zeros(2, 3)
    row = torch.from_dlpack(a[1])
    row[0] = -1.0
    assert a[1, 0] == -1.0 and shares_storage(a, row) and shares_storage(row, a)
    assert not shares_storage(torch.from_dlpack(a[1]), a[0].clone())


def test_meta_tensors_have_no_memory_to_share():
    with pytest.raises(ValueError, match="b is a meta tensor, which has no memory"):
        shares_storage(torch.ones(2), torch.empty(3, device="meta"))


def test_an_empty_view_is_still_over_its_base_storage():
    x = torch.arange(6.0)
    assert x[:0].numel() == 0 and shares_storage(x[:0], x)


@pytest.mark.parametrize("fn", [describe, element_offsets])
def test_non_tensor_and_sparse_inputs_are_rejected(fn):
    with pytest.raises(TypeError, match="expected a torch.Tensor, got list"):
        fn([1, 2])
    with pytest.raises(ValueError, match=r"only strided .* pass t.coalesce\(\).values\(\) for its memory"):
        fn(torch.eye(2).to_sparse())


def test_shares_storage_names_the_bad_argument():
    with pytest.raises(TypeError, match="b: expected a torch.Tensor"):
        shares_storage(torch.ones(1), 1.0)


def test_is_nested_reads_both_layouts_and_only_them():
    with warnings.catch_warnings():   # nested tensors are a prototype: torch says so once
        warnings.simplefilter("ignore", UserWarning)
        nested = [torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=layout)
                  for layout in (torch.strided, torch.jagged)]
        csr = torch.eye(2).to_sparse_csr()
    assert [is_nested(t) for t in nested] == [True, True]
    others = [torch.ones(2), torch.ones(()), torch.ones(0), torch.ones(4, 2).t(), torch.eye(2).to_sparse(), csr,
              torch.zeros(2, device="meta")]
    assert [is_nested(t) for t in others] == [False] * len(others)
    for t in nested:     # and the functions that read strides say which tensor to pass
        with pytest.raises(ValueError, match=r"a nested tensor\): pass one of its tensors, t.unbind\(\)\[i\]"):
            describe(t)
    with pytest.raises(TypeError, match="t: expected a torch.Tensor, got list"):
        is_nested([1.0])
