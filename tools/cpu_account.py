"""Where a run's CPU time goes, by make target: what each step of `bash .ci/run` costs the machine.

    python -m tools.cpu_account record FILE [--interval S]   sample /proc until SIGINT or SIGTERM
    python -m tools.cpu_account report FILE                  core-seconds per make target
    python -m tools.cpu_account busy [--since B --wall S]    the whole machine's busy CPU time

The Makefile exports BOOK_MAKE_TARGET (the target whose recipe runs) to every recipe, and every
process a recipe starts inherits it: pip, pytest and its workers, the browser, Lighthouse.
``record`` reads /proc every ``interval`` seconds: each process's CPU time (user and system)
and, for the time it used since the last sample, its target then: the variable's value in its
environment, else its nearest ancestor's (Chromium starts its renderers with an environment of
its own), else the one it had when its parent ended. A process caught between its fork and its
exec still shows its parent's environment: its time so far is its parent's target's, and after
the exec its own. ``report`` adds them up per target; a process without one is "outside make"
(.ci/run itself, apt-get, the system).

The step lines of the log (each pytest process's own figure) leave out what pytest does not
reap (a browser ended by another program) and whatever runs outside pytest (the venvs, the
build, the PDF's print); this account does not. A process that starts and ends between two
samples is not seen: the report gives the machine's busy time (/proc/stat, as .ci/run's "CPU
busy" line) and the part of it that no seen process accounts for. Standard library only
(.ci/run starts it before any venv exists); Linux only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections import Counter, defaultdict

VARIABLE = "BOOK_MAKE_TARGET"
OUTSIDE = "outside make"
HZ = os.sysconf("SC_CLK_TCK")


def machine() -> tuple[float, int]:
    """(the whole machine's busy CPU time since boot, in seconds: user, nice, system, irq,
    softirq, steal; the number of its online cores), from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as f:
        v = f.readline().split()[1:]
        cores = sum(1 for line in f if line.startswith("cpu"))
    return sum(int(v[i]) for i in (0, 1, 2, 5, 6, 7)) / HZ, cores


def busy_sentence(busy: float, wall: float, cores: int) -> str:
    """The machine's busy time against the core-seconds its cores had over ``wall`` seconds."""
    had = cores * wall
    share = f", {100 * busy / had:.0f}%" if had > 0 else ""
    return f"CPU busy {busy:.0f} of {had:.0f} core-seconds ({cores} cores{share})"


def _target(pid: str) -> str | None:
    """The make target in the environment of process ``pid``, or None (an empty value too)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return None
    prefix = VARIABLE.encode() + b"="
    return next((e[len(prefix):].decode(errors="replace") for e in env if e.startswith(prefix)), None) or None


def sample(seen: dict, first: bool) -> None:
    """Add every process of /proc to ``seen`` ((pid, start) -> record), and the CPU time each
    used since the last sample to the target it has now (a process not yet past its exec still
    shows the environment of the one that forked it)."""
    live, used = {}, []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:  # it ended since the listing
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        cpu = (int(fields[11]) + int(fields[12])) / HZ
        key = live[int(pid)] = (int(pid), int(fields[19]))
        p = seen.get(key)
        if p is None:  # a process already running at the first sample counts from there on
            p = seen[key] = {"parent": int(fields[1]), "cpu": cpu if first else 0.0, "target": None,
                             "used": Counter()}
        p["name"] = stat[stat.find("(") + 1:stat.rfind(")")]  # after an exec, the new program's
        p["now_parent"] = int(fields[1])
        if cpu > p["cpu"]:
            used.append((int(pid), cpu - p["cpu"]))
            p["cpu"] = cpu
    now: dict[int, str] = {}  # pid -> its target at this sample

    def target(pid: int) -> str:
        """The target in the environment of ``pid``, else its parent's; a process whose parent
        has ended (and which another process has adopted) keeps the target it had."""
        chain, found = [], None
        while found is None:
            if pid in now:
                found = now[pid]
                break
            p = seen[live[pid]]
            chain.append(pid)
            found = _target(str(pid))
            if found is None and p["now_parent"] != p["parent"]:
                found = p["target"] or OUTSIDE
            elif found is None and (p["parent"] not in live or len(chain) >= 64):
                found = OUTSIDE
            pid = p["parent"]
        for pid in chain:
            now[pid] = seen[live[pid]]["target"] = found
        return found

    for pid, cpu in used:
        p = seen[live[pid]]
        p["used"][target(pid), p["name"]] += cpu


def record(path: str, interval: float = 0.5, ready=None) -> None:
    """Sample /proc every ``interval`` seconds until SIGINT or SIGTERM, then write ``path``; after
    the first sample, print a line to ``ready`` (a file) when it is given."""
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(True))
    seen: dict = {}
    busy0, start = machine()[0], time.monotonic()
    sample(seen, first=True)
    if ready is not None:
        print(f"recording the CPU time of every process, every {interval} s", file=ready, flush=True)
    while not stop:
        time.sleep(interval)
        sample(seen, first=False)
    busy1, cores = machine()
    totals = {"busy": busy1 - busy0, "wall": time.monotonic() - start,
              "cores": cores, "interval": interval}
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(totals) + "\n")
        for p in seen.values():
            for (target, name), cpu in p["used"].items():
                f.write(json.dumps({"target": target, "name": name, "cpu": round(cpu, 2)}) + "\n")


def account(path: str) -> tuple[dict, dict[str, Counter]]:
    """(the run's totals, {target: Counter(process name -> CPU seconds)}) of a recorded file."""
    with open(path, encoding="utf-8") as f:
        totals = json.loads(f.readline())
        by_target: dict[str, Counter] = defaultdict(Counter)
        for line in f:
            p = json.loads(line)
            by_target[p["target"]][p["name"]] += p["cpu"]
    return totals, by_target


def report(path: str) -> str:
    totals, by_target = account(path)
    seen = sum(sum(c.values()) for c in by_target.values())
    lines = [f"CPU time by make target, in core-seconds (/proc sampled every {totals['interval']} s) "
             f"over {totals['wall']:.0f} s: "
             + busy_sentence(totals["busy"], totals["wall"], totals["cores"])]
    for target, names in sorted(by_target.items(), key=lambda kv: -sum(kv[1].values())):
        top = ", ".join(f"{n} {s:.0f}" for n, s in names.most_common(4) if s >= 0.5)
        lines.append(f"{sum(names.values()):7.0f}  {target}" + (f": {top}" if top else ""))
    lines.append(f"{totals['busy'] - seen:7.0f}  not seen (processes shorter than a sample, the kernel's own work)")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="sample /proc until SIGINT or SIGTERM, then write FILE")
    rec.add_argument("file")
    rec.add_argument("--interval", type=float, default=0.5, help="seconds between two samples (default 0.5)")
    rep = sub.add_parser("report", help="print the CPU time of each make target recorded in FILE")
    rep.add_argument("file")
    bus = sub.add_parser("busy", help="print the machine's busy CPU seconds since boot; with --since "
                                      "and --wall, the sentence of .ci/run's log for the time since then")
    bus.add_argument("--since", type=float, help="a figure this command printed earlier, at the start")
    bus.add_argument("--wall", type=float, help="seconds since that start")
    args = parser.parse_args(argv)
    if args.command == "record":
        if not args.interval > 0:
            parser.error(f"--interval must be a positive number of seconds, got {args.interval}")
        record(args.file, args.interval, ready=sys.stdout)
    elif args.command == "busy":
        if args.since is None and args.wall is None:
            print(f"{machine()[0]:.2f}")
            return 0
        if args.since is None or args.wall is None:
            parser.error("busy: pass both --since (what `busy` printed at the start) and --wall "
                         "(the seconds since then), or neither")
        busy, cores = machine()
        if not (0 <= args.since <= busy):
            parser.error(f"busy: --since must be what `busy` printed earlier (0 to {busy:.2f}), got {args.since}")
        if not args.wall >= 0:
            parser.error(f"busy: --wall must be a number of seconds, 0 or more, got {args.wall}")
        print(busy_sentence(busy - args.since, args.wall, cores))
    else:
        print(report(args.file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
