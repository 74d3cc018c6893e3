"""The child process of the workshop's checker: it runs the reader's code and never judges it.

``python -m snippets.workshop._reader`` is the fork server ``check`` (snippets/workshop/check.py)
starts once: it imports torch and the checker, then reads one request a line from its standard
input, forks a child for it, and prints "pid N" when the child starts and "exit N" when it ends.
The child gets three paths: a request (torch.save of the task's name, the reader's code: a file path, or
functions as ``check.ship`` describes them, and the run's inputs and upstream gradients), the
file to write its results to, and the file that collects what the reader's code prints. It
loads the reader's code, runs it on every case under the guard (``check.compute``) and
writes the outputs and gradients back, or why the code could not be loaded. It holds no
expected value: the parent computes those after the results come back, and only the
parent's comparison makes a verdict.
"""

import os
import signal
import sys
import traceback

import torch

from snippets.workshop import check as checker


def _load(request, task):
    """(backward, forward or None, reference) of the request."""
    if request.get("reference"):
        return task.backward, None, True
    if "file" in request:
        backward, forward = checker.load(request["file"], task)
        return backward, forward, False
    forward = checker.rebuild(request["forward"]) if request.get("forward") else None
    return checker.rebuild(request["backward"]), forward, False


def serve(ask, answer, printed):
    """Run the request in ``ask``; write the results to ``answer`` and what the reader's code
    prints to ``printed``."""
    fd = os.open(printed, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = sys.stderr = open(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
    request = torch.load(ask, weights_only=False)  # written by the checker, before any reader code runs
    task = checker.get_task(request["task"])
    os.chdir(request.get("cwd", os.getcwd()))  # the folder the check was asked from, not the server's
    for folder in (os.getcwd(), *([os.path.dirname(os.path.abspath(request["file"]))] if "file" in request else [])):
        if folder not in sys.path:  # the reader's own modules, after torch's and the checker's
            sys.path.append(folder)
    try:
        backward, forward, reference = _load(request, task)
    except FileNotFoundError as exc:
        results = {"load": ("missing", str(exc))}
    except AttributeError as exc:
        results = {"load": ("attribute", str(exc))}
    except checker.LoadError as exc:
        results = {"load": ("load", str(exc))}
    else:
        raw = checker.compute(task, forward or task.forward, backward, request["groups"], forward is not None, reference)
        results = dict(raw)  # compute copied each result as it came (checker._plain)
        for name, _ in getattr(task, "EXTRA_CHECKS", ()):  # an extra check's ok line is text
            if name in raw and raw[name][0][0] == "ok":
                results[name] = [("ok", str(raw[name][0][1]), None)]
        results["own_forward"] = forward is not None
    sys.stdout.flush()
    torch.save(results, answer + ".part")
    os.replace(answer + ".part", answer)


def main():
    """The fork server's loop: one child per request line "ASK<TAB>ANSWER<TAB>PRINTED"; it ends
    when its standard input closes (the checker's process ended), not on a Ctrl-C meant for it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for line in sys.stdin:
        ask, answer, printed = line.rstrip("\n").split("\t")
        pid = os.fork()
        if pid == 0:  # the child: its standard input is not the server's
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                serve(ask, answer, printed)
                code = 0
            except BaseException:  # noqa: BLE001 - reported in the printed file, for the parent
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                os._exit(code)
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"exit {os.waitstatus_to_exitcode(status)}", flush=True)


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(prog="python -m snippets.workshop._reader",
                            description="The workshop checker's fork server: started by `python -m snippets.workshop "
                                        "check`, it reads its requests on standard input. It takes no argument.").parse_args()
    main()
