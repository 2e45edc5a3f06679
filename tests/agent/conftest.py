"""A saved node for the agent's tests: sysfs topology, /proc, system files and a kubelet cgroup tree."""
from __future__ import annotations

import pytest

from pynuma.cgroups.synthetic import MEM_TOTAL, build_tree, make_pods
from tests.fixtures.sysfs_builder import Machine, put

BOOT_ID = "0f4c3a2e-1b2c-4d5e-8f90-123456789abc"
MACHINE_ID = "5d1b0d4e8f1a4c3b9e2d7f6a5b4c3d2e"


def write_node(root, pods: int = 0, hostname: str = "worker-7", machine: Machine = None,
               containers_per_pod: int = 2) -> str:
    """Write a two-NUMA-node machine with ``pods`` pods under ``root``; returns it."""
    machine = machine or Machine(packages=2, cores_per_node=2, threads=2, hugepages={2048: 8, 1048576: 0},
                                 distances=[[10, 21], [21, 10]])
    machine.write(root)
    build_tree(str(root), pods=make_pods(pods, containers_per_pod))
    put(root, "/proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu lm sse\n\n")
    put(root, "/etc/machine-id", MACHINE_ID + "\n")
    put(root, "/etc/os-release", 'NAME="Testix"\nPRETTY_NAME="Testix 1.0 (fixture)"\nID=testix\n')
    put(root, "/proc/sys/kernel/random/boot_id", BOOT_ID + "\n")
    put(root, "/proc/sys/kernel/osrelease", "6.1.0-test\n")
    put(root, "/proc/sys/kernel/hostname", hostname + "\n")
    put(root, "/proc/sys/kernel/pid_max", "32768\n")
    put(root, "/proc/sys/kernel/threads-max", "100000\n")
    put(root, "/proc/loadavg", "0.00 0.01 0.05 1/300 4242\n")
    return str(root)


def set_mem_total(root, total_bytes: int) -> None:
    """Rewrite MemTotal (memory.available = MemTotal - the root cgroup's working set)."""
    put(root, "/proc/meminfo", f"MemTotal:       {total_bytes // 1024} kB\nMemFree: 1 kB\n")


@pytest.fixture
def node_root(tmp_path):
    return write_node(tmp_path / "node")


@pytest.fixture
def mem_total():
    return MEM_TOTAL
