"""Read-only discovery of this machine's live /sys and /proc."""
from __future__ import annotations

import os

import pytest

from pynuma.discover import discover

pytestmark = pytest.mark.skipif(not os.path.isdir("/sys/devices/system/cpu"), reason="no sysfs")


@pytest.fixture(scope="module")
def topo():
    return discover("/")


def test_online_cpus_match_the_kernel(topo):
    with open("/sys/devices/system/cpu/online") as f:  # noqa: the test compares with the reader
        from pynuma.cpuset import CPUSet

        online = CPUSet.parse(f.read())
    assert topo.online_cpus <= online
    assert topo.online_cpus == online & CPUSet(os.sched_getaffinity(0)) or topo.online_cpus <= online


def test_every_cpu_is_in_a_node_and_a_core(topo):
    assert topo.numa_nodes
    for cpu in topo.cpus:
        assert cpu.node is not None and 0 <= cpu.core < topo.cores
        assert cpu.id in topo.node(cpu.node).cpus


def test_nodes_have_plausible_memory(topo):
    for node in topo.numa_nodes:
        assert node.memory_total > 0 and node.has_memory
        assert 0 <= node.memory_free <= node.memory_total
        for size, pool in node.hugepages.items():
            assert pool.size_kb == size and 0 <= pool.free <= pool.total + pool.surplus


def test_arch_is_uname(topo):
    assert topo.arch == os.uname().machine


def test_discovery_is_repeatable(topo):
    again = discover("/")
    assert again.online_cpus == topo.online_cpus and again.node_ids == topo.node_ids
    assert again.cores == topo.cores and again.packages == topo.packages
