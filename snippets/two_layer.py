"""A two-layer network, Linear -> ReLU -> Linear -> MSE, with its backward written by hand.

Shapes (names used throughout):

    X  (N, D_in)     input batch            Y  (N, D_out)   targets
    W1 (D_in, H)     first weight           b1 (H,)         first bias
    W2 (H, D_out)    second weight          b2 (D_out,)     second bias

Weights are stored (fan_in, fan_out), so a layer is ``X @ W + b``. (``torch.nn.Linear``
stores its weight as (fan_out, fan_in) and computes ``X @ weight.T + bias``.)

Invariant checked by the tests: every gradient ``backward`` returns has the shape of its
tensor and equals what ``torch.autograd.grad`` computes for the same loss, wherever the
gradients are finite (relu's mask, written as a product, turns an inf into NaN where torch's
relu gives 0).
"""

# --8<-- [start:forward]
import torch

SHAPES = {"X": ("N", "D_in"), "W1": ("D_in", "H"), "b1": ("H",),
          "W2": ("H", "D_out"), "b2": ("D_out",), "Y": ("N", "D_out")}


def _check_inputs(t):
    """Fail early, naming the tensor, on a missing tensor or a shape that does not fit."""
    missing = [k for k in SHAPES if k not in t]
    if missing:
        raise ValueError(f"missing {missing}: pass X, W1, b1, W2, b2 and Y (see make_tensors)")
    sizes = {}
    for name, dims in SHAPES.items():
        if not isinstance(t[name], torch.Tensor):
            raise TypeError(f"{name} must be a tensor of shape {dims}, got {type(t[name]).__name__}")
        shape = tuple(t[name].shape)
        if len(shape) != len(dims):
            raise ValueError(f"{name} must have shape {dims}, got {shape}")
        for dim, size in zip(dims, shape):
            if sizes.setdefault(dim, size) != size:
                raise ValueError(
                    f"{name} has {dim} = {size} but an earlier tensor has {dim} = {sizes[dim]}; "
                    f"expected shapes: {SHAPES}"
                )
        if not t[name].is_floating_point():
            raise ValueError(f"{name} must be a floating-point tensor, got {t[name].dtype}")
        if t[name].dtype != t["X"].dtype:
            raise TypeError(f"{name} is {t[name].dtype} and X {t['X'].dtype}: pass every tensor in one dtype")


def make_tensors(N=4, D_in=3, H=5, D_out=2, seed=0, dtype=torch.float64):
    """Random X, W1, b1, W2, b2, Y from their own generator (global RNG untouched).

    The weights and X require grad; Y does not.
    """
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (N, D_in, H, D_out)):
        raise TypeError(f"sizes must be ints, got N={N!r}, D_in={D_in!r}, H={H!r}, D_out={D_out!r}")
    if min(N, D_in, H, D_out) < 1:
        raise ValueError(f"every size must be at least 1, got N={N}, D_in={D_in}, H={H}, D_out={D_out}")
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise TypeError(f"dtype must be a floating-point dtype such as torch.float64, got {dtype!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, such as 0, got {seed!r}")
    gen = torch.Generator().manual_seed(seed)
    sizes = {"N": N, "D_in": D_in, "H": H, "D_out": D_out}
    t = {}
    for name, dims in SHAPES.items():
        t[name] = torch.randn(*(sizes[d] for d in dims), generator=gen, dtype=dtype)
        t[name].requires_grad_(name != "Y")
    return t


def forward(t):
    """Return the cache: the inputs plus Z1 (N, H), A1 = relu(Z1) (N, H), P (N, D_out), L ()."""
    _check_inputs(t)
    cache = dict(t)
    cache["Z1"] = t["X"] @ t["W1"] + t["b1"]         # (N, D_in) @ (D_in, H) + (H,) -> (N, H)
    cache["A1"] = torch.relu(cache["Z1"])            # (N, H)
    cache["P"] = cache["A1"] @ t["W2"] + t["b2"]     # (N, H) @ (H, D_out) + (D_out,) -> (N, D_out)
    cache["L"] = ((cache["P"] - t["Y"]) ** 2).mean()  # () : mean over N * D_out numbers
    return cache


def shapes(tensors, names):
    """One line per name: the name and its shape as a tuple, e.g. ``Z1  (4, 5)``."""
    if isinstance(names, str):
        raise TypeError(f"names must be a list of names, e.g. [{names!r}], got the string {names!r}")
    unknown = [n for n in names if n not in tensors]
    if unknown:
        raise ValueError(f"no tensor named {unknown}; known: {sorted(tensors)}")
    return "\n".join(f"{n:<3} {tuple(tensors[n].shape)}" for n in names)
# --8<-- [end:forward]


# --8<-- [start:backward]
def backward(cache):
    """Gradients of L with respect to P, A1, Z1, X and the parameters, by hand.

    Each line is the vector-Jacobian product of one forward operation; the upstream
    gradient g of each line is the result of the line above it.
    """
    missing = [k for k in ("X", "W1", "W2", "Y", "Z1", "A1", "P") if k not in cache]
    if missing:
        raise ValueError(f"cache lacks {missing}: pass the dict that forward() returns")
    X, W1, W2, Y = cache["X"], cache["W1"], cache["W2"], cache["Y"]
    Z1, A1, P = cache["Z1"], cache["A1"], cache["P"]
    g = {}
    g["P"] = 2 * (P - Y) / P.numel()      # mean of squares      (N, D_out)
    g["W2"] = A1.T @ g["P"]               # (H, N) @ (N, D_out)  -> (H, D_out)
    g["b2"] = g["P"].sum(0)               # bias broadcast over N -> (D_out,)
    g["A1"] = g["P"] @ W2.T               # (N, D_out) @ (D_out, H) -> (N, H)
    g["Z1"] = g["A1"] * (Z1 > 0)          # relu: pass where Z1 > 0 (N, H)
    g["W1"] = X.T @ g["Z1"]               # (D_in, N) @ (N, H)   -> (D_in, H)
    g["b1"] = g["Z1"].sum(0)              # (H,)
    g["X"] = g["Z1"] @ W1.T               # (N, H) @ (H, D_in)   -> (N, D_in)
    return {k: v.detach() for k, v in g.items()}
# --8<-- [end:backward]
