"""Scaled dot-product attention with a causal mask.

    q, k, v    (B, T, d)  float32 or float64
    out        (B, T, d)  out = softmax(q @ k^T / sqrt(d), with position t seeing only s <= t) @ v

    backward(grad_out (B, T, d), q, k, v) -> (grad_q, grad_k, grad_v), each (B, T, d)
"""

import torch
import torch.nn.functional as F


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
TWICE = True
SHAPES = {"q, k, v (2, 4, 3)": (2, 4, 3), "batch 1: q, k, v (1, 5, 8)": (1, 5, 8),
          "one position: q, k, v (1, 1, 4)": (1, 1, 4), "q, k, v (1, 3, 2)": (1, 3, 2)}
CASES = tuple(SHAPES)[:3]
GRADCHECK = "q, k, v (1, 3, 2)"
STABLE = ()


def inputs(label, dtype):
    gen = torch.Generator().manual_seed(list(SHAPES).index(label))
    return tuple(torch.randn(SHAPES[label], generator=gen, dtype=dtype) for _ in range(3))


def torch_forward(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


HINTS = {
    "forward": "scores q @ k^T / sqrt(d); set the entries above the diagonal (the future) to -inf "
               "before the softmax over the last dimension; then multiply by v",
    "backward:grad_v": "grad_v = P^T @ grad_out, with P the softmax of the masked, scaled scores: "
                       "recompute P in backward exactly as forward did, mask included",
    "backward:grad_q": "grad_q = grad_S @ k / sqrt(d), with grad_P = grad_out @ v^T and the softmax backward "
                       "grad_S = P * (grad_P - rowsum(grad_P * P)); P is recomputed with the mask and the "
                       "scale of forward, and the 1/sqrt(d) comes back in backward",
    "backward:grad_k": "grad_k = grad_S^T @ q / sqrt(d): the scores are q @ k^T, so k's gradient "
                       "takes the transpose, and the 1/sqrt(d) comes back",
}
