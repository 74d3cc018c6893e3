"""tools/cpu_account.py: the CPU time of a run by make target, as .ci/run prints it."""

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from bookcheck.versions import ROOT
from tools import cpu_account

# About one CPU-second of work in a process of its own (time.process_time: its CPU time, not the
# wall clock, so a busy machine makes it last longer, not count less).
BURN = "import time\nwhile time.process_time() < 1.0: pass\n"
# This process's environment without the variable: a process started with it has no target of its own.
PLAIN = {k: v for k, v in os.environ.items() if k != cpu_account.VARIABLE}


def test_every_recipe_carries_the_name_of_its_target(tmp_path):
    """The Makefile exports BOOK_MAKE_TARGET=$@: a recipe's processes know their target."""
    probe = tmp_path / "probe.mk"
    probe.write_text('probe-target:\n\t@sh -c \'echo "$$BOOK_MAKE_TARGET"\'\n', encoding="utf-8")
    done = subprocess.run(["make", "--no-print-directory", "-s", "-f", "Makefile", "-f", str(probe), "probe-target"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env=PLAIN)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "probe-target"


@contextlib.contextmanager
def recording(out):
    """tools.cpu_account record, sampling every 0.1 s, from its first sample (it prints a line
    then) until the block ends."""
    recorder = subprocess.Popen([sys.executable, "-m", "tools.cpu_account", "record", str(out), "--interval", "0.1"],
                                cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert recorder.stdout.readline().startswith("recording"), "the recorder did not start"
        yield
    finally:
        recorder.send_signal(signal.SIGTERM)
        assert recorder.wait(timeout=30) == 0


def test_a_process_counts_under_the_target_it_was_started_for(tmp_path):
    """A process started with BOOK_MAKE_TARGET=T is added to T; so is its child started without
    the variable (as Chromium starts its renderers); a process started without it by this test
    to this test's own target (make's, when make runs the tests) or else to "outside make":
    each with about the CPU time it used. The report names each."""
    out = tmp_path / "account.jsonl"
    target = "tests/test_cpu_account.py"  # the name CI's account shows for this test's processes
    with recording(out):
        subprocess.run([sys.executable, "-c", BURN], env=dict(PLAIN, **{cpu_account.VARIABLE: target}),
                       check=True, timeout=120)
        # a parent with the variable that waits for a child without it
        parent = ("import os, subprocess, sys, time\n"
                  f"env = {{k: v for k, v in os.environ.items() if k != {cpu_account.VARIABLE!r}}}\n"
                  f"subprocess.run([sys.executable, '-c', {BURN!r}], env=env, check=True)\n")
        subprocess.run([sys.executable, "-c", parent], env=dict(PLAIN, **{cpu_account.VARIABLE: target + " (parent)"}),
                       check=True, timeout=120)
        subprocess.run([sys.executable, "-c", BURN.replace("1.0", "0.5")], env=PLAIN, check=True, timeout=120)
    totals, by_target = cpu_account.account(str(out))
    assert 0.8 <= sum(by_target[target].values()) <= 1.5, by_target
    assert 0.8 <= sum(by_target[target + " (parent)"].values()) <= 1.7, by_target
    own = os.environ.get(cpu_account.VARIABLE) or cpu_account.OUTSIDE  # what this process's environment says
    assert sum(by_target[own].values()) >= 0.3, by_target
    assert totals["busy"] >= 1.6 and totals["wall"] > 0 and totals["cores"] >= 1
    text = cpu_account.report(str(out))
    assert target in text and own in text and "not seen" in text


def test_the_time_after_an_exec_counts_under_the_environment_the_exec_gives(tmp_path):
    """A process forked by one of target X and seen before its exec (where /proc shows X's
    environment), which then runs a program with target Y: the program's time is Y's. (In
    CI's load a sample caught `python -c ...` of the test above between subprocess's fork and
    exec, and its time and its child's went to pytest's target.)"""
    out = tmp_path / "account.jsonl"
    before, after = "tests/test_cpu_account.py (before the exec)", "tests/test_cpu_account.py (after the exec)"
    fork_then_exec = ("import os, sys, time\n"
                      "pid = os.fork()\n"
                      "if pid == 0:\n"
                      "    time.sleep(0.6)  # sampled here, in the environment of its parent\n"
                      f"    os.execve(sys.executable, [sys.executable, '-c', {BURN!r}], "
                      f"dict(os.environ, {cpu_account.VARIABLE}={after!r}))\n"
                      "os.waitpid(pid, 0)\n")
    with recording(out):
        subprocess.run([sys.executable, "-c", fork_then_exec], env=dict(PLAIN, **{cpu_account.VARIABLE: before}),
                       check=True, timeout=120)
    _, by_target = cpu_account.account(str(out))
    assert 0.8 <= sum(by_target[after].values()) <= 1.5, by_target
    assert sum(by_target[before].values()) < 0.5, by_target


@pytest.mark.parametrize("interval", ["0", "-1", "nan"])
def test_an_interval_that_is_not_a_positive_number_is_refused(tmp_path, interval, capsys):
    with pytest.raises(SystemExit):
        cpu_account.main(["record", str(tmp_path / "a.jsonl"), "--interval", interval])
    assert "--interval must be a positive number of seconds" in capsys.readouterr().err
    assert not (tmp_path / "a.jsonl").exists()


def _busy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.cpu_account", "busy", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_the_busy_line_of_the_log_counts_the_machines_cpu_time_since_the_start():
    """.ci/run's "CPU busy" line: `busy` at the start, then `busy --since ... --wall ...`; one
    CPU-second burned in between is in it, and never more than the cores had plus the sampling."""
    start = _busy()
    assert start.returncode == 0, start.stderr
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", BURN], check=True, timeout=120)
    wall = time.monotonic() - t0
    done = _busy("--since", start.stdout.strip(), "--wall", f"{wall:.3f}")
    assert done.returncode == 0, done.stderr
    words = done.stdout.split()  # CPU busy B of H core-seconds (N cores, P%)
    busy, had, cores = float(words[2]), float(words[4]), int(words[6].lstrip("("))
    assert words[:2] == ["CPU", "busy"] and words[5] == "core-seconds", done.stdout
    assert 1 <= busy <= cores * (wall + 1), done.stdout
    assert abs(had - cores * wall) <= 1, done.stdout


@pytest.mark.parametrize("args, says", [
    (["--since", "1"], "pass both --since"),
    (["--since", "nan", "--wall", "3"], "--since must be what `busy` printed earlier"),
    (["--since", "1e15", "--wall", "3"], "--since must be what `busy` printed earlier"),
    (["--since", "1", "--wall", "-2"], "--wall must be a number of seconds, 0 or more"),
    (["--since", "1", "--wall", "nan"], "--wall must be a number of seconds, 0 or more"),
])
def test_a_busy_line_with_a_bad_start_or_duration_is_refused_by_name(args, says):
    done = _busy(*args)
    assert done.returncode != 0 and says in done.stderr and not done.stdout, (done.stdout, done.stderr)
