"""distribute-cpus-across-numa: the fast search equals a direct transcription of the kubelet's algorithm."""
from __future__ import annotations

import math

import pytest

from hypothesis import given
from hypothesis import strategies as st

from pynuma.cpuset import CPUSet
from pynuma.policy.cpumanager.assign import Accumulator, take_packed, take_packed_bits
from pynuma.policy.cpumanager.distribute import _std_milli, take_distributed

from pynuma.errors import AllocationError

from .cpu_fixtures import QUAD_NODE, SETTINGS, machines_and_sets
from .distribute_reference import go_combinations


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
        for kept in go_combinations(numas, k):
            if best == 0:
                break
            combo = kept.values()
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
                for kept_sub in go_combinations(cand, r):
                    sub = kept_sub.values()
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
                        local, local_rem = score, kept_sub
            if local < best:
                best, best_combo, best_rem = local, kept, local_rem
        if best_combo is None:
            continue
        # the kubelet allocates from what its kept slices hold once the walks are over
        best_combo, best_rem = best_combo.values(), best_rem.values() if best_rem is not None else ()
        dist = count // k // group * group
        result, free_bits = 0, avail.bits
        for n in best_combo:
            if (topo.node_bits[n] & free_bits).bit_count() < dist:
                continue  # the kubelet ignores the error of a share it cannot take
            got = take_packed_bits(topo, topo.node_bits[n] & free_bits, dist)
            result, free_bits = result | got, free_bits & ~got
        rem = count - dist * k
        while rem > 0:
            moved = False
            for n in best_rem:
                if rem and (topo.node_bits[n] & free_bits).bit_count() >= group:
                    got = take_packed_bits(topo, topo.node_bits[n] & free_bits, group)
                    result, free_bits, rem = result | got, free_bits & ~got, rem - group
                    moved = True
            if not moved:
                return None  # the kubelet would loop for ever: pynuma reports an accounting error
        if result.bit_count() < count:
            return None  # the kubelet's "accounting error, not enough CPUs allocated"
        return CPUSet.from_bits(result)
    return take_packed(topo, avail, count)


@SETTINGS
@given(machines_and_sets(), st.sampled_from([1, 2]))
def test_distributed_matches_the_reference(case, group):
    topo, avail, count = case
    if count > len(avail):
        return
    want = reference_distributed(topo, avail, count, group)
    if want is None:
        with pytest.raises(AllocationError, match="accounting error"):
            take_distributed(topo, avail, count, group)
    else:
        assert take_distributed(topo, avail, count, group) == want


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


def test_eight_nodes_allocate_from_what_the_kubelets_kept_slices_hold():
    # 2 sockets x 4 nodes x 8 cores x 2 threads: requests spread over 4, 6 and 7 nodes, where Go's
    # append shares the kept combination's last members with the combinations walked after it
    from pynuma.policy.cpumanager.topology import CPUTopology

    cpus = []
    for node in range(8):
        for core in range(8):
            for thread in range(2):
                cid = thread * 64 + node * 8 + core
                cpus.append((cid, node // 4, node, node * 8 + core, node))
    topo = CPUTopology.from_cpus(cpus)
    avail = CPUSet(range(128))
    changed = 0
    for taken in (CPUSet(), CPUSet([0, 1, 64, 65, 20, 84]), CPUSet(list(range(40, 44)) + [104, 105])):
        free = CPUSet(sorted(set(avail) - set(taken)))
        for count in (40, 50, 52, 60, 70, 84, 90, 100):
            for group in (1, 2):
                if count % group or count > len(free):
                    continue
                want = reference_distributed(topo, free, count, group)
                assert want is not None
                assert take_distributed(topo, free, count, group) == want, (taken, count, group)
                changed += want != _without_aliasing(topo, free, count, group)
    assert changed  # the cases do reach the kept slices' shared members


def _without_aliasing(topo, avail, count, group):
    import tests.unit.distribute_reference as ref

    real = ref.GoSlice.append

    def copying(self, value):
        return ref.GoSlice(list(self.values()) + [value], self.length + 1)
    ref.GoSlice.append = copying
    try:
        return reference_distributed(topo, avail, count, group)
    finally:
        ref.GoSlice.append = real
