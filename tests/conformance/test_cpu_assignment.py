"""cpu_assignment.json: takeByTopology (packed, spread, uncore and distributed) on exact available sets."""
from __future__ import annotations

import pytest

from pynuma.errors import AllocationError
from pynuma.policy.cpumanager.take import take_by_topology

from ._cpu_common import cpus, topology
from .vectors import vectors


@pytest.mark.parametrize("v", vectors("cpu_assignment.json"))
def test_take_by_topology(v):
    topo = topology(v["topology"])
    expect = v["expect"]
    if isinstance(expect, dict) and "error" in expect:
        with pytest.raises(AllocationError) as err:
            take_by_topology(topo, cpus(v["available"]), v["count"], v.get("options") or {})
        assert expect["error"] in str(err.value)
        return
    got = take_by_topology(topo, cpus(v["available"]), v["count"], v.get("options") or {})
    assert got == cpus(expect), f"got {got}, want {expect}"
