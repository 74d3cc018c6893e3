"""snippets/jvp_rules.py: after importing it, the first forward-mode call of a fresh process
emits no warning; without it, torch warns about torch.jit.script (so the module is still
needed): a DeprecationWarning on torch 2.13.0, a FutureWarning on 2.14.1."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_JVP = (
    "import warnings, torch\n"
    "{pre}"
    "from torch.func import jvp\n"
    "with warnings.catch_warnings(record=True) as seen:\n"
    "    warnings.simplefilter('always')\n"
    "    jvp(torch.sin, (torch.tensor(1.0),), (torch.tensor(1.0),))\n"
    "print(sum('torch.jit.script' in str(w.message) for w in seen))\n"
)


def _deprecations(pre):
    out = subprocess.run([sys.executable, "-c", FIRST_JVP.format(pre=pre)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True)
    return int(out.stdout.strip())


def test_no_warning_after_the_import():
    assert _deprecations("import snippets.jvp_rules\n") == 0


def test_torch_warns_without_it():
    assert _deprecations("") > 0
