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

from snippets.workshop.check import size


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


def cases(gen, dtype):
    """The cases of one run in ``dtype``, drawn with ``gen``: [(label, (logits, target))]."""
    out = []
    for N, C, scale in ((size(gen, 2, 9), size(gen, 2, 11), 1.0), (1, size(gen, 2, 11), 1.0),
                        (size(gen, 2, 9), size(gen, 2, 11), 4.0)):
        logits = scale * torch.randn(N, C, generator=gen, dtype=dtype)
        out.append((f"logits ({N}, {C})" + (", entries of size 4" if scale > 1 else ""),
                    (logits, torch.randint(0, C, (N,), generator=gen))))
    return out


def stable_cases(gen):
    """float32 logits of size 1e3, where exp overflows, and one row whose maximum is 3000 below
    the other rows' (shifted by the maximum of all the logits, its every exp underflows to 0):
    [(label, (logits, target))]."""
    N, C = size(gen, 2, 9), size(gen, 2, 11)
    logits = 1000 * torch.randn(N, C, generator=gen)
    low = size(gen, 0, N - 1)
    others = torch.cat([logits[:low], logits[low + 1:]]).max()
    logits[low] += others - 3000 - logits[low].max()        # its maximum: the others' minus 3000
    target = torch.randint(0, C, (N,), generator=gen)
    target[low] = int(logits[low].argmin())                 # 1000 below its row's maximum: a
    logits[low, target[low]] = logits[low].max() - 1000     # shift by the target's logit overflows
    return [(f"logits ({N}, {C}) of size 1e3, row {low} 3000 below the others", (logits, target))]


def torch_forward(logits, target):
    return F.cross_entropy(logits, target)


HINTS = {  # earned in order: where to look, the structure, a check by hand, the formula
    "forward": ["the loss of one row is the log of a sum of exponentials minus one logit: which one?",
                "log_softmax of each row, the target's column picked with gather, then the mean over the rows",
                "logits [[0, 0]] with target [0] give log 2, about 0.693",
                "loss = mean over the rows n of (logsumexp(logits[n]) - logits[n, target[n]])"],
    "grad_logits": [
        "write the loss of one row as two terms and differentiate each with respect to one logit z_k; "
        "then remember the loss is a mean",
        "the first term gives a softmax of the row; the second is -z_t, so only the target's column gets it; "
        "each row is divided by the number of rows",
        "with grad_loss 1, each row of the gradient sums to 0; logits [[0, 0]] with target [0] give (-0.5, 0.5)",
        "grad_logits = (softmax(logits) - onehot(target)) / N * grad_loss",
    ],
    "stability": ["which exp overflows for a logit of 1000, and which sum of exps is 0 for a row near -3000?",
                  "a row's softmax does not change when the row is shifted by a constant: shift each row by "
                  "a number of its own",
                  "a row [1000, 1000] gives (0.5, 0.5), and a row [-3000, -3001] about (0.73, 0.27), whatever "
                  "the other rows hold",
                  "subtract each row's own maximum before exp, in forward and in backward (the maximum of all "
                  "the rows leaves a low row at exp(-3000) = 0)"],
}
