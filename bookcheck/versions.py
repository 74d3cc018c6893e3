"""The torch versions the book is verified on, read from mkdocs.yml's ``extra``:
``torch_version`` (the pinned one: every check, every page's stamp) and ``torch_also``
(the versions on which every page's blocks run again: ``make test-torch``).

A block whose output differs on another verified version shows both, as content tabs:

    === "torch 2.13.0"

        <!--pytest-codeblocks:expected-output-->
        ```text
        ...
        ```

    === "torch 2.14.1"

        <!--pytest.mark.output_on("2.14.1")-->
        ```text
        ...
        ```

Run on one version, a block is compared with that version's output (the pinned output where
the page shows no other).

    python -m bookcheck.versions test [VERSION]   every page's blocks on another torch (make test-torch)
    python -m bookcheck.versions venv VERSION     the venv of that torch (also used by make drift)

The venv of another version lives in .cache/torch-VERSION/: the book's pinned stack
(pyproject.toml's ``book`` list, constraints.txt) with that torch instead of the pinned one.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

from . import ROOT

CACHE = ROOT / ".cache"


def _extra(name: str) -> list[str]:
    # Read with the standard library, not mkdocs' loader (bookcheck.model.config): `make
    # torch-venvs` runs this module with Python alone, before the book's venv exists.
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    found = re.findall(rf"^\s+{name}:\s*(.+?)\s*$", text, re.M)
    if len(found) != 1:
        raise ValueError(f"mkdocs.yml: expected one `{name}:` line under extra:, found {found}")
    value = found[0].strip("[]")
    versions = [v.strip().strip("'\"") for v in value.split(",") if v.strip()]
    for v in versions:
        if not re.fullmatch(r"\d+\.\d+\.\d+", v):
            raise ValueError(f"mkdocs.yml: {name}: {v!r} is not a version such as 2.13.0")
    return versions


@functools.lru_cache(maxsize=1)
def pinned() -> str:
    """The torch version every check runs on (``extra.torch_version``)."""
    (version,) = _extra("torch_version")
    return version


@functools.lru_cache(maxsize=1)
def also() -> tuple[str, ...]:
    """The other torch versions the pages' blocks are verified on (``extra.torch_also``)."""
    return tuple(_extra("torch_also"))


def tab_label(version: str) -> str:
    return f"torch {version}"


def running() -> str:
    """The version of the torch installed here (the one ``import torch`` loads), without its
    local build tag (``+cpu``). Read from the installed package's metadata: a run that needs
    no torch does not import it for this."""
    from importlib.metadata import version

    return version("torch").split("+")[0]


def differences(pages) -> list[dict]:
    """Every block of ``pages`` that shows another version's output: where it is (page,
    line, the section it is in) and the lines that differ, per version."""
    import difflib

    from .indexes import section_of, title_of
    from .page import parse_page

    found = []
    for path in pages:
        blocks = parse_page(path)
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        for b in blocks:
            for version, other in sorted(b.outputs.items()):
                heading, anchor = section_of(lines, b.lineno)
                pinned_lines, other_lines = b.expected_output.splitlines(), other.splitlines()
                diff = [d for d in difflib.ndiff(pinned_lines, other_lines) if d[:1] in "-+"]
                found.append(dict(path=Path(path), title=title_of(lines, path), lineno=b.lineno, section=heading,
                                  anchor=anchor, version=version,
                                  was=[d[2:] for d in diff if d[0] == "-"], now=[d[2:] for d in diff if d[0] == "+"]))
    return found


def differences_table(page_path: Path, pages) -> str:
    """The Markdown table of ``differences(pages)``, with links relative to ``page_path``."""
    import os.path

    def cell(text_lines):
        return "<br>".join(f"`{line}`" if line.strip() else "(empty line)" for line in text_lines) or "(no line)"

    found = differences(pages)
    rows = []
    for d in found:
        target = os.path.relpath(d["path"], Path(page_path).parent).replace(os.sep, "/")
        title = d["title"]
        where = f"[{title}: {d['section']}]({target}#{d['anchor']})" if d["anchor"] else f"[{title}]({target})"
        rows.append(f"| {where} | {cell(d['was'])} | {cell(d['now'])} |")
    if not rows:
        return "No block of the book prints anything different on the other verified versions.\n"
    versions = " / ".join(sorted({d["version"] for d in found}))
    head = f"| Where | torch {pinned()} prints | torch {versions} prints |\n|---|---|---|"
    return head + "\n" + "\n".join(rows) + "\n"


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
        print(f"pages on torch {v}: {python.relative_to(ROOT)} -m pytest docs", flush=True)
        done = subprocess.run([str(python), "-m", "pytest", "-q", "--fresh", *(pytest_args or ["docs"])],
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

    parser = argparse.ArgumentParser(prog="python -m bookcheck.versions", description=__doc__,
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
