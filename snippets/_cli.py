"""Command lines of ``snippets``: one parser for every module that has one, and a clear
refusal for ``python -m`` on a module that has none.

``parser(name, doc)`` is the ``argparse`` parser of a module run as ``python -m name``:
``--help`` prints its usage, an unknown argument exits with status 2 and a message.

``refuse_library_module()`` runs when the ``snippets`` package is imported. If that import is
part of ``python -m snippets.<module>`` and the module has no ``if __name__ == "__main__":``
block (it is a library, shown in pages and imported), Python is given, as the code to run for
that module, a refusal: it prints so (naming the command line of its package, ``python -m
snippets.workshop``, when the package has one) and exits with status 2, instead of letting
Python run the module, print nothing and exit 0. The import itself never exits: the refusal
runs only as the program.
"""

import argparse
import importlib.abc
import importlib.util
import sys
from pathlib import Path


def parser(name, doc):
    """An ArgumentParser for ``python -m name``, described by the first line of ``doc``."""
    return argparse.ArgumentParser(prog=f"python -m {name}", description=doc.strip().splitlines()[0])


def seed(text):
    """An argparse ``type=`` for a seed: an int that torch's generators accept, -2**63 to
    2**64 - 1; outside that range argparse reports "argument --seed: ..." and exits with 2."""
    value = int(text)  # not an int: argparse says "invalid seed value"
    if not -2 ** 63 <= value < 2 ** 64:
        raise argparse.ArgumentTypeError(f"{value} is outside torch's range of seeds, -2**63 to 2**64 - 1")
    return value


class _Refusal(importlib.abc.MetaPathFinder, importlib.abc.InspectLoader):
    """Finds the one module ``python -m`` is locating and gives it the refusal as its code."""

    def __init__(self, name, message):
        self.name, self.message = name, message

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # once: any later import finds the real module
        return importlib.util.spec_from_loader(fullname, self)

    def get_source(self, fullname):
        return f"import sys\nprint({self.message!r}, file=sys.stderr)\nraise SystemExit(2)\n"


def _library_module_run_by_dash_m():
    """``(X, what Python runs for X)`` while ``python -m X`` locates X, if X is a module or
    package of snippets without a main; else None."""
    argv = getattr(sys, "orig_argv", [])
    if sys.argv[:1] != ["-m"] or "-m" not in argv[:-1]:  # not `python -m ...` locating its module
        return None
    name = argv[argv.index("-m") + 1]
    parts = name.split(".")
    if parts[0] != "snippets":
        return None
    runs = name
    path = Path(__file__).parent.joinpath(*parts[1:])
    if path.is_dir():  # a package runs its __main__.py
        if (path / "__main__.py").is_file() or not (path / "__init__.py").is_file():
            return None
        path, runs = path / "__init__.py", f"{name}.__main__"
    else:
        path = path.with_suffix(".py")
    if not path.is_file() or '__name__ == "__main__"' in path.read_text(encoding="utf-8"):
        return None  # Python reports a missing module; a module with a main runs
    return name, runs


def refuse_library_module():
    """Under ``python -m`` on a module of snippets that has no main, make its run a refusal."""
    found = _library_module_run_by_dash_m()
    if found is None:
        return
    name, runs = found
    parts = name.split(".")
    runner = next((".".join(parts[:n]) for n in range(len(parts) - 1, 1, -1)
                   if Path(__file__).parent.joinpath(*parts[1:n], "__main__.py").is_file()), None)
    instead = f"run python -m {runner}, or import it" if runner else "import it instead"
    message = f"python -m {name}: this module has no command line; {instead} (from {name} import ...)"
    sys.meta_path.insert(0, _Refusal(runs, message))
