"""takeByTopology: properties on random machines, a reference for the distributed search, errors."""
from __future__ import annotations

import math
from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pynuma.cpuset import CPUSet
from pynuma.errors import AllocationError
from pynuma.policy.cpu_assign import Accumulator, take_by_topology, take_distributed, take_packed, take_packed_bits

from .cpu_fixtures import DUAL_NODE_HT, QUAD_NODE, SINGLE_HT, machine

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def machines_and_sets(draw):
    topo = machine(sockets=draw(st.integers(1, 2)), nodes_per_socket=draw(st.integers(1, 3)),
                   cores_per_node=draw(st.integers(1, 4)), threads=draw(st.sampled_from([1, 2, 4])))
    cpus = topo.cpus().to_list()
    avail = CPUSet(draw(st.lists(st.sampled_from(cpus), unique=True)))
    count = draw(st.integers(0, len(avail) + 1))
    return topo, avail, count


OPTION_SETS = [{}, {"distribute-cpus-across-cores": True}, {"prefer-align-cpus-by-uncorecache": True},
               {"distribute-cpus-across-numa": True}, {"distribute-cpus-across-numa": True, "cpu_group_size": 2}]


@SETTINGS
@given(machines_and_sets(), st.sampled_from(OPTION_SETS))
def test_never_outside_available_never_wrong_count(case, options):
    topo, avail, count = case
    if count > len(avail):
        with pytest.raises(AllocationError, match="not enough cpus available"):
            take_by_topology(topo, avail, count, options)
        return
    got = take_by_topology(topo, avail, count, options)
    assert got <= avail
    assert len(got) == count


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


def test_packed_prefers_sibling_of_a_partly_used_core():
    # CPU 0 is taken: its sibling 4 is the best single pick on a single-socket SMT box.
    assert take_packed(SINGLE_HT, CPUSet.range(1, 8), 1) == CPUSet([4])


def test_spread_skips_whole_cores():
    assert take_packed(SINGLE_HT, SINGLE_HT.cpus(), 2, spread=True) == CPUSet([0, 1])


def test_whole_node_taken_first_on_multi_node_socket():
    node0 = QUAD_NODE.cpus_in_numa_nodes(0)
    assert take_packed(QUAD_NODE, QUAD_NODE.cpus(), len(node0)) == node0


def test_zero_count_is_empty_and_errors_name_the_numbers():
    assert take_packed(DUAL_NODE_HT, CPUSet(), 0) == CPUSet()
    with pytest.raises(AllocationError, match=r"requested=3, available=2"):
        take_packed(DUAL_NODE_HT, CPUSet([0, 1]), 3)
    with pytest.raises(ValueError):
        take_by_topology(DUAL_NODE_HT, DUAL_NODE_HT.cpus(), -1)


def test_orderings_only_list_units_with_free_cpus():
    acc = Accumulator(QUAD_NODE, QUAD_NODE.cpus_in_numa_nodes(2).bits, 0)
    assert acc.numa_order() == [2] and acc.socket_order() == [1]
    assert acc.free_numa_nodes() == [2] and acc.free_sockets() == []
