"""discover() on synthetic trees built by tests/fixtures/sysfs_builder.py."""
from __future__ import annotations

import json

import pytest

from pynuma.cpuset import CPUSet
from bench.recording import RecordingFsRoot
from pynuma.discover import discover
from pynuma.model import Topology
from tests.fixtures.sysfs_builder import Machine, cpulist, cpumask, put, remove


@pytest.fixture
def big(tmp_path):
    """2 packages x 2 nodes x 4 cores x 2 threads, CPU 5 offline, node 3 memory-only."""
    m = Machine(packages=2, nodes_per_package=2, cores_per_node=4, threads=2, offline=[5], memory_only_nodes=[3])
    return m, discover(m.write(tmp_path))


def test_cpu_sets(big):
    m, topo = big
    assert topo.online_cpus == CPUSet(m.online)
    assert 5 not in topo.online_cpus
    assert topo.offline_cpus == CPUSet([5])
    assert topo.possible_cpus == CPUSet(m.all_cpus)
    assert [c.id for c in topo.cpus] == m.online


def test_packages_and_cores(big):
    m, topo = big
    assert len(topo.packages) == 2
    expected = {p: CPUSet(c["id"] for c in m.cpus if c["package"] == p and c["id"] in m.online) for p in (0, 1)}
    assert {p.id: p.cpus for p in topo.packages} == expected
    # 3 nodes with CPUs x 4 cores; the offline CPU's sibling still makes its core
    assert topo.cores == 12
    cpu4 = topo.cpu(4)
    assert cpu4.thread_siblings == CPUSet([4])  # CPU 5 is offline
    assert topo.cpu(0).thread_siblings == CPUSet([0, 1])
    assert topo.cpu(0).core == 0 and topo.cpu(2).core == 1
    cores = [c.core for c in topo.cpus]
    assert cores == sorted(cores)  # numbered in order of their lowest CPU
    assert {c.core_id for c in topo.cpus} == {0, 1, 2, 3}


def test_memory_only_node(big):
    m, topo = big
    assert topo.node_ids == (0, 1, 2, 3)
    n3 = topo.node(3)
    assert n3.cpus == CPUSet() and not n3.has_cpu and n3.has_memory
    assert n3.memory_total == m.node_memory_kb * 1024
    assert n3.memory_free == m.node_memory_kb // 2 * 1024
    assert n3.hugepages[2048].total == 4 and n3.hugepages[2048].free == 3
    assert set(n3.hugepages) == {2048, 1048576}


def test_cpu_nodes_and_uncore(big):
    m, topo = big
    for cpu in topo.cpus:
        want = next(c["node"] for c in m.cpus if c["id"] == cpu.id)
        assert cpu.node == want == topo.node_of_cpu(cpu.id)
        assert cpu.uncore_cache == m.node_ids.index(want)
        assert cpu.die == 0


def test_caches(big):
    m, topo = big
    l3 = [c for c in topo.caches if c.level == 3]
    assert sorted(str(c.cpus) for c in l3) == sorted(str(n.cpus) for n in topo.numa_nodes if n.cpus)
    assert all(c.size_bytes == 16 << 20 and c.type == "Unified" for c in l3)
    l1d = [c for c in topo.caches if c.level == 1 and c.type == "Data"]
    assert len(l1d) == 12 and sum(len(c.cpus) for c in l1d) == len(m.online)


def test_distances(big):
    _, topo = big
    d = topo.distances
    assert d.nodes == (0, 1, 2, 3) and d.source == "sysfs"
    assert d.matrix[0][0] == 10 and d.between(0, 3) == 20


def test_round_trip_through_json(big):
    _, topo = big
    data = json.loads(json.dumps(topo.to_dict()))
    assert Topology.from_dict(data) == topo


def test_sparse_node_ids_keep_columns_by_position(tmp_path):
    matrix = [[10, 21, 31], [21, 10, 41], [31, 41, 10]]
    m = Machine(packages=3, node_ids=[0, 4, 9], distances=matrix)
    topo = discover(m.write(tmp_path))
    assert topo.node_ids == (0, 4, 9)
    assert topo.distances.between(4, 9) == 41 and topo.distances.between(0, 9) == 31


def test_no_numa_dir_gives_node_zero_from_proc_meminfo(tmp_path):
    m = Machine(packages=1, cores_per_node=2, threads=2, numa_dir=False, hugepages={2048: 7})
    topo = discover(m.write(tmp_path))
    assert len(topo.numa_nodes) == 1
    node = topo.numa_nodes[0]
    assert node.id == 0 and node.cpus == topo.online_cpus
    assert node.memory_total == m.node_memory_kb * 1024
    assert node.hugepages[2048].total == 7 and node.hugepages[2048].reserved == 0
    assert topo.distances is None


def test_no_online_file_uses_cpu_online_files(tmp_path):
    m = Machine(packages=1, cores_per_node=4, offline=[2], online_file=False)
    topo = discover(m.write(tmp_path))
    assert topo.online_cpus == CPUSet([0, 1, 3])


def test_cpu_without_topology_dir_is_ignored(tmp_path):
    root = Machine(packages=1, cores_per_node=4).write(tmp_path)
    remove(root, "/sys/devices/system/cpu/cpu3/topology")
    topo = discover(root)
    assert topo.online_cpus == CPUSet([0, 1, 2])


def test_old_sysfs_names(tmp_path):
    topo = discover(Machine(packages=2, cores_per_node=2, threads=2, new_names=False).write(tmp_path))
    assert len(topo.packages) == 2 and topo.cores == 4 and topo.cpu(0).die is None


def test_compute_units_share_a_mask_but_are_two_cores(tmp_path):
    # AMD Bulldozer: one thread_siblings mask, different core_id values
    root = Machine(packages=1, cores_per_node=2, threads=2).write(tmp_path)
    put(root, "/sys/devices/system/cpu/cpu1/topology/core_id", "7\n")
    topo = discover(root)
    assert topo.cores == 3
    assert topo.cpu(0).core != topo.cpu(1).core


def test_missing_caches(tmp_path):
    topo = discover(Machine(packages=1, cores_per_node=2, caches=False).write(tmp_path))
    assert topo.caches == () and all(c.uncore_cache is None for c in topo.cpus)


def test_cpuset_cgroup_v1_restricts_cpus_and_nodes(tmp_path):
    root = Machine(packages=2, cores_per_node=2).write(tmp_path)
    put(root, "/proc/mounts", "cgroup /cg/cpuset cgroup rw,cpuset 0 0\n")
    put(root, "/proc/self/cgroup", "3:cpuset:/job\n0::/\n")
    put(root, "/cg/cpuset/job/cpuset.cpus", "0-2\n")
    put(root, "/cg/cpuset/job/cpuset.mems", "1\n")
    topo = discover(root)
    assert topo.online_cpus == CPUSet([0, 1, 2])
    assert topo.node_ids == (1,)
    assert topo.node(1).cpus == CPUSet([2])
    assert topo.cpu(0).node is None
    assert topo.distances is None


def test_cpuset_cgroup_v2_effective_files(tmp_path):
    root = Machine(packages=2, cores_per_node=2).write(tmp_path)
    put(root, "/proc/mounts", "none /unified cgroup2 rw 0 0\n")
    put(root, "/unified/cgroup.controllers", "cpu cpuset memory\n")
    put(root, "/proc/self/cpuset", "/a/b\n")
    put(root, "/unified/a/b/cpuset.cpus.effective", "1-3\n")
    put(root, "/unified/a/b/cpuset.mems.effective", "0-1\n")
    topo = discover(root)
    assert topo.online_cpus == CPUSet([1, 2, 3]) and topo.node_ids == (0, 1)
    assert topo.distances.nodes == (0, 1)


def test_cgroup2_without_cpuset_controller_is_no_restriction(tmp_path):
    root = Machine(packages=1, cores_per_node=2).write(tmp_path)
    put(root, "/proc/mounts", "none /unified cgroup2 rw 0 0\n")
    put(root, "/unified/cgroup.controllers", "cpu memory\n")
    put(root, "/proc/self/cgroup", "0::/x\n")
    put(root, "/unified/x/cpuset.cpus.effective", "0\n")
    assert discover(root).online_cpus == CPUSet([0, 1])


def _recorded(root):
    """``(topology, files read, directories listed)`` of one discovery."""
    with RecordingFsRoot(str(root)) as fs:
        topo = discover(fs)
    return topo, fs.files_read, fs.dirs_listed


def test_record_lists_files_and_dirs(tmp_path):
    root = Machine(packages=1, cores_per_node=2).write(tmp_path)
    _topo, files, dirs = _recorded(root)
    assert "/sys/devices/system/cpu/online" in files
    assert "/sys/devices/system/node" in dirs
    assert not any("cpufreq" in f or "acpi_cppc" in f for f in files)


def test_group_files_read_once_per_group(tmp_path):
    root = Machine(packages=2, cores_per_node=4, threads=2).write(tmp_path)
    _topo, files, _dirs = _recorded(root)
    # package masks: read from one CPU per package (plus the first CPU's name probe)
    assert sum(f.endswith("/package_cpus") for f in files) <= 3
    # L3 (index3) shared by a whole node: one read of its map per instance
    assert sum(f.endswith("index3/shared_cpu_map") for f in files) == 2


def test_irregular_groups_still_exact(tmp_path):
    # hybrid-like: cores of 2 threads then a 4-CPU cluster sharing an L2
    root = Machine(packages=1, cores_per_node=5, threads=2).write(tmp_path)
    for cpu in range(6, 10):
        put(root, f"/sys/devices/system/cpu/cpu{cpu}/cache/index2/shared_cpu_map", cpumask(range(6, 10)) + "\n")
    topo = discover(root)
    l2 = sorted(str(c.cpus) for c in topo.caches if c.level == 2)
    assert l2 == sorted(["0-1", "2-3", "4-5", "6-9"])


def test_cpulist_helper_matches_canonical_form():
    assert cpulist([0, 1, 2, 4, 6, 7]) == "0-2,4,6-7" == str(CPUSet.parse("0-2,4,6-7"))


def test_pure_path_gives_the_same_topology(tmp_path):
    """The pure-Python twins (PYNUMA_PURE=1, in a subprocess) are the oracle of the native path."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Machine(packages=2, nodes_per_package=2, cores_per_node=2, threads=2, offline=[3],
                   memory_only_nodes=[2]).write(tmp_path)
    code = "import json,sys; from pynuma.discover import discover; print(json.dumps(discover(sys.argv[1]).to_dict()))"
    project = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYNUMA_PURE="1", PYTHONPATH=project + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code, root], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout) == json.loads(json.dumps(discover(root).to_dict()))


_X86_HEAD = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 15\n"
_FLAGS = "flags\t\t: fpu vme pae sse sse2 nx lm constant_tsc\n"


@pytest.mark.parametrize("text,arch", [
    (_X86_HEAD + _FLAGS, "x86_64"),
    (_X86_HEAD + "fdiv_bug\t: no\nhlt_bug\t\t: no\nf00f_bug\t: no\ncoma_bug\t: no\n" + _FLAGS, "i386"),
    (_X86_HEAD + "flags\t\t: fpu vme pae sse\n", "i386"),
    ("processor\t: 0\nvendor_id\t: AuthenticAMD\n" + _FLAGS + "\nprocessor\t: 1\nfdiv_bug\t: no\n", "x86_64"),
])
def test_guess_arch_x86_kernel_width(text, arch):
    from pynuma.discover import guess_arch

    assert guess_arch(text) == arch


def test_die_id_minus_one_is_no_die_and_its_files_are_read_once(tmp_path):
    # an architecture without dies: every CPU says die_id -1 and is its own die
    m = Machine(packages=2, cores_per_node=4, threads=2)
    root = m.write(tmp_path)
    for cpu in range(16):
        put(root, f"/sys/devices/system/cpu/cpu{cpu}/topology/die_id", "-1\n")
        put(root, f"/sys/devices/system/cpu/cpu{cpu}/topology/die_cpus", cpumask([cpu]) + "\n")
    topo, files, _dirs = _recorded(root)
    assert [c.die for c in topo.cpus] == [-1] * 16
    assert sum("/die_" in f for f in files) == 2  # the first CPU's die_id and die_cpus, nothing more


def test_a_real_die_id_is_still_read_per_die(tmp_path):
    root = Machine(packages=2, cores_per_node=4, threads=2).write(tmp_path)  # die 0 of each package
    topo, files, _dirs = _recorded(root)
    assert sum(f.endswith("/die_id") for f in files) == 2  # one per die
    assert {c.die for c in topo.cpus} == {0}
