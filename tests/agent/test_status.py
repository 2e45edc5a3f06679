"""Node status on a saved node: capacity, allocatable, conditions, system info, addresses, Node schema."""
from __future__ import annotations

import pytest

from pynuma.agent import AgentConfig, NodeAgent
from pynuma.agent.conditions import ConditionTracker
from pynuma.agent.status import NUMA_ANNOTATION
from pynuma.cgroups.synthetic import MEM_TOTAL
from pynuma.errors import InputError
from pynuma.quantity import Quantity
from tests.agent.conftest import BOOT_ID, MACHINE_ID

MI = 1 << 20


def _k8s_errors(obj):
    validate = pytest.importorskip("pynuma.export.validate")
    pytest.importorskip("kubernetes_validate")
    return validate.k8s_errors(obj)


def test_status_reports_what_the_root_holds(node_root):
    with NodeAgent(node_root) as agent:
        status = agent.status(now=1000.0)
        topo = agent.topology
    assert status.node_name == "worker-7"
    assert str(status.capacity["cpu"]) == str(len(topo.online_cpus)) == "8"
    assert status.capacity["memory"].value() == MEM_TOTAL
    # 8 machine-wide 2 MiB pages written by the fixture
    assert status.capacity["hugepages-2Mi"].value() == 8 * 2 * MI
    assert "pid" not in status.capacity and "pid" not in status.allocatable
    info = status.node_info
    assert (info.machine_id, info.boot_id, info.kernel_version) == (MACHINE_ID, BOOT_ID, "6.1.0-test")
    assert info.os_image == "Testix 1.0 (fixture)" and info.architecture == "amd64"
    assert status.addresses == (("Hostname", "worker-7"),)
    assert [(n.id, n.cpus, n.cpu_count) for n in status.numa_nodes] == [(0, "0-3", 4), (1, "4-7", 4)]
    assert [c.type for c in status.conditions] == ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
    assert status.ready


def test_allocatable_subtracts_reservations_eviction_and_hugepages(node_root):
    cfg = AgentConfig(kube_reserved={"cpu": "1", "memory": "1Gi"}, system_reserved={"memory": "512Mi"},
                      eviction_hard={"memory.available": "100Mi"})
    with NodeAgent(node_root, cfg) as agent:
        status = agent.status()
    cap, alloc = status.capacity, status.allocatable
    assert alloc["cpu"].value() == cap["cpu"].value() - 1
    expected = cap["memory"].value() - (1 << 30) - 512 * MI - 100 * MI - cap["hugepages-2Mi"].value()
    assert alloc["memory"].value() == expected


def test_reserved_system_cpus_replace_the_cpu_reservations(node_root):
    cfg = AgentConfig(kube_reserved={"cpu": "500m"}, system_reserved={"cpu": "300m"}, reserved_system_cpus="0-1",
                      cpu_manager_policy="static")
    with NodeAgent(node_root, cfg) as agent:
        status = agent.status()
    assert str(status.allocatable["cpu"]) == "6"  # the kubelet: capacity minus the reserved list's size


def test_a_reservation_above_capacity_refuses_to_start(node_root):
    with pytest.raises(InputError, match='Resource "cpu" has an allocatable of'):
        NodeAgent(node_root, AgentConfig(kube_reserved={"cpu": "9"}))


def test_transition_time_moves_only_when_the_status_flips():
    track = ConditionTracker()
    first = {c.type: c for c in track.update([], None, now=100.0)}
    same = {c.type: c for c in track.update([], None, now=110.0)}
    flipped = {c.type: c for c in track.update(["MemoryPressure"], None, now=120.0)}
    assert same["MemoryPressure"].last_transition_time == first["MemoryPressure"].last_transition_time == 100.0
    assert same["MemoryPressure"].last_heartbeat_time == 110.0
    assert flipped["MemoryPressure"].status == "True" and flipped["MemoryPressure"].last_transition_time == 120.0
    assert flipped["MemoryPressure"].reason == "KubeletHasInsufficientMemory"
    assert flipped["DiskPressure"].last_transition_time == 100.0
    not_ready = {c.type: c for c in track.update([], "eviction cycle failed: x", now=130.0)}
    assert (not_ready["Ready"].status, not_ready["Ready"].reason) == ("False", "KubeletNotReady")
    assert not_ready["Ready"].message == "eviction cycle failed: x"


def test_status_content_ignores_heartbeats(node_root):
    with NodeAgent(node_root) as agent:
        a, b = agent.status(now=100.0), agent.status(now=200.0)
    assert a.content() == b.content()
    assert a.to_node() != b.to_node()  # heartbeat times differ


def test_node_object_validates_and_carries_numa_annotation(node_root):
    import json

    with NodeAgent(node_root, node_name="worker-7") as agent:
        node = agent.status().to_node()
    assert _k8s_errors(node) == []
    numa = json.loads(node["metadata"]["annotations"][NUMA_ANNOTATION])
    assert [n["memoryBytes"] for n in numa] == [1 << 30, 1 << 30]  # the fixture's node_memory_kb
    assert node["status"]["capacity"]["memory"] == str(Quantity(MEM_TOTAL, "BinarySI"))


def test_a_broken_node_fails_validation():
    # the validator is not a rubber stamp: a missing required nodeInfo field is reported
    errors = _k8s_errors({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"},
                          "status": {"nodeInfo": {"machineID": "a"}}})
    assert errors and "required" in errors[0]


@pytest.mark.parametrize("hostname,given,needle", [
    ("worker-7", "Bad_Name", "--node-name: 'Bad_Name' is not a node name"),
    ('we"ird\\host', None, "kernel/hostname: 'we\"ird\\\\host' is not a node name"),
    ("worker-7", "a" * 60 + ".bcdef", "longer than the 63 characters of the kubernetes.io/hostname label"),
], ids=["given", "host name", "too long for the hostname label"])
def test_a_name_no_node_can_have_is_refused(tmp_path, hostname, given, needle):
    from tests.agent.conftest import write_node

    root = write_node(tmp_path / "node", hostname=hostname)
    with pytest.raises(InputError, match="") as err:
        NodeAgent(root, node_name=given)
    assert needle in str(err.value)


def test_the_host_name_names_the_node_lower_cased(tmp_path):
    from tests.agent.conftest import write_node

    with NodeAgent(write_node(tmp_path / "node", hostname="Worker-7")) as agent:
        assert agent.node_name == "worker-7"
