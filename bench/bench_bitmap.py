#!/usr/bin/env python3
"""Native vs pure cpulist/cpumask parsing and formatting, as ratios measured in one run.

    python3 bench/bench_bitmap.py [--repeat N]
"""
from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pynuma import _impl  # noqa: E402


def cases():
    def bits(ids):
        b = 0
        for i in ids:
            b |= 1 << i
        return b
    small = bits(range(0, 8))
    typical = bits(list(range(0, 64)) + list(range(128, 192)))
    sparse = bits(range(0, 8192, 2))
    return [
        ("8 cpus", small),
        ("128 cpus, 2 runs", typical),
        ("4096 of 8192, alternating", sparse),
    ]


def best(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=2000, help="calls per timing (default 2000)")
    args = ap.parse_args(argv)
    impls = _impl.implementations("bitmap")
    if "native" not in impls:
        print("native bitmap not built: run PYNUMA_NATIVE_ONLY=bitmap python3 setup.py build_ext --inplace")
        return 1
    nat, pure = impls["native"], impls["pure"]
    print(f"{'operation':<16} {'case':<28} {'native us':>10} {'pure us':>10} {'pure/native':>12}")
    for label, value in cases():
        cl = pure.format_cpulist(value)
        cm = pure.format_cpumask(value)
        n = max(20, args.repeat // (1 + value.bit_length() // 512))
        for op, call in (("parse_cpulist", lambda m: m.parse_cpulist(cl)),
                         ("format_cpulist", lambda m: m.format_cpulist(value)),
                         ("parse_cpumask", lambda m: m.parse_cpumask(cm)),
                         ("format_cpumask", lambda m: m.format_cpumask(value))):
            tn = best(lambda: call(nat), n)
            tp = best(lambda: call(pure), n)
            print(f"{op:<16} {label:<28} {tn * 1e6:>10.2f} {tp * 1e6:>10.2f} {tp / tn:>11.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
