"""Maintainers' commands, run from the project's root (each also behind a make target or .ci/run):

    python -m tools.torch_venvs venv|test   the other verified torch's venv; every page on it (make test-torch)
    python -m tools.drift --torch VERSION   which outputs and errors change on another torch (make drift)
    python -m tools.related PAGE            the tests of the snippets a page uses (make test-page)
    python -m tools.cpu_account record|report FILE   a run's CPU time by make target (.ci/run prints it)
    python -m tools.cpu_account busy [--since B --wall S]   the machine's busy CPU time (.ci/run's log)

lighthouse/ and zensical/ hold the pinned installs of `make lighthouse` and `make zensical`.
"""
