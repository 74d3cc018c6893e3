"""Shape assertions with named dimensions, for module boundaries.

``expect_shape(x, "N D", "x")`` checks that ``x`` has two dimensions and binds their sizes to
the names N and D; it returns the sizes it knows, so the next check can require the same N:

    dims = expect_shape(x, "N D", "x")            # {"N": 32, "D": 16}
    expect_shape(y, "N", "y", **dims)               # y must be (32,)

A spec is a string of space-separated tokens, one per dimension: a name (a Python
identifier, bound to a size) or a literal size (``1``, ``3``). Invariant: a name means one
size everywhere in a spec and in the sizes passed in; the returned dict holds the sizes
passed in plus every name the spec bound.
"""

import torch


class ShapeError(AssertionError):
    """A tensor has the wrong shape; the message names the tensor, the spec and the dimension."""


def _parse(spec):
    if not isinstance(spec, str):
        raise TypeError(f'spec must be a string such as "N D", got {type(spec).__name__}')
    tokens = spec.split()
    for token in tokens:
        if not (token.isidentifier() or (token.isascii() and token.isdigit())):
            raise ValueError(
                f"spec {spec!r}: {token!r} is neither a dimension name nor a size; "
                'write names and sizes separated by spaces, e.g. "N 1" or "B T C"'
            )
    return tokens


# --8<-- [start:expect_shape]
def expect_shape(t, spec, name="tensor", /, **sizes):
    """Check ``t.shape`` against ``spec``; return ``sizes`` updated with the names it bound.

    ``spec``: e.g. ``"N D"``; ``"N 1"``; ``""`` for a 0-d tensor.
    ``sizes``: sizes already known, e.g. ``N=32``; a name in ``spec`` must match them (any
    name, ``t`` and ``name`` too: the first three arguments are positional only).
    Raises ``ShapeError`` naming the tensor, the expected and the actual shape.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    for key, size in sizes.items():
        if key == "name" and isinstance(size, str):
            raise TypeError(f"pass the tensor's name positionally, expect_shape(t, spec, {size!r}), "
                            "not as name=: a keyword is a size")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"size {key}={size!r} must be a non-negative int")
    tokens = _parse(spec)
    known = dict(sizes)
    expected = "(" + ", ".join(tokens) + ("," if len(tokens) == 1 else "") + ")"
    actual = tuple(t.shape)
    if len(tokens) != len(actual):
        raise ShapeError(
            f"{name}: expected {_count(len(tokens))} {expected}, got {_count(len(actual))}: "
            f"shape {actual}"
        )
    for dim, (token, size) in enumerate(zip(tokens, actual)):
        want = int(token) if token.isdigit() else known.get(token)
        if want is None:
            known[token] = size  # first time this name is seen: bind it
        elif size != want:
            label = f"dimension {dim}" if token.isdigit() else f"dimension {dim} ({token})"
            raise ShapeError(
                f"{name}: expected {expected}{_bound(tokens, known)}, got shape {actual}: "
                f"{label} is {size}, expected {want}"
            )
    return known
# --8<-- [end:expect_shape]


def _bound(tokens, known):
    names = [t for t in dict.fromkeys(tokens) if not t.isdigit()]
    pairs = [f"{n}={known[n]}" for n in names if n in known]
    return " with " + ", ".join(pairs) if pairs else ""


def _count(n):
    return f"{n} dimension" if n == 1 else f"{n} dimensions"
