"""Command lines of ``snippets``: one parser for every module that has one, and a clear
refusal for ``python -m`` on a module that has none.

``parser(name, doc)`` is the ``argparse`` parser of a module run as ``python -m name``:
``--help`` prints its usage, an unknown argument exits with status 2 and a message.

``refuse_library_module()`` runs when the ``snippets`` package is imported. If that import is
part of ``python -m snippets.<module>`` and the module has no ``if __name__ == "__main__":``
block (it is a library, shown in pages and imported), it prints so (naming the command line of
its package, ``python -m snippets.workshop``, when the package has one) and exits with status 2,
instead of letting Python run the module, print nothing and exit 0.
"""

import argparse
import sys
from pathlib import Path


def parser(name, doc):
    """An ArgumentParser for ``python -m name``, described by the first line of ``doc``."""
    return argparse.ArgumentParser(prog=f"python -m {name}", description=doc.strip().splitlines()[0])


def refuse_library_module():
    """Exit with status 2 if ``python -m`` is about to run a module of snippets that has no main."""
    argv = getattr(sys, "orig_argv", [])
    if sys.argv[:1] != ["-m"] or "-m" not in argv[:-1]:  # not `python -m ...` locating its module
        return
    name = argv[argv.index("-m") + 1]
    parts = name.split(".")
    if parts[0] != "snippets":
        return
    path = Path(__file__).parent.joinpath(*parts[1:])
    if path.is_dir():  # a package runs its __main__.py
        if (path / "__main__.py").is_file() or not (path / "__init__.py").is_file():
            return
        path = path / "__init__.py"
    else:
        path = path.with_suffix(".py")
    if not path.is_file() or '__name__ == "__main__"' in path.read_text(encoding="utf-8"):
        return  # Python reports a missing module; a module with a main runs
    runner = next((".".join(parts[:n]) for n in range(len(parts) - 1, 1, -1)
                   if Path(__file__).parent.joinpath(*parts[1:n], "__main__.py").is_file()), None)
    instead = f"run python -m {runner}, or import it" if runner else "import it instead"
    print(
        f"python -m {name}: this module has no command line; {instead} "
        f"(from {name} import ...)",
        file=sys.stderr,
    )
    raise SystemExit(2)
