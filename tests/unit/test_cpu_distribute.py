"""distribute-cpus-across-numa: the fast search equals a direct transcription of the kubelet's algorithm."""
from __future__ import annotations

import math
from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st

from pynuma.cpuset import CPUSet
from pynuma.policy.cpumanager.assign import Accumulator, take_packed, take_packed_bits
from pynuma.policy.cpumanager.distribute import _std_milli, take_distributed

from .cpu_fixtures import QUAD_NODE, SETTINGS, machines_and_sets


def _round3(x):
    return math.floor(x * 1000 + 0.5) / 1000


def _std(values):
    mean = _round3(sum(values) / len(values))
    return _round3(math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))


def reference_distributed(topo, avail, count, group):
    """The distributed algorithm written straight from the semantics (float scores, full enumeration)."""
    if count % group:
        return take_packed(topo, avail, count)
    acc = Accumulator(topo, avail.bits, count)
    if count < 1:
        return CPUSet()
    numas = acc.numa_order()
    free = {n: (topo.node_bits[n] & avail.bits).bit_count() for n in numas}
    groups = (len(topo.cpus()) - 1) // group + 1
    per_numa = (groups - 1) // len(topo.node_bits) + 1
    needed = (count - 1) // group + 1
    for k in range((needed - 1) // per_numa + 1, min(needed, len(numas)) + 1):
        best, best_combo, best_rem = math.inf, None, None
        for combo in combinations(numas, k):
            if best == 0:
                break
            dist = count // k // group * group
            if (sum(free[n] for n in combo) < count or sum(free[n] // group for n in combo) * group < count
                    or any(free[n] < dist for n in combo)):
                continue
            after = dict(free)
            for n in combo:
                after[n] -= dist
            rem = count - dist * k
            local, local_rem = (_std(list(after.values())), None) if rem == 0 else (math.inf, None)
            cand = [n for n in combo if after[n] >= group]
            for r in range(len(cand), 0, -1) if rem else ():
                for sub in combinations(cand, r):
                    if sum(after[n] for n in sub) < rem:
                        continue
                    trial, left = dict(after), rem
                    while left > 0:
                        moved = False
                        for n in sub:
                            if left and trial[n] >= group:
                                trial[n] -= group
                                left -= group
                                moved = True
                        if not moved:
                            break
                    if left:
                        continue
                    score = _std(list(trial.values()))
                    if score < local:
                        local, local_rem = score, sub
            if local < best:
                best, best_combo, best_rem = local, combo, local_rem
        if best_combo is None:
            continue
        dist = count // k // group * group
        result, free_bits = 0, avail.bits
        for n in best_combo:
            got = take_packed_bits(topo, topo.node_bits[n] & free_bits, dist)
            result, free_bits = result | got, free_bits & ~got
        rem = count - dist * k
        while rem > 0:
            for n in best_rem:
                if rem and (topo.node_bits[n] & free_bits).bit_count() >= group:
                    got = take_packed_bits(topo, topo.node_bits[n] & free_bits, group)
                    result, free_bits, rem = result | got, free_bits & ~got, rem - group
        return CPUSet.from_bits(result)
    return take_packed(topo, avail, count)


@SETTINGS
@given(machines_and_sets(), st.sampled_from([1, 2]))
def test_distributed_matches_the_reference(case, group):
    topo, avail, count = case
    if count > len(avail):
        return
    assert take_distributed(topo, avail, count, group) == reference_distributed(topo, avail, count, group)


def test_integer_balance_score_equals_rounded_float_std():
    import random

    rng = random.Random(7)
    for _ in range(5000):
        values = [rng.randint(0, 64) for _ in range(rng.randint(1, 16))]
        want = round(_std(values) * 1000)
        assert _std_milli(sum(values), sum(v * v for v in values), len(values)) == want


def test_even_split_over_the_fewest_nodes():
    got = take_distributed(QUAD_NODE, QUAD_NODE.cpus(), 12)  # 8 CPUs per node: needs 2 nodes, 6 + 6
    per_node = sorted(len(got & QUAD_NODE.cpus_in_numa_nodes(n)) for n in QUAD_NODE.numa_nodes())
    assert per_node == [0, 0, 6, 6]
