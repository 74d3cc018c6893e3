"""See how a tensor lies over its storage: shape, strides, offset, and which tensors alias.

A strided tensor ``t`` reads element ``t[i0, i1, ...]`` from position

    t.storage_offset() + i0 * t.stride(0) + i1 * t.stride(1) + ...

of its storage (counted in elements, not bytes). A view is a second (shape, stride, offset)
over the same storage; a copy has a storage of its own.

Invariants: ``element_offsets(t)`` has ``t``'s shape, and indexing the flat storage with it
gives back ``t``'s values. ``shares_storage(a, b)`` is True when ``a`` and ``b`` are over one
storage (a write through one is seen through the other where their elements overlap).
"""

import torch


def _check_tensor(t, what="t"):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{what}: expected a torch.Tensor, got {type(t).__name__}")
    if t.layout != torch.strided:
        raise ValueError(f"{what}: only strided (dense) tensors have strides; got layout {t.layout}")


# --8<-- [start:describe]
def describe(t):
    """One line: shape, stride, storage offset and whether ``t`` is contiguous."""
    _check_tensor(t)
    return (
        f"shape {tuple(t.shape)}, stride {t.stride()}, offset {t.storage_offset()}, "
        f"contiguous {t.is_contiguous()}"
    )


def shares_storage(a, b):
    """True if ``a`` and ``b`` read the same storage (one is a view of the other, or both of one base).

    Compares the start address of the two storages. A storage of no bytes (``torch.empty(0)``'s)
    has no memory to share: for it the answer is False (an empty view of a tensor, ``x[:0]``,
    is still over ``x``'s storage: True).
    """
    _check_tensor(a, "a")
    _check_tensor(b, "b")
    if a.untyped_storage().nbytes() == 0 or b.untyped_storage().nbytes() == 0:
        return False
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
# --8<-- [end:describe]


def element_offsets(t):
    """The storage position (in elements) that each element of ``t`` reads; same shape as ``t``.

    ``offset + sum_k index_k * stride_k``, computed from ``t.shape``, ``t.stride()`` and
    ``t.storage_offset()`` alone (an int64 tensor).
    """
    _check_tensor(t)
    positions = torch.full(t.shape, t.storage_offset(), dtype=torch.int64)
    for dim, (size, stride) in enumerate(zip(t.shape, t.stride())):
        index_shape = [1] * t.dim()
        index_shape[dim] = size
        positions = positions + (torch.arange(size) * stride).reshape(index_shape)
    return positions
