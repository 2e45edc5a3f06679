"""CPU allocation and CPU hint cost on a synthetic 512-CPU, 16-NUMA-node machine.

    python3 bench/bench_allocate.py

2 sockets x 8 NUMA nodes x 16 cores x 2 threads.  Prints the median time
of each operation and its ratio to the 5 ms target (allocation), and, in
the same run, the ratio against straightforward versions: hints by scanning
every CPU for every NUMA subset (8-node machine: the 16-node one would take
minutes) and the distributed search scoring every combination.
"""
from __future__ import annotations

import functools
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pynuma.cpuset import CPUSet  # noqa: E402
from pynuma.policy.cpumanager.take import take_by_topology  # noqa: E402
from pynuma.policy.cpumanager.hints import generate_cpu_hints  # noqa: E402
from tests.unit.cpu_fixtures import machine  # noqa: E402

TARGET_MS = 5.0


# The unit tests' machine builder (Linux-like numbering), at the benchmark's size by default.
synthetic = functools.partial(machine, sockets=2, nodes_per_socket=8, cores_per_node=16, threads=2)


def timed(fn, repeat=30) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def hints_by_scanning(topo, available, request):
    """The textbook way: for every NUMA subset, walk every CPU."""
    from itertools import combinations

    nodes = topo.numa_nodes()
    node_of = {c: i.node for c, i in topo.details.items()}
    out, min_aff = [], len(nodes)
    for k in range(1, len(nodes) + 1):
        for combo in combinations(nodes, k):
            members = set(combo)
            if sum(1 for c in node_of if node_of[c] in members) >= request and k < min_aff:
                min_aff = k
            if sum(1 for c in available if node_of[c] in members) >= request:
                out.append((combo, False))
    return [(m, len(m) == min_aff) for m, _ in out]


def distributed_scoring_every_combo(topo, available, count):
    """Score every k-combination (float standard deviation), as a direct transcription would."""
    import math
    from itertools import combinations

    from pynuma.policy.cpumanager.assign import Accumulator

    def r3(x):
        return math.floor(x * 1000 + 0.5) / 1000

    def std(v):
        m = r3(sum(v) / len(v))
        return r3(math.sqrt(sum((x - m) ** 2 for x in v) / len(v)))

    numas = Accumulator(topo, available.bits, count).numa_order()
    free = {n: (topo.node_bits[n] & available.bits).bit_count() for n in numas}
    for k in range(1, len(numas) + 1):
        best, best_combo = math.inf, None
        for combo in combinations(numas, k):
            dist = count // k
            if sum(free[n] for n in combo) < count or any(free[n] < dist for n in combo):
                continue
            after = dict(free)
            for n in combo:
                after[n] -= dist
            score = std(list(after.values()))
            if score < best:
                best, best_combo = score, combo
        if best_combo is not None:
            return best_combo
    return None


def main() -> int:
    topo = synthetic()
    assert len(topo.cpus()) == 512 and len(topo.numa_nodes()) == 16
    rng = random.Random(42)
    every = topo.cpus()
    fragmented = CPUSet(c for c in every if rng.random() < 0.6)
    cases = [
        ("packed, idle machine, 4 CPUs", every, 4, {}),
        ("packed, idle machine, 100 CPUs", every, 100, {}),
        ("packed, 60% free (fragmented), 7 CPUs", fragmented, 7, {}),
        ("packed, 60% free (fragmented), 150 CPUs", fragmented, 150, {}),
        ("spread (distribute-cpus-across-cores), 64 CPUs", fragmented, 64, {"distribute-cpus-across-cores": True}),
        ("uncore (prefer-align-cpus-by-uncorecache), 24 CPUs", fragmented, 24,
         {"prefer-align-cpus-by-uncorecache": True}),
        ("distributed (across-numa), 96 CPUs", every, 96, {"distribute-cpus-across-numa": True}),
        ("distributed (across-numa), 40 CPUs, fragmented", fragmented, 40, {"distribute-cpus-across-numa": True}),
    ]
    print(f"machine: {len(topo.cpus())} CPUs, {len(topo.numa_nodes())} NUMA nodes, {topo.num_sockets} sockets")
    print(f"{'operation':<56} {'median ms':>10} {'x target':>9}")
    worst = 0.0
    for label, avail, n, opts in cases:
        ms = timed(lambda: take_by_topology(topo, avail, n, opts))
        worst = max(worst, ms)
        print(f"{label:<56} {ms:>10.3f} {ms / TARGET_MS:>9.2f}")
    for label, n in (("hints, 16 nodes, 8 CPUs (65535 subsets)", 8), ("hints, 16 nodes, 100 CPUs (mixed subset sizes)", 100)):
        ms = timed(lambda: generate_cpu_hints(topo, fragmented, None, n), repeat=10)
        print(f"{label:<56} {ms:>10.3f} {'':>9}")
    from pynuma.policy.cpumanager.distribute import take_distributed

    ours = timed(lambda: take_distributed(topo, every, 96), repeat=10)
    naive = timed(lambda: distributed_scoring_every_combo(topo, every, 96), repeat=3)
    print(f"{'distributed 96 CPUs: scoring every combination':<56} {naive:>10.3f}   ours x{naive / ours:,.0f} faster")
    small = synthetic(sockets=2, nodes_per_socket=4, cores_per_node=16)
    frag8 = CPUSet(c for c in small.cpus() if rng.random() < 0.6)
    ours = timed(lambda: generate_cpu_hints(small, frag8, None, 40), repeat=10)
    naive = timed(lambda: hints_by_scanning(small, frag8, 40), repeat=3)
    print(f"{'hints, 8 nodes, 256 CPUs: ours':<56} {ours:>10.3f}")
    print(f"{'hints, 8 nodes, 256 CPUs: scanning CPUs per subset':<56} {naive:>10.3f}   ours x{naive / ours:,.0f} faster")
    print(f"worst allocation: {worst:.3f} ms (target <= {TARGET_MS} ms): {'OK' if worst <= TARGET_MS else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
