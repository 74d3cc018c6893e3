"""The venvs of the other verified torch versions (mkdocs.yml's ``extra.torch_also``,
bookcheck.versions) and the run of every page's blocks on them.

    python -m tools.torch_venvs test [VERSION]   every page's blocks on another torch (make test-torch)
    python -m tools.torch_venvs venv [VERSION]   the venv of that torch (make torch-venvs; make drift)

The venv of another version lives in .cache/torch-VERSION/: the book's pinned stack
(pyproject.toml's ``book`` list, constraints.txt) with that torch instead of the pinned one.
`make torch-venvs` runs this with Python alone, before the book's venv exists: it imports the
standard library and bookcheck.versions only (a test hides the rest).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from bookcheck.versions import ROOT, also, pinned, tab_label

CACHE = ROOT / ".cache"


def venv_for(version: str) -> Path:
    """The python of a venv with torch ``version`` and the book's other pins (built once)."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", str(version)):
        raise ValueError(f"version must look like 2.14.1, got {version!r}")
    venv = CACHE / f"torch-{version}"
    python = venv / "bin" / "python"
    wanted = (f"{sys.version_info[0]}.{sys.version_info[1]} {ROOT} "
              + (ROOT / "constraints.txt").read_text(encoding="utf-8")
              + (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    stamp = venv / ".installed"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted and python.is_file():
        return python
    print(f"setting up {venv.relative_to(ROOT)} (torch {version} and the book's other pins)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    pins = [line for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#") and not line.lower().startswith("torch==")]
    constraints = venv / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n", encoding="utf-8")
    import tomllib  # Python 3.11+: only the test tooling, never the build, reads pyproject.toml

    book = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]["book"]
    deps = [d for d in book if not d.lower().startswith("torch==")]
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-c", str(constraints), f"torch=={version}", *deps], check=True)
    # the book itself, as in .venv (a page reads its installed metadata); its deps are above
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "-e", str(ROOT)], check=True)
    stamp.write_text(wanted, encoding="utf-8")
    return python


def test(version: str | None = None, pytest_args=()) -> int:
    """Every page's blocks, tables and diagrams-from-code on torch ``version`` (default: each of
    ``also()``); a block must print what the page shows for that version."""
    status = 0
    for v in [version] if version else also():
        python = venv_for(v)
        print(f"pages on torch {v}: {python.relative_to(ROOT)} -m pytest --first-run-only docs", flush=True)
        # each block once: whether an output depends on the seed or this CPU's kernels is
        # checked on the pinned torch (bookcheck.run.RUNS); here, what it prints on this one
        done = subprocess.run([str(python), "-m", "pytest", "-q", "--fresh", "--first-run-only",
                               *(pytest_args or ["docs"])],
                              cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        if done.returncode:
            print(f"\nA block that prints something else on torch {v} than the page shows: show both outputs, in "
                  f'content tabs "{tab_label(pinned())}" and "{tab_label(v)}", the second marked '
                  f'<!--pytest.mark.output_on("{v}")-->, and say in the text what differs. In that venv, '
                  f"{python.relative_to(ROOT)} -m pytest --update-outputs PAGE writes the tabs; review with git diff.")
        status = status or done.returncode
    return status


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.torch_venvs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("test", help="run every page's blocks on another verified torch")
    t.add_argument("version", nargs="?", choices=also())
    v = sub.add_parser("venv", help="set up the venv of a torch version (default: each other verified one) "
                                    "and print its python")
    v.add_argument("version", nargs="?")
    args = parser.parse_args(argv)
    if args.command == "venv":
        for version in [args.version] if args.version else also():
            print(venv_for(version))
        return 0
    return test(args.version)


if __name__ == "__main__":
    raise SystemExit(main())
