"""Forward-mode AD (``torch.autograd.forward_ad``, imported here as ``fwAD``), loaded quietly.

On torch 2.13, the first forward-mode call in a process (``make_dual`` arithmetic,
``torch.func.jvp``, ``jacfwd``, ``hessian``) loads torch's own jvp decompositions, which call
the deprecated ``torch.jit.script`` and emit a ``DeprecationWarning`` from inside torch. It is
harmless. Importing this module loads them once with that one warning filtered, so later
calls do not warn. The Part VI snippets import ``fwAD`` from here.
"""

import warnings

import torch

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated", category=DeprecationWarning)
    from torch._decomp import decompositions_for_jvp  # noqa: F401

import torch.autograd.forward_ad as fwAD  # noqa: E402

__all__ = ["fwAD", "torch"]
