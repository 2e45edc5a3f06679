"""accumulator.json: the allocator's orderings of free sockets, NUMA nodes, cores and CPUs."""
from __future__ import annotations

import pytest

from pynuma.policy.cpumanager.assign import Accumulator

from ._cpu_common import cpus, topology
from .vectors import vectors

FUNCTIONS = {
    "free_sockets": Accumulator.free_sockets,
    "free_numa_nodes": Accumulator.free_numa_nodes,
    "free_cores": Accumulator.free_cores,
    "free_cpus": Accumulator.free_cpus,
}


@pytest.mark.parametrize("v", vectors("accumulator.json"))
def test_accumulator_ordering(v):
    topo = topology(v["topology"])
    acc = Accumulator(topo, cpus(v["available"]).bits, 0)
    got = FUNCTIONS[v["function"]](acc)
    want = v["expect"]
    if not v.get("ordered", True):
        got, want = sorted(got), sorted(want)
    assert got == want
