"""Native vs pure-Python membench loops, and the native loops' figures on this host.

    python3 bench/bench_membench.py

Prints, in one run: ns per dependent load and read/copy GB/s of the native
loops on a buffer well beyond the last-level cache, and the speed ratio of
the native over the pure-Python twin on a small buffer (where the pure
twin's figures are meaningless as memory numbers: it measures the
interpreter).
"""
from __future__ import annotations

import mmap
import sys
import time

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from pynuma import _impl, membench  # noqa: E402


def _per_op(fn, ops: int) -> float:
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / ops


def main() -> int:
    impls = _impl.implementations("membench")
    if "native" not in impls:
        print("native membench not built: python3 setup.py build_ext --inplace")
        return 1
    native, pure = impls["native"], impls["pure"]
    big = mmap.mmap(-1, 128 << 20)
    lat = membench.chase_latency(big, 0.5)
    rd = membench.read_bandwidth(big, 0.5)
    dst = mmap.mmap(-1, len(big))
    cp = membench.copy_bandwidth(dst, big, 0.5)
    print(f"native, 128 MiB buffer: latency {lat:.1f} ns/load, read {rd:.2f} GB/s, copy {cp:.2f} GB/s")

    small = bytearray(64 << 10)
    rows = []
    for name, work in (
        ("chase_build 64 KiB", lambda m: m.chase_build(small, 64, 1)),
        ("chase_run 100k loads", lambda m: m.chase_run(small, 0, 100_000)),
        ("read_run 64 KiB x 20", lambda m: m.read_run(small, 20)),
        ("copy_run 64 KiB x 20", lambda m: m.copy_run(bytearray(len(small)), small, 20)),
    ):
        n = _per_op(lambda: work(native), 1)
        p = _per_op(lambda: work(pure), 1)
        rows.append((name, n / 1e3, p / 1e3, p / n))
    print(f"{'loop':<24}{'native us':>12}{'pure us':>12}{'pure/native':>13}")
    for name, n, p, r in rows:
        print(f"{name:<24}{n:>12.1f}{p:>12.1f}{r:>12.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
