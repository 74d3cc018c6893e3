"""python -m snippets.workshop list | check TASK [FILE] [--starter] [--seed N] [--hint N] [--record DIR]

Exit status: 0 when every check passes (this process's verdict, after comparing), 1 when one
fails (or the code is refused, or ends its process before sending its results back), 2 when
nothing could be checked: an unknown task, a FILE that does not exist, exits or raises when
it is run, or defines no ``backward`` of its own (none, or the reference solution's, imported);
and a ``--seed`` outside torch's range of seeds. Each check of FILE that fails on a gradient's
value is recorded in ``--record`` (by default the folder $WORKSHOP_RECORD names, else
``.workshop/`` of the current directory) and unlocks that gradient's next hint.
"""

import argparse
import os
import sys

# python -m put the current folder first on sys.path: a file of yours named like a module torch
# imports (typing_extensions.py) would be imported by the process that judges. The snippets
# package is imported already.
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]

from snippets._cli import seed  # noqa: E402 - after the path is cleaned
from snippets.workshop.check import RECORD, LoadError, check, get_task, starter_path, tasks  # noqa: E402


def parser():
    p = argparse.ArgumentParser(prog="python -m snippets.workshop",
                                description="Derive the backward: check your backward of a layer against torch.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the tasks")
    c = sub.add_parser("check", help="check a backward: the reference's, the starter's, or the one in FILE")
    c.add_argument("task", metavar="TASK", help="a task name, as `list` prints it")
    c.add_argument("file", metavar="FILE", nargs="?",
                   help="a Python file defining backward(...) (and optionally forward(...))")
    c.add_argument("--starter", action="store_true", help="check the task's starter instead")
    c.add_argument("--seed", type=seed, metavar="N", help="draw the cases from seed N (the report prints the "
                   "seed of every run; the same seed replays the same cases)")
    c.add_argument("--hint", type=int, metavar="N", default=0,
                   help="on a failure, show hint N on it, if your failed checks have unlocked it (one level "
                        "per failed check: where to look, the structure, a check by hand, the formula)")
    c.add_argument("--record", metavar="DIR", default=RECORD,
                   help="the folder that records your failed checks, which unlock the hints (default: the folder "
                        "the environment variable WORKSHOP_RECORD names, else .workshop)")
    return p


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    if args.command == "list":
        for name, mod in tasks().items():
            print(f"{name:11} {mod.TITLE}")
            print(f"{'':11} {mod.SIGNATURE_BACKWARD}")
        return 0
    try:
        mod = get_task(args.task)
    except KeyError as exc:
        p.error(exc.args[0])
    if args.starter and args.file:
        p.error("pass FILE or --starter, not both")
    if args.seed is not None and args.seed < 0:
        p.error(f"--seed must be an int >= 0, got {args.seed}")
    if args.hint < 0:
        p.error(f"--hint must be 0 or more (1 for the first hint, 0 for none), got {args.hint}")
    path = starter_path(args.task) if args.starter else args.file
    who = "the reference solution" if path is None else ("the starter" if args.starter else str(path))
    seed = args.seed
    if seed is None:
        import secrets
        seed = secrets.randbelow(10 ** 6)
    what = "--starter" if args.starter else (args.file or "")
    how = lambda n: " ".join(["python -m snippets.workshop check", args.task, what, f"--seed {seed} --hint {n}"]).replace("  ", " ")
    try:
        if path is None:
            report = check(mod, mod.backward, None, who, seed=seed, hint=args.hint, how=how, record=args.record)
        else:
            report = check(mod, file=path, who=who, seed=seed, hint=args.hint, how=how, record=args.record)
    except (FileNotFoundError, LoadError, AttributeError) as exc:
        p.error(str(exc))
    print(report)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
