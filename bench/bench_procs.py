"""``pynuma procs --all --json`` against ``numastat -p`` for every process, in one run.

    python3 bench/bench_procs.py [--spawn N] [--rounds R]

Per round, interleaved (so both meet the same load): the whole command
``pynuma procs --all --json`` (native reader, then the pure twin), running
``numastat -p PID`` once per process it listed, and one ``numastat -p`` given
every pid.  ``--spawn N`` starts N idle processes first (copies of
``sleep``, killed at the end) to stand in for a busy host.  Prints the
best and median wall time of each and the ratios to ``pynuma procs``; the
first (cold) round is reported on its own.  Needs Debian's numactl for the
numastat side.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROJECT = __file__.rsplit("/bench/", 1)[0]


def timed(cmd, env=None) -> "tuple[float, str]":
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=PROJECT)
    return time.perf_counter() - t0, res.stdout


def numastat_each(numastat: str, pids) -> float:
    t0 = time.perf_counter()
    for pid in pids:
        subprocess.run([numastat, "-p", str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def in_process(rounds: int):
    """Best times of ``processes()`` with the reader overlapping psutil (as shipped) and without, interleaved."""
    sys.path.insert(0, PROJECT)
    from pynuma import _impl
    import pynuma.procs as procs
    from pynuma.discover import discover

    if not _impl.is_native("procs"):
        return None
    topo = discover("/")
    real = procs._impl.is_native
    together, apart = [], []
    try:
        for _ in range(rounds):
            procs._impl.is_native = real
            t0 = time.perf_counter()
            procs.processes(topology=topo)
            together.append(time.perf_counter() - t0)
            procs._impl.is_native = lambda area: False if area == "procs" else real(area)
            t0 = time.perf_counter()
            procs.processes(topology=topo)
            apart.append(time.perf_counter() - t0)
    finally:
        procs._impl.is_native = real
    return together, apart


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spawn", type=int, default=0, help="idle processes to start first (default 0)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    numastat = shutil.which("numastat")
    if numastat is None:
        print("numastat not installed (apt-get install numactl): nothing to compare with", file=sys.stderr)
        return 1
    kids = []
    tmp = tempfile.mkdtemp(prefix="bench-procs-")
    try:
        if args.spawn:
            exe = os.path.join(tmp, "bnchidle")
            shutil.copy(shutil.which("sleep"), exe)
            kids = [subprocess.Popen([exe, "600"]) for _ in range(args.spawn)]
        cmd = [sys.executable, "-m", "pynuma", "procs", "--all", "--json"]
        native_env = dict(os.environ, PYNUMA_PURE="0")
        pure_env = dict(os.environ, PYNUMA_PURE="1")
        times = {"pynuma procs (native)": [], "pynuma procs (pure)": [], "numastat -p, each pid": [],
                 "numastat -p, all pids": []}
        count = 0
        for _ in range(args.rounds):
            t, out = timed(cmd, native_env)
            times["pynuma procs (native)"].append(t)
            pids = [row["pid"] for row in json.loads(out)]
            count = len(pids)
            times["pynuma procs (pure)"].append(timed(cmd, pure_env)[0])
            times["numastat -p, each pid"].append(numastat_each(numastat, pids))
            times["numastat -p, all pids"].append(timed([numastat, "-p", *map(str, pids)])[0])
        overlap = in_process(args.rounds)
        base = min(times["pynuma procs (native)"])
        print(f"{count} processes listed ({args.spawn} idle ones spawned), {args.rounds} interleaved rounds")
        print(f"{'command':<26}{'cold s':>9}{'best s':>9}{'median s':>10}{'best / native':>15}")
        for name, values in times.items():
            print(f"{name:<26}{values[0]:>9.3f}{min(values):>9.3f}{statistics.median(values):>10.3f}"
                  f"{min(values) / base:>14.1f}x")
        if overlap:
            together, apart = overlap
            print(f"\nin process, pynuma.processes() of every process: reader and psutil overlapped "
                  f"{min(together):.3f} s, one after the other {min(apart):.3f} s "
                  f"(best; apart / overlapped = {min(apart) / min(together):.2f}x)")
    finally:
        for kid in kids:
            kid.kill()
        for kid in kids:
            kid.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
