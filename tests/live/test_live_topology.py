"""Read-only discovery of this machine's live /sys and /proc."""
from __future__ import annotations

import os

import pytest

from pynuma.discover import discover

pytestmark = pytest.mark.skipif(not os.path.isdir("/sys/devices/system/cpu"), reason="no sysfs")


@pytest.fixture(scope="module")
def topo():
    return discover("/")


def _kernel_set(path):
    from pynuma.cpuset import CPUSet

    try:
        with open(path) as f:  # noqa: the test compares with the reader
            return CPUSet.parse(f.read())
    except FileNotFoundError:
        return None


def test_online_cpus_match_the_kernel(topo):
    from pynuma.cpuset import CPUSet

    online = _kernel_set("/sys/devices/system/cpu/online")
    # reported = online CPUs of this process's cpuset; the affinity mask always lies inside the cpuset
    assert online & CPUSet(os.sched_getaffinity(0)) <= topo.online_cpus <= online


def _kernel_node_of(cpu_id):
    """The node the kernel links CPU ``cpu_id`` to (``cpuN/nodeM``), or None."""
    for name in os.listdir(f"/sys/devices/system/cpu/cpu{cpu_id}"):
        if name.startswith("node") and name[4:].isdigit():
            return int(name[4:])
    return None


def test_every_cpu_is_in_a_node_and_a_core(topo):
    assert topo.numa_nodes
    reported_nodes = set(topo.node_ids)
    node_dir = "/sys/devices/system/node"
    numa = os.path.isdir(node_dir) and any(n.startswith("node") and n[4:].isdigit() for n in os.listdir(node_dir))
    for cpu in topo.cpus:
        assert 0 <= cpu.core < topo.cores
        kernel = _kernel_node_of(cpu.id) if numa else 0  # a kernel without NUMA: one node 0
        if kernel is None or kernel not in reported_nodes:
            # a node outside this process's cpuset.mems is not reported: its CPUs have no node
            assert cpu.node is None
        else:
            assert cpu.node == kernel
            assert cpu.id in topo.node(cpu.node).cpus


def test_nodes_have_plausible_memory(topo):
    # memory-less nodes (CPU-only nodes on some POWER/ARM/x86 boxes) are ordinary nodes
    with_memory = _kernel_set("/sys/devices/system/node/has_memory")
    for node in topo.numa_nodes:
        assert node.has_memory == (node.memory_total > 0)
        if with_memory is not None and node.has_memory:
            assert node.id in with_memory
        assert 0 <= node.memory_free <= node.memory_total
        for size, pool in node.hugepages.items():
            assert pool.size_kb == size and 0 <= pool.free <= pool.total + pool.surplus
    assert any(node.has_memory for node in topo.numa_nodes)  # this process allocates from somewhere


def test_arch_is_uname(topo):
    assert topo.arch == os.uname().machine


def test_discovery_is_repeatable(topo):
    again = discover("/")
    assert again.online_cpus == topo.online_cpus and again.node_ids == topo.node_ids
    assert again.cores == topo.cores and again.packages == topo.packages
