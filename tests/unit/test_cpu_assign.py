"""takeByTopology: properties on random machines, packed-algorithm behaviour, errors."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pynuma.cpuset import CPUSet
from pynuma.errors import AllocationError
from pynuma.policy.cpumanager.assign import Accumulator, take_packed
from pynuma.policy.cpumanager.take import take_by_topology

from .cpu_fixtures import DUAL_NODE_HT, QUAD_NODE, SETTINGS, SINGLE_HT, machines_and_sets


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
