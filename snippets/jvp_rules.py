"""Forward-mode AD (``torch.autograd.forward_ad``, imported here as ``fwAD``), loaded quietly.

The first forward-mode call in a process (``make_dual`` arithmetic, ``torch.func.jvp``,
``jacfwd``, ``hessian``) loads torch's own jvp decompositions, which call the deprecated
``torch.jit.script``: torch 2.13.0 warns with a ``DeprecationWarning`` (hidden by default),
torch 2.14.1 with a ``FutureWarning`` (shown by default). It comes from inside torch and is
harmless. Importing this module makes one tiny forward-mode call (which loads them) with that
one message filtered, whatever its category, so later calls do not warn. The book's forward-mode snippets import ``fwAD`` from here.
"""

import warnings

import torch

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated")
    torch.func.jvp(torch.sin, (torch.zeros(1),), (torch.ones(1),))  # the first call loads them

import torch.autograd.forward_ad as fwAD  # noqa: E402

__all__ = ["fwAD", "torch"]
