"""Sizes from input are bounded by what Linux can have; work follows the CPUs actually present."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pynuma import _impl
from pynuma.limits import MAX_CPUS, MAX_NUMA_NODES
from pynuma.parse import parse_prefixed_id
from tests.fixtures.sysfs_builder import Machine

from ._child import forked


def test_limits_are_the_kernels():
    assert MAX_CPUS == 8192 and MAX_NUMA_NODES == 1024
    for mod in _impl.implementations("bitmap").values():
        assert mod.MAX_ID == MAX_CPUS - 1  # native and pure parse the same ids


@pytest.mark.parametrize("name, prefix, below, want", [
    ("node1023", "node", MAX_NUMA_NODES, 1023), ("node1024", "node", MAX_NUMA_NODES, None),
    ("node2147483648", "node", MAX_NUMA_NODES, None), ("node" + "9" * 5000, "node", MAX_NUMA_NODES, None),
    ("cpu8191", "cpu", MAX_CPUS, 8191), ("cpu8192", "cpu", MAX_CPUS, None), ("cpu-1", "cpu", MAX_CPUS, None),
])
def test_prefixed_ids_beyond_linux_are_not_ids(name, prefix, below, want):
    assert parse_prefixed_id(name, prefix, below) == want


def _topology(root, pure):
    r = subprocess.run([sys.executable, "-m", "pynuma", "topology", "--root", str(root), "--json"],
                       capture_output=True, text=True, env=dict(os.environ, PYNUMA_PURE=pure))
    return r


@pytest.fixture
def machine(tmp_path):
    Machine(packages=2, nodes_per_package=1, cores_per_node=2).write(tmp_path)
    return tmp_path


@pytest.mark.parametrize("pure", ["0", "1"])
def test_huge_node_directories_are_skipped_the_same_way(machine, pure):
    for n in ("node2147483648", "node1024", "node" + "9" * 30):
        d = machine / "sys/devices/system/node" / n
        d.mkdir()
        (d / "cpulist").write_text("0-1\n")
    r = _topology(machine, pure)
    assert r.returncode == 0, r.stderr
    assert [n["id"] for n in json.loads(r.stdout)["numa_nodes"]] == [0, 1]


@pytest.mark.parametrize("pure", ["0", "1"])
@pytest.mark.parametrize("claim, ok", [("0-8191", True), ("0-1048575", False), ("0-262143:1/1", False)])
def test_a_ten_byte_cpu_online_does_not_size_the_work(machine, pure, claim, ok):
    for f in ("online", "possible", "present"):
        (machine / "sys/devices/system/cpu" / f).write_text(claim + "\n")
    o = forked(["topology", "--root", str(machine), "--json"], mem=512 << 20)
    if ok:
        assert o.returncode == 0, o.stderr
        assert json.loads(o.stdout)["online_cpus"] == "0-3"  # the CPUs present, not the claim
    else:
        assert o.returncode == 2 and b"id above 8191" in o.stderr and len(o.stderr.splitlines()) == 1


def test_pure_cpulist_stride_is_not_quadratic():
    import signal

    from pynuma._pure_bitmap import parse_cpulist

    def expire(*_):
        raise TimeoutError("stride parsing ran away")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(30)  # a hang guard, not a timing: the quadratic loop took 18 s for one parse
    try:
        for _ in range(200):
            assert parse_cpulist("0-8191:1/1") == (1 << 8192) - 1
            assert parse_cpulist("0-8191:1/2") == int("01" * 4096, 2)
            assert parse_cpulist("3-8190:2/5") == sum(((1 << 2) - 1) << s for s in range(3, 8191, 5)) & ((1 << 8191) - 1)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("name, want", [
    ("hugepages-2048kB", 2048), ("hugepages-16777216kB", 16 << 20), ("hugepages-16777217kB", None),
    ("hugepages-" + "9" * 200 + "kB", None), ("hugepages-00002048kB", 2048), ("hugepages-kB", None),
])
def test_hugepage_sizes_beyond_linux_are_not_pools(name, want):
    from pynuma.parse import parse_hugepage_dirname

    assert parse_hugepage_dirname(name) == want
