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

The venvs of the other versions and the run of every page on them: tools/torch_venvs.py (make
test-torch). The table of what differs: bookbuild.indexes.differences_table.
"""

from __future__ import annotations

import functools
import re

from . import ROOT


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
