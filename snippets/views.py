"""See how a tensor lies over its storage: shape, strides, offset, and which tensors alias.

A strided tensor ``t`` reads element ``t[i0, i1, ...]`` from position

    t.storage_offset() + i0 * t.stride(0) + i1 * t.stride(1) + ...

of its storage (counted in elements, not bytes). A view is a second (shape, stride, offset)
over the same storage; a copy has a storage of its own.

Invariants: ``element_offsets(t)`` has ``t``'s shape, and indexing the flat storage with it
gives back ``t``'s values. ``shares_storage(a, b)`` is True when the memory of ``a``'s storage
and ``b``'s overlap: one storage, or two over the same memory (``torch.from_numpy`` of
overlapping arrays); a write through one is seen through the other where their elements overlap.
"""

import torch


def is_nested(t):
    """True if ``t`` is a nested tensor: several tensors of different shapes, so no single shape.

    Of the strided layout, it has no stride (``t.stride()`` raises); of the jagged layout, its
    layout says so. Any other tensor, sparse ones included, gives False.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"t: expected a torch.Tensor, got {type(t).__name__}")
    if t.layout == torch.strided:
        try:
            t.stride()
        except RuntimeError:
            return True
        return False
    return t.layout == torch.jagged


def _check_tensor(t, what="t"):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{what}: expected a torch.Tensor, got {type(t).__name__}")
    if is_nested(t):
        raise ValueError(f"{what}: this tensor has no single shape and stride (a nested tensor): pass one "
                         f"of its tensors, {what}.unbind()[i]")
    if t.layout != torch.strided:
        values = f"{what}.coalesce().values()" if t.layout == torch.sparse_coo else f"{what}.values()"
        raise ValueError(f"{what}: only strided (dense) tensors have strides; got layout {t.layout}: "
                         f"pass {values} for its memory ({what}.to_dense() is a copy)")


# --8<-- [start:describe]
def describe(t):
    """One line: shape, stride, storage offset and whether ``t`` is contiguous."""
    _check_tensor(t)
    return (
        f"shape {tuple(t.shape)}, stride {t.stride()}, offset {t.storage_offset()}, "
        f"contiguous {t.is_contiguous()}"
    )


def shares_storage(a, b):
    """True if ``a`` and ``b`` read the same memory (one is a view of the other, or both of one base).

    Compares the address ranges of the two storages: they overlap. A storage of no bytes
    (``torch.empty(0)``'s) has no memory to share: for it the answer is False (an empty view of
    a tensor, ``x[:0]``, is still over ``x``'s storage: True).
    """
    _check_tensor(a, "a")
    _check_tensor(b, "b")
    for what, t in (("a", a), ("b", b)):
        if t.is_meta:
            raise ValueError(f"{what} is a meta tensor, which has no memory: pass a tensor with data")
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if a.device != b.device or sa.nbytes() == 0 or sb.nbytes() == 0:
        return False
    return sa.data_ptr() < sb.data_ptr() + sb.nbytes() and sb.data_ptr() < sa.data_ptr() + sa.nbytes()
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
