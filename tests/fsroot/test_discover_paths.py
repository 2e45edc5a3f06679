"""Discovery gives the same answer on the native path and on the pure one, on every kind of tree.

There is one set of rules (``pynuma.discover``); the paths differ in the
reader and parsers under them.  Regular machines, trees with one odd file,
odd bytes anywhere discovery reads and symlinks out of the CPU directory are
discovered by both paths (each in one process for all trees), and the
outcomes -- topology, warnings or error -- must be equal.
"""
from __future__ import annotations

import os
import random

from pynuma.fsroot import FsRoot
from tests.fixtures.paths import both_paths
from tests.fixtures.sysfs_builder import Machine, cpumask, put, remove

CPU = "/sys/devices/system/cpu"
NODE = "/sys/devices/system/node"
ROUNDS = int(os.environ.get("PYNUMA_FUZZ_SCALE", "1"))


def _slit(root, matrix):
    from pynuma.discover import acpi

    path = os.path.join(str(root), "sys/firmware/acpi/tables/SLIT")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(acpi.build_slit(matrix))


SHAPES = [
    dict(),
    dict(packages=2, nodes_per_package=2, cores_per_node=4, threads=2, offline=[5], memory_only_nodes=[3]),
    dict(packages=1, nodes_per_package=1, cores_per_node=3, threads=4),
    dict(packages=2, nodes_per_package=1, cores_per_node=2, threads=1, numa_dir=False),
    dict(packages=2, nodes_per_package=2, cores_per_node=1, threads=2, node_ids=[0, 2, 5, 9]),
    dict(packages=1, nodes_per_package=2, cores_per_node=2, new_names=False, caches=False),
    dict(packages=1, nodes_per_package=1, cores_per_node=2, hugepages={}),
    dict(packages=1, nodes_per_package=3, cores_per_node=1, distances=[[10, 21, 31], [21, 10, 21], [31, 21, 10]]),
    dict(packages=1, nodes_per_package=1, cores_per_node=4, offline=[2], online_file=False),
]


# edits that make a tree unusual
EDITS = {
    "garbage cache size": lambda r: put(r, f"{CPU}/cpu2/cache/index2/size", "lots\n"),
    "tab-only cache size": lambda r: put(r, f"{CPU}/cpu2/cache/index1/size", "\t\n"),
    "empty cache size": lambda r: put(r, f"{CPU}/cpu2/cache/index1/size", " \n"),
    "no shared_cpu_map": lambda r: remove(r, f"{CPU}/cpu2/cache/index2/shared_cpu_map"),
    "no cache level on the first cpu": lambda r: remove(r, f"{CPU}/cpu0/cache/index3/level"),
    "odd cache type": lambda r: put(r, f"{CPU}/cpu0/cache/index0/type", "Trace\n"),
    "lower-case cache type": lambda r: put(r, f"{CPU}/cpu0/cache/index0/type", "data\n"),
    "garbage core_id": lambda r: put(r, f"{CPU}/cpu1/topology/core_id", "abc\n"),
    "no core_id": lambda r: remove(r, f"{CPU}/cpu1/topology/core_id"),
    "garbage core mask": lambda r: put(r, f"{CPU}/cpu1/topology/core_cpus", "xyz\n"),
    "no core mask": lambda r: remove(r, f"{CPU}/cpu1/topology/core_cpus"),
    "no topology dir": lambda r: remove(r, f"{CPU}/cpu3/topology"),
    "no package mask on a leader": lambda r: remove(r, f"{CPU}/cpu4/topology/package_cpus"),
    "garbage package id": lambda r: put(r, f"{CPU}/cpu4/topology/physical_package_id", "x\n"),
    "negative package id": lambda r: put(r, f"{CPU}/cpu4/topology/physical_package_id", "-1\n"),
    "no die files": lambda r: [remove(r, f"{CPU}/cpu{c}/topology/die_id") for c in range(16)],
    "truncated meminfo": lambda r: put(r, f"{NODE}/node1/meminfo", "Node 1 MemTot"),
    "meminfo without MemFree": lambda r: put(r, f"{NODE}/node1/meminfo", "Node 1 MemTotal: 1024 kB\n"),
    "meminfo in MB": lambda r: put(r, f"{NODE}/node1/meminfo", "Node 1 MemTotal: 1024 MB\n"),
    "no node cpulist": lambda r: remove(r, f"{NODE}/node0/cpulist"),
    "no node cpulist or cpumap": lambda r: [remove(r, f"{NODE}/node0/{f}") for f in ("cpulist", "cpumap")],
    "garbage node cpulist": lambda r: put(r, f"{NODE}/node0/cpulist", "3-1\n"),
    "garbage hugepage count": lambda r: put(r, f"{NODE}/node0/hugepages/hugepages-2048kB/nr_hugepages", "?\n"),
    "no hugepage total": lambda r: remove(r, f"{NODE}/node0/hugepages/hugepages-2048kB/nr_hugepages"),
    "no free count": lambda r: remove(r, f"{NODE}/node0/hugepages/hugepages-2048kB/free_hugepages"),
    "odd hugepage dir": lambda r: put(r, f"{NODE}/node0/hugepages/hugepages-x/nr_hugepages", "1\n"),
    "short distance row": lambda r: put(r, f"{NODE}/node0/distance", "10\n"),
    "one distance row missing": lambda r: remove(r, f"{NODE}/node1/distance"),
    "every distance row missing": lambda r: [remove(r, f"{NODE}/node{n}/distance") for n in range(4)],
    "distance row with a word": lambda r: put(r, f"{NODE}/node0/distance", "10 x 20 20\n"),
    "a SLIT table": lambda r: put(r, "/sys/firmware/acpi/tables/SLIT", "not a table"),
    "a SLIT agreeing with the rows": lambda r: _slit(r, [[10 if i == j else 20 for j in range(4)] for i in range(4)]),
    "a SLIT disagreeing with the rows": lambda r: _slit(r, [[10 if i == j else 30 + i + j for j in range(4)]
                                                            for i in range(4)]),
    "a SLIT the kernel would ignore": lambda r: _slit(r, [[11 if i == j else 20 for j in range(4)] for i in range(4)]),
    "a SLIT and no distance rows": lambda r: (_slit(r, [[10 if i == j else 21 for j in range(4)] for i in range(4)]),
                                             [remove(r, f"{NODE}/node{n}/distance") for n in range(4)]),
    "cpuset cgroup": lambda r: (put(r, "/proc/mounts", "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\n"),
                                put(r, "/proc/self/cpuset", "/job\n"),
                                put(r, "/sys/fs/cgroup/cpuset/job/cpuset.cpus", "0-5\n"),
                                put(r, "/sys/fs/cgroup/cpuset/job/cpuset.mems", "0,2\n")),
    "cgroup2 with a cpuset controller": lambda r: (
        put(r, "/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n"),
        put(r, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory\n"),
        put(r, "/proc/self/cgroup", "0::/kubepods/pod1\n"),
        put(r, "/sys/fs/cgroup/kubepods/pod1/cpuset.cpus.effective", "2-9\n"),
        put(r, "/sys/fs/cgroup/kubepods/pod1/cpuset.mems.effective", "1\n")),
    "cgroup2 without a cpuset controller": lambda r: (
        put(r, "/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
        put(r, "/sys/fs/cgroup/cgroup.controllers", "cpu io\n"),
        put(r, "/proc/self/cgroup", "0::/x\n")),
    "legacy cpuset filesystem": lambda r: (
        put(r, "/proc/mounts", "none /dev/cpuset cpuset rw 0 0\n"), put(r, "/proc/self/cpuset", "/job/\n"),
        put(r, "/dev/cpuset/job/cpus", "1-3\n"), put(r, "/dev/cpuset/job/mems", "0\n")),
    "noprefix cpuset": lambda r: (
        put(r, "/proc/mounts", "cgroup /cg cgroup rw,cpuset,noprefix 0 0\n"),
        put(r, "/proc/self/cgroup", "4:cpuset:/a\n3:memory:/b\n"),
        put(r, "/cg/a/cpus", "0,4-7\n"), put(r, "/cg/a/mems", "0-1\n")),
    "empty cpuset.cpus": lambda r: (
        put(r, "/proc/mounts", "cgroup /c cgroup rw,cpuset 0 0\n"), put(r, "/proc/self/cpuset", "/\n"),
        put(r, "/c/cpuset.cpus", "\n"), put(r, "/c/cpuset.mems", "0\n")),
    "a bad /proc/self/cgroup line": lambda r: (
        put(r, "/proc/mounts", "cgroup /c cgroup rw,cpuset 0 0\n"), put(r, "/proc/self/cgroup", "4:cpuset:/a\nxyz\n")),
    "an escaped mount point": lambda r: (
        put(r, "/proc/mounts", "cgroup /cg\\040x cgroup rw,cpuset 0 0\n"), put(r, "/proc/self/cpuset", "/j\n"),
        put(r, "/cg x/j/cpuset.cpus", "3\n")),
    "a carriage return in mounts": lambda r: put(r, "/proc/mounts", "proc /proc proc rw 0 0\r\n"),
    "a non-ASCII mount point": lambda r: (
        put(r, "/proc/mounts", "/dev/sdb1 /media/J\u00fcrgen\u00a0x ext4 rw 0 0\n"
                               "cgroup /c cgroup rw,cpuset 0 0\n"),
        put(r, "/proc/self/cpuset", "/\n"), put(r, "/c/cpuset.cpus", "0-3\n")),
    "a non-breaking space in a cgroup line": lambda r: (
        put(r, "/proc/mounts", "cgroup /c\u00a0cgroup rw,cpuset 0 0\n"), put(r, "/proc/self/cpuset", "/\n"),
        put(r, "/c/cpuset.cpus", "0-3\n")),
    "a PCI device": lambda r: put(r, "/sys/bus/pci/devices/0000:00:00.0/numa_node", "0\n"),
    "no cpu/online, a garbage cpuN/online": lambda r: (remove(r, f"{CPU}/online"), put(r, f"{CPU}/cpu3/online", "2\n")),
    "no cpu/online, an empty cpuN/online": lambda r: (remove(r, f"{CPU}/online"), put(r, f"{CPU}/cpu3/online", "\n")),
    "no cpu/online nor possible": lambda r: (remove(r, f"{CPU}/online"), remove(r, f"{CPU}/possible")),
    "garbage possible": lambda r: put(r, f"{CPU}/possible", "0-\n"),
    "no offline file": lambda r: remove(r, f"{CPU}/offline"),
    "odd name in node dir": lambda r: put(r, f"{NODE}/node01/cpulist", "0\n"),
    "wide masks": lambda r: [put(r, f"{CPU}/cpu{c}/topology/core_cpus", cpumask([c], words=9) + "\n")
                             for c in range(16) if c != 5],
}


_TARGETS = [f"{CPU}/online", f"{CPU}/possible", f"{CPU}/offline", f"{CPU}/cpu0/topology/core_cpus",
            f"{CPU}/cpu2/topology/core_id", f"{CPU}/cpu0/topology/package_cpus", f"{CPU}/cpu4/topology/die_cpus",
            f"{CPU}/cpu0/cache/index0/level", f"{CPU}/cpu2/cache/index3/shared_cpu_map",
            f"{CPU}/cpu4/cache/index2/size", f"{CPU}/cpu4/cache/index2/id", f"{NODE}/node1/cpulist",
            f"{NODE}/node0/meminfo", f"{NODE}/node1/distance",
            f"{NODE}/node0/hugepages/hugepages-2048kB/free_hugepages", "/proc/mounts", "/proc/self/cgroup",
            "/proc/self/cpuset", "/sys/fs/cgroup/cpuset/cpuset.cpus", "/proc/cpuinfo",
            "/sys/firmware/acpi/tables/SLIT"]
_ATOMS = [b"", b"\n", b"0", b"-1", b"99999999999999999999", b"0-4095", b"ffffffff,ffffffff", b"x", b"\x00",
          b"1 kB", b"MemTotal: 1 kB", b"cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0", b"4:cpuset:/",
          b",", b"0-", b"10 20", b"\xff\xfe", b" " * 300, b"0," * 300, b"00000000," * 70 + b"00000001",
          b"cgroup2 / cgroup2 rw 0 0", b"0::/", b"Node 0 MemTotal: 5 kB\nNode 0 MemFree: 1 kB\n"]


def _write_atoms(root, changes):
    """Each ``(path, atoms)`` of ``changes``: the file at ``path`` under ``root`` holds just those bytes."""
    for path, atoms in changes:
        full = f"{root}{path}"
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(b"".join(atoms))


def _move_and_link(root, path: str, new_home: str, link: str) -> None:
    """Move ``path`` (absolute in the tree) to ``new_home`` and leave a symlink ``link`` in its place."""
    base = os.path.join(str(root), path.lstrip("/"))
    target = os.path.join(str(root), new_home.lstrip("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.rename(base, target)
    os.symlink(link, base)



LINKS = [
    # an absolute symlink: it restarts from the dump's root, never from the CPU directory
    (f"{CPU}/cpu3", "/sys/devices/cpu3_moved", "/sys/devices/cpu3_moved"),
    # a relative symlink climbing above the CPU directory
    (f"{CPU}/cpu2/cache", "/sys/devices/cache_of_cpu2", "../../../cache_of_cpu2"),
    # one staying below it
    (f"{CPU}/cpu1/topology", f"{CPU}/topology_of_cpu1", "../topology_of_cpu1"),
    # a file leading to the dump's own /etc (absent here): as missing as it is for the general path
    (f"{CPU}/cpu0/topology/core_id", "/sys/core_id_of_cpu0", "/sys/core_id_of_cpu0"),
]


def _agree(roots):
    """The outcomes of ``roots`` by every path, asserting they are equal; the pure path's are returned."""
    found = both_paths(roots)
    if "native" in found:
        for root, native, pure in zip(roots, found["native"], found["pure"]):
            assert native == pure, root
    return found["pure"]


def test_regular_machines_agree_without_warnings(tmp_path):
    roots = [Machine(**shape).write(tmp_path / str(i)) for i, shape in enumerate(SHAPES)]
    for outcome in _agree(roots):
        assert outcome[0] == "ok" and outcome[2] == []


def test_unusual_trees_agree(tmp_path):
    roots = []
    for i, name in enumerate(sorted(EDITS)):
        root = Machine(packages=2, nodes_per_package=2, cores_per_node=4, threads=2, offline=[5]).write(
            tmp_path / str(i))
        EDITS[name](root)
        roots.append(root)
    _agree(roots)


def test_any_machine_with_any_edits_agrees(tmp_path):
    rng = random.Random(1234)
    roots = []
    for i in range(20 * ROUNDS):
        machine = Machine(packages=rng.randint(1, 3), nodes_per_package=rng.randint(1, 2),
                          cores_per_node=rng.randint(1, 3), threads=rng.randint(1, 2),
                          new_names=rng.random() < 0.5, caches=rng.random() < 0.8, numa_dir=rng.random() < 0.8,
                          online_file=rng.random() < 0.8)
        machine.offline = {c for c in rng.sample(range(36), 3) if 0 < c < len(machine.cpus)}
        root = machine.write(tmp_path / str(i))
        for name in rng.sample(sorted(EDITS), rng.randint(0, 2)):
            try:
                EDITS[name](root)
            except OSError:
                pass  # an edit of a file this shape does not have
        roots.append(root)
    _agree(roots)


def test_odd_bytes_anywhere_agree(tmp_path):
    rng = random.Random(99)
    roots = []
    for i in range(30 * ROUNDS):
        root = Machine(packages=2, nodes_per_package=2, cores_per_node=2, threads=2, offline=[3]).write(
            tmp_path / str(i))
        _write_atoms(root, [(rng.choice(_TARGETS), rng.choices(_ATOMS, k=rng.randint(1, 3)))
                            for _ in range(rng.randint(1, 3))])
        roots.append(root)
    _agree(roots)


def test_symlinks_inside_the_dump_are_followed_alike(tmp_path):
    shape = dict(packages=2, cores_per_node=2, threads=2)
    roots = [Machine(**shape).write(tmp_path / "plain")]
    for i, (path, new_home, link) in enumerate(LINKS):
        root = Machine(**shape).write(tmp_path / str(i))
        _move_and_link(root, path, new_home, link)
        roots.append(root)
    plain, *linked = _agree(roots)
    assert all(outcome == plain for outcome in linked)


def test_a_symlink_out_of_the_root_stays_in_the_root(tmp_path):
    root = Machine(packages=1, cores_per_node=2, threads=2).write(tmp_path)
    core_id = os.path.join(str(root), CPU.lstrip("/"), "cpu1/topology/core_id")
    os.remove(core_id)
    os.symlink("/proc/self/status", core_id)  # this machine's file: must read as the dump's (absent) one
    with FsRoot(root) as fs:
        assert fs.read_optional(f"{CPU}/cpu1/topology/core_id") is None
    _agree([root])


def test_a_slit_wins_over_the_rows(tmp_path):
    root = Machine(packages=2, nodes_per_package=1, cores_per_node=2).write(tmp_path)
    _slit(root, [[10, 32], [32, 10]])
    (outcome,) = _agree([root])
    assert outcome[1]["distances"]["matrix"] == [[10, 32], [32, 10]]
    assert any("disagree" in w for w in outcome[2])
