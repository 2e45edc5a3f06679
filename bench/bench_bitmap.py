#!/usr/bin/env python3
"""Native vs pure cpulist/cpumask parsing and formatting, as ratios measured in one run.

    python3 bench/bench_bitmap.py [--rounds N]

Each operation on each case runs native and pure in interleaved rounds
(cold first call, min, median); the ratio is the per-round median of
pure / native.  No floor: the pure twin is the reference the native code
must beat.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import measure, print_table  # noqa: E402

from pynuma import _impl  # noqa: E402


def cases():
    def bits(ids):
        b = 0
        for i in ids:
            b |= 1 << i
        return b
    return [("8 cpus", bits(range(0, 8))), ("128 cpus, 2 runs", bits(list(range(0, 64)) + list(range(128, 192)))),
            ("4096 of 8192, alternating", bits(range(0, 8192, 2)))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="No floor: native against its pure twin, interleaved per round.")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args(argv)
    impls = _impl.implementations("bitmap")
    if "native" not in impls:
        print("native bitmap not built: run PYNUMA_NATIVE_ONLY=bitmap python3 setup.py build_ext --inplace")
        return 1
    nat, pure = impls["native"], impls["pure"]
    for label, value in cases():
        cl, cm = pure.format_cpulist(value), pure.format_cpumask(value)
        print(f"\n{label}:")
        for op, call in (("parse_cpulist", lambda m: m.parse_cpulist(cl)),
                         ("format_cpulist", lambda m: m.format_cpulist(value)),
                         ("parse_cpumask", lambda m: m.parse_cpumask(cm)),
                         ("format_cpumask", lambda m: m.format_cpumask(value))):
            stats = measure({f"{op} native": lambda c=call: c(nat), f"{op} pure": lambda c=call: c(pure)},
                            rounds=args.rounds, target_s=0.003)
            print_table(stats, reference=f"{op} native", width=28)
    return 0


if __name__ == "__main__":
    sys.exit(main())
