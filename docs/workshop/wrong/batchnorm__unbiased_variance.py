"""Normalises with the unbiased variance (divides by N - 1), as x.var() does by default."""
from snippets.workshop.batchnorm import backward  # noqa: F401  (the mistake is in forward)


def forward(x, weight, bias):
    return (x - x.mean(dim=0)) / (x.var(dim=0) + 1e-5).sqrt() * weight + bias
