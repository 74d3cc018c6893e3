"""Scaled dot-product attention with a causal mask.

    q, k, v    (B, T, d)  float32 or float64
    out        (B, T, d)  out = softmax(q @ k^T / sqrt(d), with position t seeing only s <= t) @ v

    backward(grad_out (B, T, d), q, k, v) -> (grad_q, grad_k, grad_v), each (B, T, d)
"""

import torch
import torch.nn.functional as F

from snippets.workshop.check import _fmt, size


# --8<-- [start:forward]
def forward(q, k, v):
    T, d = q.shape[-2:]
    s = q @ k.transpose(-2, -1) / d ** 0.5                   # (B, T, T), scores
    future = torch.ones(T, T, dtype=torch.bool).triu(1)      # (T, T), True where s > t
    p = s.masked_fill(future, float("-inf")).softmax(dim=-1)  # (B, T, T), each row sums to 1
    return p @ v                                             # (B, T, d)
# --8<-- [end:forward]


# --8<-- [start:backward]
def backward(grad_out, q, k, v):
    T, d = q.shape[-2:]
    s = q @ k.transpose(-2, -1) / d ** 0.5                   # (B, T, T), recomputed as in forward
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    p = s.masked_fill(future, float("-inf")).softmax(dim=-1)  # (B, T, T), 0 on the future
    grad_v = p.transpose(-2, -1) @ grad_out                  # (B, T, d)
    grad_p = grad_out @ v.transpose(-2, -1)                  # (B, T, T)
    grad_s = p * (grad_p - (grad_p * p).sum(dim=-1, keepdim=True))  # softmax backward, row by row
    grad_q = grad_s @ k / d ** 0.5                           # (B, T, d)
    grad_k = grad_s.transpose(-2, -1) @ q / d ** 0.5         # (B, T, d)
    return grad_q, grad_k, grad_v
# --8<-- [end:backward]


# ------------------------------------------------------------------ what the checker needs
NAME = "attention"
TITLE = "scaled dot-product attention, causal mask"
SIGNATURE_FORWARD = "forward(q, k, v) -> out"
SIGNATURE_BACKWARD = "backward(grad_out, q, k, v) -> (grad_q, grad_k, grad_v)"
GRADS = ("grad_q", "grad_k", "grad_v")
DIFF = (0, 1, 2)


def cases(gen, dtype):
    """The cases of one run in ``dtype``, drawn with ``gen``: [(label, (q, k, v))]."""
    out = []
    for shape, what in (((size(gen, 2, 3), size(gen, 2, 6), size(gen, 2, 5)), ""),
                        ((1, size(gen, 2, 6), size(gen, 2, 8)), "batch 1: "),
                        ((size(gen, 1, 3), 1, size(gen, 2, 5)), "one position: ")):
        out.append((f"{what}q, k, v {_fmt(shape)}",
                    tuple(torch.randn(shape, generator=gen, dtype=dtype) for _ in range(3))))
    return out


def torch_forward(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


HINTS = {  # earned in order: where to look, the structure, a check by hand, the formula
    "forward": ["scores, a mask of the future, a softmax over the last dimension, then v",
                "scores q @ k^T / sqrt(d); entries above the diagonal set to -inf before the softmax",
                "with T = 1, out is v whatever q and k; for any T, out[:, 0] is v[:, 0]",
                "out = softmax(S masked above the diagonal) @ v, S = q @ k^T / sqrt(d)"],
    "grad_v": ["the output is a matmul of the attention weights P with v: write the shapes of P, v and grad_out",
               "recompute P in backward exactly as forward did, mask and scale included; one (T, T) @ (T, d) "
               "product, with P transposed",
               "with T = 1, grad_v is grad_out; the last position is seen by the last query only, so "
               "grad_v[:, -1] is P[:, -1, -1] times grad_out[:, -1]",
               "grad_v = P^T @ grad_out"],
    "grad_q": ["go back one step at a time: out from P, P from the scores S, S from q; the softmax step "
               "is the one to derive (the page derives its Jacobian)",
               "grad_P = grad_out @ v^T; the softmax's vector-Jacobian product is P times (grad_P minus "
               "a row-wise weighted sum); the scale 1/sqrt(d) comes back",
               "with T = 1, grad_q is 0 (one score, its softmax is 1 whatever it is); for any T, grad_q[:, 0] is 0",
               "grad_S = P * (grad_P - rowsum(grad_P * P)); grad_q = grad_S @ k / sqrt(d)"],
    "grad_k": ["the scores multiply q by the transpose of k: how does that transpose show up in k's gradient?",
               "the same grad_S as for q, transposed; the scale 1/sqrt(d) comes back",
               "with T = 1, grad_k is 0; the rows of grad_S sum to 0, so grad_k summed over positions is 0 "
               "for any q",
               "grad_k = grad_S^T @ q / sqrt(d)"],
}
