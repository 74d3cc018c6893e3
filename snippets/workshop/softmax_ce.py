"""Softmax + cross-entropy, fused and stable.

    logits     (N, C)  float32 or float64
    target     (N,)    int64, each in [0, C)
    loss       ()      the mean over the N rows of -log softmax(logits)[n, target[n]]

    backward(grad_loss (), logits, target) -> (grad_logits (N, C),)

Stable: the loss and its gradient stay finite for logits of any size (exp of a large logit
overflows: exp(89) is inf in float32, exp(710) in float64).
"""

import torch
import torch.nn.functional as F


# --8<-- [start:forward]
def forward(logits, target):
    z = logits - logits.max(dim=1, keepdim=True).values    # (N, C), each row's max is 0
    log_p = z - z.exp().sum(dim=1, keepdim=True).log()     # (N, C), log softmax
    return -log_p.gather(1, target[:, None]).mean()        # (): mean over the N rows
# --8<-- [end:forward]


# --8<-- [start:backward]
def backward(grad_loss, logits, target):
    N, C = logits.shape
    z = logits - logits.max(dim=1, keepdim=True).values    # (N, C), shifted as in forward
    p = z.exp() / z.exp().sum(dim=1, keepdim=True)         # (N, C), softmax
    onehot = F.one_hot(target, C).to(logits.dtype)         # (N, C), 1 at each row's target
    return ((p - onehot) / N * grad_loss,)                 # (N, C)
# --8<-- [end:backward]


# ------------------------------------------------------------------ what the checker needs
NAME = "softmax_ce"
TITLE = "softmax + cross-entropy, fused and stable"
SIGNATURE_FORWARD = "forward(logits, target) -> loss"
SIGNATURE_BACKWARD = "backward(grad_loss, logits, target) -> (grad_logits,)"
GRADS = ("grad_logits",)
DIFF = (0,)
TWICE = True
SHAPES = {"logits (4, 5)": (4, 5, 1.0), "batch 1: logits (1, 3)": (1, 3, 1.0),
          "logits (6, 10)": (6, 10, 3.0), "logits (4, 5) of size 1e3": (4, 5, 1000.0)}
CASES = tuple(SHAPES)[:3]
STABLE = tuple(SHAPES)[3:]


def inputs(label, dtype):
    N, C, scale = SHAPES[label]
    gen = torch.Generator().manual_seed(list(SHAPES).index(label))
    logits = scale * torch.randn(N, C, generator=gen, dtype=dtype)
    return logits, torch.randint(0, C, (N,), generator=gen)


def torch_forward(logits, target):
    return F.cross_entropy(logits, target)


HINTS = {
    "forward": "log softmax is z - log(sum(exp(z))) with z = logits minus each row's max; "
               "the loss is the mean over rows of -log_p[n, target[n]]",
    "backward": "grad_logits = (softmax(logits) - onehot(target)) / N * grad_loss: the target's column "
                "gets the -1, and the loss is a mean over the N rows",
    "stability": "subtract each row's maximum before exp, in forward and in backward: softmax does not "
                 "change, and exp of a logit of 1000 is inf",
}
