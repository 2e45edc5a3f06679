"""What every bench shares: interleaved rounds, the cold first call apart, min and median.

A bench hands :func:`measure` a dict of label -> zero-argument callable.
Each is called once first, alone (the *cold* call: first use in this
process, imports and caches included), then in every round each callable
runs ``number`` times back to back in a rotated order, so drift and load
hit every row alike.  Samples are per call; :func:`print_table` prints
cold, min and median per row and each row's median ratio to a reference
row, computed per round (not best-over-best).

Costs measured elsewhere (a C floor timing itself) join a round through
``external``: label -> callable returning one per-call sample in seconds.
"""
from __future__ import annotations

import statistics
import time


class Stats:
    """One row: the cold call and the per-call samples of the rounds."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.cold = None
        self.samples: list = []

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def _calibrate(fn, target_s: float, clock) -> int:
    t0 = clock()
    fn()
    once = clock() - t0
    return max(1, int(target_s / max(once, 1e-7)))


def measure(cases: dict, rounds: int = 15, target_s: float = 0.01, external: dict = None,
            numbers: dict = None, clock=time.perf_counter) -> dict:
    """Stats per label: cold call, then ``rounds`` interleaved rounds of ~``target_s`` per row.

    ``clock``: wall time by default; ``time.process_time`` (CPU time of this process) where
    the compared costs are CPU work and the machine is shared.
    """
    stats = {label: Stats(label) for label in list(cases) + list(external or {})}
    for label, fn in cases.items():
        t0 = clock()
        fn()
        stats[label].cold = clock() - t0
    numbers = dict(numbers or {})
    for label, fn in cases.items():
        numbers.setdefault(label, _calibrate(fn, target_s, clock))
    labels = list(stats)
    for r in range(rounds):
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
            if label in cases:
                fn, n = cases[label], numbers[label]
                t0 = clock()
                for _ in range(n):
                    fn()
                stats[label].samples.append((clock() - t0) / n)
            else:
                sample, cold = external[label]()
                if stats[label].cold is None:
                    stats[label].cold = cold
                stats[label].samples.append(sample)
    return stats


def ratio(stats: dict, label: str, reference: str) -> float:
    """Median over rounds of (label / reference) in the same round."""
    a, b = stats[label].samples, stats[reference].samples
    return statistics.median(x / y for x, y in zip(a, b))


def fmt(seconds) -> str:
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def print_table(stats: dict, reference: str = None, width: int = 44) -> None:
    """cold / min / median per row, and the per-round median ratio to ``reference``."""
    head = f"{'':<{width}} {'cold':>9} {'min':>9} {'median':>9}"
    if reference:
        head += f"  {'x ' + reference:>14}"
    print(head)
    for label, s in stats.items():
        line = f"{label:<{width}} {fmt(s.cold):>9} {fmt(s.min):>9} {fmt(s.median):>9}"
        if reference and label != reference:
            line += f"  {ratio(stats, label, reference):>13.3g}x"
        print(line)
