"""Run ``pynuma ARGV`` in a child process, cheaply, with a memory cap and a deadline.

``forked(argv)`` forks this (already imported) interpreter and runs the
launcher's entry point, :func:`pynuma.__main__.launch`, in the child as ``python -m
pynuma`` would; an exception that escapes is printed as the interpreter
prints it (a traceback) and exits 1.  It saves the 0.2-0.5 s interpreter
start of each case, so a corpus of hundreds of cases stays inside the CI
budget; ``spawned(argv)`` is the real ``python -m pynuma`` for a sample.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

from ._limits import cap_address_space

MEMORY_CAP = 2 << 30  # address space of a child: a runaway allocation fails instead of swapping
DEADLINE = 60.0


class Outcome(NamedTuple):
    returncode: object  # int, or "timeout"
    stdout: bytes
    stderr: bytes


def _limit(mem: int) -> None:
    cap_address_space(mem)


def _child(argv, out, err, timeout: float, mem: int) -> None:  # pragma: no cover - runs in the child
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(int(timeout) + 1)
        _limit(mem)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        sys.argv = ["pynuma", *argv]
        from pynuma.__main__ import launch  # what bin/pynuma and python -m pynuma run

        launch()
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: B902 - what the interpreter would print
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def forked_many(argvs, jobs: int = 2, timeout: float = DEADLINE, mem: int = MEMORY_CAP):
    """:func:`forked` for each argv, ``jobs`` children at a time (all started from this one thread)."""
    pending = list(enumerate(argvs))
    running = {}
    results = [None] * len(pending)
    while pending or running:
        while pending and len(running) < jobs:
            i, argv = pending.pop(0)
            out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
            pid = os.fork()
            if pid == 0:  # pragma: no cover
                _child(argv, out, err, timeout, mem)
            running[pid] = (i, out, err, time.monotonic() + timeout)
        for pid, (i, out, err, deadline) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done:
                if time.monotonic() < deadline:
                    continue
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                status = None
            del running[pid]
            out.seek(0)
            err.seek(0)
            code = "timeout" if status is None else os.waitstatus_to_exitcode(status)
            results[i] = Outcome(code, out.read(), err.read())
            out.close()
            err.close()
        time.sleep(0.002)
    return results


def forked(argv, timeout: float = DEADLINE, mem: int = MEMORY_CAP) -> Outcome:
    """``pynuma argv`` in a forked child of this interpreter (see the module's docstring)."""
    return forked_many([argv], 1, timeout, mem)[0]


def spawned(argv, timeout: float = DEADLINE, mem: int = MEMORY_CAP) -> Outcome:
    try:
        r = subprocess.run([sys.executable, "-m", "pynuma", *argv], capture_output=True, timeout=timeout,
                           preexec_fn=lambda: _limit(mem), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        return Outcome("timeout", exc.stdout or b"", exc.stderr or b"")
    return Outcome(r.returncode, r.stdout, r.stderr)


def one_clear_line(o: Outcome) -> str:
    """Why ``o`` is not a clean failure (exit 1 or 2, one line on stderr, no traceback); "" when it is."""
    text = o.stderr.decode("utf-8", "replace")
    lines = text.splitlines()
    if o.returncode == "timeout":
        return "hung (killed after the deadline)"
    if "Traceback" in text:
        return "traceback: " + (lines[-1] if lines else "")
    if o.returncode not in (1, 2):
        return f"exit {o.returncode}" + (f" ({lines[-1][:200]})" if lines else "")
    if len(lines) != 1:
        return f"{len(lines)} lines on stderr: {text[:300]!r}"
    if not lines[0].startswith("pynuma"):
        return f"error line does not say who speaks: {lines[0][:200]!r}"
    return ""
