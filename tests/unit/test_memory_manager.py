"""MemoryManager as a hint provider: TopologyHint in and out, state kept, checkpoint load/save."""
from __future__ import annotations

import pytest

from pynuma.errors import CheckpointError, InputError
from pynuma.pod import Pod
from pynuma.policy.topologymanager.hints import TopologyHint
from pynuma.policy.memorymanager.manager import MemoryManager, machine_from_topology
from pynuma.policy.memorymanager.static_policy import NodeInfo
from pynuma.state.memory_checkpoint import restore_manager, save_manager

GI = 1 << 30


def _pod(uid, mem, huge=None):
    res = {"cpu": "2", "memory": mem}
    if huge:
        res["hugepages-2Mi"] = huge
    return Pod.from_dict({"uid": uid, "name": uid, "containers": [{"name": "c", "requests": res, "limits": res}]})


@pytest.fixture
def mm():
    machine = [NodeInfo(0, 8 * GI, ((2048, 512),)), NodeInfo(1, 8 * GI, ((2048, 512),))]
    return MemoryManager.from_machine(machine, "0:memory=1Gi;1:memory=1Gi", {"memory": "2Gi"})


def test_hints_are_topology_hints(mm):
    p = _pod("a", "1Gi", "64Mi")
    hints = mm.hints(p, p.containers[0])
    assert set(hints) == {"memory", "hugepages-2Mi"}
    assert TopologyHint.of([0], True) in hints["memory"] and TopologyHint.of([0, 1], False) in hints["memory"]
    assert mm.pod_hints(p) == hints


def test_allocate_with_merged_hint_and_release(mm):
    p = _pod("a", "1Gi", "64Mi")
    blocks = mm.allocate(p, p.containers[0], TopologyHint.of([1], True))
    assert {(b.type, b.numa_affinity, b.size) for b in blocks} == {("memory", (1,), GI),
                                                                     ("hugepages-2Mi", (1,), 64 << 20)}
    assert mm.hints(p, p.containers[0])["memory"] == [TopologyHint.of([1], True)]  # regenerated from the state
    mm.remove("a", "c")
    assert mm.blocks("a", "c") == []


def test_reservation_must_match_node_allocatable():
    with pytest.raises(InputError, match="not equal"):
        MemoryManager.from_machine([NodeInfo(0, 8 * GI)], "0:memory=1Gi", {"memory": "2Gi"})


def test_save_and_load(mm, tmp_path):
    p = _pod("a", "3Gi")
    mm.allocate(p, p.containers[0])
    path = str(tmp_path / "memory_manager_state")
    save_manager(mm, path)
    other = MemoryManager.from_machine([NodeInfo(0, 8 * GI, ((2048, 512),)), NodeInfo(1, 8 * GI, ((2048, 512),))],
                                       "0:memory=1Gi;1:memory=1Gi")
    restore_manager(other, path)
    assert other.blocks("a", "c") == mm.blocks("a", "c")
    smaller = MemoryManager.from_machine([NodeInfo(0, 4 * GI, ((2048, 512),)), NodeInfo(1, 8 * GI, ((2048, 512),))],
                                         "0:memory=1Gi;1:memory=1Gi")
    with pytest.raises(CheckpointError, match="different from the real one"):
        restore_manager(smaller, path)


def test_machine_from_discovered_topology():
    from types import SimpleNamespace as NS
    topo = NS(numa_nodes=[NS(id=1, memory_total=4 * GI, hugepages={2048: NS(total=8), 1048576: NS(total=1)}),
                          NS(id=0, memory_total=2 * GI, hugepages={})])
    assert machine_from_topology(topo) == [NodeInfo(1, 4 * GI, ((2048, 8), (1048576, 1))), NodeInfo(0, 2 * GI, ())]
