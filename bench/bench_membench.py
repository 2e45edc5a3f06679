"""Native vs pure-Python membench loops, this host's figures, and what ``pynuma bench memory`` costs in memory.

    python3 bench/bench_membench.py [--python PY]

Prints, in one run: ns per dependent load and read/copy GB/s of the native
loops on the default buffer (``membench.default_size``: 4 x the largest
cache within 16-256 MiB, at most a quarter of MemAvailable); the speed of
the native loops over the pure-Python twin on a small buffer, interleaved
per round (cold, min, median; the pure twin measures the interpreter, not
memory); and the peak RSS and wall time of whole ``pynuma bench memory``
runs (default size, and ``--size 32M``), read from each child's rusage.
"""
from __future__ import annotations

import argparse
import mmap
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from _harness import measure, print_table  # noqa: E402

from pynuma import _impl, membench  # noqa: E402


def _launcher(python: str, installed: bool):
    """How to start pynuma: the launcher of ``python``'s install (``installed``), else this checkout's."""
    script = os.path.join(os.path.dirname(python), "pynuma")
    if installed and os.path.exists(script):
        return [python, script]
    project = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ["PYTHONPATH"] = project + os.pathsep + os.environ.get("PYTHONPATH", "")  # for the children
    return [python, os.path.join(project, "bin", "pynuma")]


def whole_run(argv):
    """(peak RSS MiB, wall s) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return ru.ru_maxrss / 1024, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="No floor for the loops (native against its pure twin); memory is each child's peak RSS "
               "(ru_maxrss from wait4), beside 'python -c pass' for the interpreter's own.")
    ap.add_argument("--python", help="interpreter whose pynuma install to run (default: this checkout)")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    installed = args.python is not None
    args.python = args.python or sys.executable
    impls = _impl.implementations("membench")
    if "native" not in impls:
        print("native membench not built: python3 setup.py build_ext --inplace")
        return 1
    native, pure = impls["native"], impls["pure"]
    pn = _launcher(args.python, installed)
    # first, while this process is small: a child's peak RSS starts from its parent's at fork
    print("whole runs (peak RSS from rusage):")
    for label, cmd in (("python -c pass", [args.python, "-c", "pass"]),
                       ("pynuma bench memory --duration 0.5 (default size)", pn + ["bench", "memory",
                                                                                   "--duration", "0.5"]),
                       ("pynuma bench memory --duration 0.5 --size 32M", pn + ["bench", "memory", "--duration",
                                                                               "0.5", "--size", "32M"])):
        rss, wall = whole_run(cmd)
        print(f"  {label:<52} peak RSS {rss:7.1f} MiB, {wall:5.2f} s")

    from pynuma.discover import discover

    size = membench.default_size(discover())
    big = mmap.mmap(-1, size)
    lat = membench.chase_latency(big, 0.5)
    rd = membench.read_bandwidth(big, 0.5)
    big.close()
    src, dst = mmap.mmap(-1, size // 2), mmap.mmap(-1, size // 2)
    cp = membench.copy_bandwidth(dst, src, 0.5)
    src.close()
    dst.close()
    print(f"native loops, default {size >> 20} MiB buffer: latency {lat:.1f} ns/load, read {rd:.2f} GB/s, "
          f"copy {cp:.2f} GB/s")

    small = bytearray(64 << 10)
    copy_dst = bytearray(len(small))
    cases = {}
    for name, work in (("chase_build 64 KiB", lambda m: m.chase_build(small, 64, 1)),
                       ("chase_run 100k loads", lambda m: m.chase_run(small, 0, 100_000)),
                       ("read_run 64 KiB x 20", lambda m: m.read_run(small, 20)),
                       ("copy_run 64 KiB x 20", lambda m: m.copy_run(copy_dst, small, 20))):
        cases[f"{name} native"] = lambda w=work: w(native)
        cases[f"{name} pure"] = lambda w=work: w(pure)
    stats = measure(cases, rounds=args.rounds, target_s=0.02, clock=time.process_time)
    print_table(stats, width=34)

    return 0


if __name__ == "__main__":
    sys.exit(main())
