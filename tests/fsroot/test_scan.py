"""The one-pass native scan gives exactly the general path's topology, or declines.

Each case discovers the same tree twice, once with the scan and once by the
general path (``pynuma.discover._SCAN`` off), and the two must agree in
everything, warnings and errors included.  The scan's pure twin is compared
with the native scan directly.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pynuma.discover as disc
from pynuma import _impl
from pynuma.fsroot import FsRoot
from tests.fixtures.sysfs_builder import Machine, cpumask, put, remove

CPU = "/sys/devices/system/cpu"
NODE = "/sys/devices/system/node"

needs_native = pytest.mark.skipif("native" not in _impl.implementations("fsread"), reason="native fsread not built")


def _outcome(root, scan: bool):
    saved = disc._SCAN
    disc._SCAN = scan and _impl.is_native("fsread")
    try:
        topo = disc.discover(root)
    except Exception as err:  # the general path's errors must be the scan's too
        return ("error", type(err).__name__, str(err))
    finally:
        disc._SCAN = saved
    return ("ok", topo.to_dict(), topo.warnings)


def _same_both_ways(root):
    fast, general = _outcome(root, True), _outcome(root, False)
    assert fast == general
    return fast


def _native_scan(root):
    """The native scan's status on a tree (reading the CPU sets itself)."""
    from pynuma import _native_fsread

    with FsRoot(str(root)) as fs:
        return _native_fsread.scan(fs.root_fd, None, None, True, False)[0]


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


@needs_native
@pytest.mark.parametrize("shape", SHAPES, ids=[str(i) for i in range(len(SHAPES))])
def test_regular_machines_take_the_scan_and_agree(tmp_path, shape):
    root = Machine(**shape).write(tmp_path)
    assert _native_scan(root) == "ok"  # a regular tree: the scan answers
    outcome = _same_both_ways(root)
    assert outcome[0] == "ok" and outcome[2] == ()


# edits that make a tree unusual: the scan must decline, the answer stay the general path's
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


@needs_native
@pytest.mark.parametrize("name", sorted(EDITS))
def test_unusual_trees_give_the_general_answer(tmp_path, name):
    root = Machine(packages=2, nodes_per_package=2, cores_per_node=4, threads=2, offline=[5]).write(tmp_path)
    EDITS[name](root)
    _same_both_ways(root)


@needs_native
@settings(max_examples=40)
@given(packages=st.integers(1, 3), nodes=st.integers(1, 2), cores=st.integers(1, 3), threads=st.integers(1, 2),
       offline=st.sets(st.integers(0, 35), max_size=3), new_names=st.booleans(), caches=st.booleans(),
       numa_dir=st.booleans(), online_file=st.booleans(), edits=st.lists(st.sampled_from(sorted(EDITS)), max_size=2))
def test_any_machine_either_way(tmp_path_factory, packages, nodes, cores, threads, offline, new_names, caches,
                                numa_dir, online_file, edits):
    machine = Machine(packages=packages, nodes_per_package=nodes, cores_per_node=cores, threads=threads,
                      new_names=new_names, caches=caches, numa_dir=numa_dir, online_file=online_file)
    machine.offline = {c for c in offline if 0 < c < len(machine.cpus)}  # keep CPU 0 online
    root = machine.write(tmp_path_factory.mktemp("m"))
    for name in edits:
        try:
            EDITS[name](root)
        except OSError:
            pass  # an edit of a file this shape does not have
    _same_both_ways(root)


@needs_native
@pytest.mark.parametrize("shape", SHAPES[:3] + SHAPES[-1:], ids=["0", "1", "2", "no-online-file"])
def test_native_scan_equals_its_pure_twin(tmp_path, shape):
    from pynuma import _native_fsread, _pure_fsread

    root = Machine(**shape).write(tmp_path)
    with FsRoot(root) as fs:
        reported = sum(1 << c for c in Machine(**shape).online)
        for args in ((None, None), (reported, None), (reported, 0b1), (reported, 0b11)):
            native = _native_fsread.scan(fs.root_fd, *args, True, True)
            pure = _pure_fsread.scan(fs.root_fd, *args, True, True)
            assert native[0] == "ok" and native[:3] == pure[:3]
            assert set(native[3][0]) <= set(pure[3][0])  # the general path may read a file more than once


@needs_native
def test_record_lists_what_the_scan_read(tmp_path):
    root = Machine(packages=2, cores_per_node=2, threads=2).write(tmp_path)
    disc.discover(root, record=True)
    files, dirs = disc.last_record
    assert f"{CPU}/cpu0/topology/core_cpus" in files and f"{CPU}/cpu1/topology/core_id" in files
    assert f"{NODE}/node0/meminfo" in files and NODE in dirs and f"{CPU}/cpu0/cache" in dirs
    assert sum(f.endswith("index3/shared_cpu_map") for f in files) == 2  # an L3 per node, each read once
    assert all(f.startswith("/") for f in files + dirs)


def test_make_records_builds_frozen_records(backend):
    from pynuma.cpuset import CPUSet
    from pynuma.model import Cache

    fsread = backend("fsread")
    rows = [(1, "Data", 32768, i, CPUSet([i])) for i in range(3)] + [[3, "Unified", None, None, CPUSet()]]
    made = fsread.make_records(Cache, rows)
    assert made == [Cache(*row) for row in rows]
    with pytest.raises(AttributeError):
        made[0].level = 2
    with pytest.raises(ValueError):
        fsread.make_records(Cache, [(1, "Data")])
    assert fsread.make_records(Cache, []) == []


def test_fsread_twins_offer_the_same_functions():
    from tests.fixtures.twins import twin_functions

    names = twin_functions("fsread")
    assert {"scan", "group_walk", "make_records", "read_many_text"} <= set(names)


# odd bytes anywhere the scan reads: it must never crash, and its answer (or error) stays the general path's
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


@needs_native
@settings(max_examples=60)
@given(changes=st.lists(st.tuples(st.sampled_from(_TARGETS), st.lists(st.sampled_from(_ATOMS), min_size=1,
                                                                        max_size=3)), min_size=1, max_size=3))
def test_odd_bytes_anywhere(tmp_path_factory, changes):
    root = Machine(packages=2, nodes_per_package=2, cores_per_node=2, threads=2, offline=[3]).write(
        tmp_path_factory.mktemp("odd"))
    _write_atoms(root, changes)
    _same_both_ways(root)


@needs_native
def test_a_slit_does_not_stop_the_scan_and_wins(tmp_path):
    root = Machine(packages=2, nodes_per_package=1, cores_per_node=2).write(tmp_path)
    _slit(root, [[10, 32], [32, 10]])
    assert _native_scan(root) == "ok"
    topo = _same_both_ways(root)
    assert topo[1]["distances"]["matrix"] == [[10, 32], [32, 10]]
    assert any("disagree" in w for w in topo[2])


@needs_native
@settings(max_examples=25)
@given(changes=st.lists(st.tuples(st.sampled_from(_TARGETS), st.lists(st.sampled_from(_ATOMS), min_size=1,
                                                                        max_size=2)), max_size=2))
def test_threads_change_nothing_but_time(tmp_path_factory, changes):
    # the scan's parts may run on several threads: its answer, its record and its first error
    # (irregular trees included) are the same for any number of them
    from pynuma import _native_fsread

    root = Machine(packages=2, nodes_per_package=2, cores_per_node=4, threads=2, offline=[9]).write(
        tmp_path_factory.mktemp("threads"))
    _write_atoms(root, changes)
    with FsRoot(str(root)) as fs:
        results = {n: _native_fsread.scan(fs.root_fd, None, None, True, True, n) for n in (1, 2, 3, 8)}
    assert all(result == results[1] for result in results.values())
    if not changes:
        assert results[1][0] == "ok"


@pytest.mark.parametrize("value, threads", [("", 0), ("1", 1), ("3", 3), ("x", 0), ("-2", 0)])
def test_scan_threads_from_the_environment(monkeypatch, value, threads):
    from pynuma import fsroot

    monkeypatch.setenv("PYNUMA_SCAN_THREADS", value)
    assert fsroot._scan_threads() == threads


def _move_and_link(root, path: str, new_home: str, link: str) -> None:
    """Move ``path`` (absolute in the tree) to ``new_home`` and leave a symlink ``link`` in its place."""
    base = os.path.join(str(root), path.lstrip("/"))
    target = os.path.join(str(root), new_home.lstrip("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.rename(base, target)
    os.symlink(link, base)


@needs_native
@pytest.mark.parametrize("path, new_home, link", [
    # an absolute symlink: it restarts from the dump's root, never from the CPU directory
    (f"{CPU}/cpu3", "/sys/devices/cpu3_moved", "/sys/devices/cpu3_moved"),
    # a relative symlink climbing above the CPU directory
    (f"{CPU}/cpu2/cache", "/sys/devices/cache_of_cpu2", "../../../cache_of_cpu2"),
    # one staying below it
    (f"{CPU}/cpu1/topology", f"{CPU}/topology_of_cpu1", "../topology_of_cpu1"),
    # a file leading to the dump's own /etc (absent here): as missing as it is for the general path
    (f"{CPU}/cpu0/topology/core_id", "/sys/core_id_of_cpu0", "/sys/core_id_of_cpu0"),
])
def test_symlinks_out_of_the_cpu_directory_resolve_from_the_root(tmp_path, path, new_home, link):
    # the scan looks the per-CPU files up from the CPU directory; a link that leaves it is
    # resolved from the root instead, as every other read is
    shape = dict(packages=2, cores_per_node=2, threads=2)
    plain = _same_both_ways(Machine(**shape).write(tmp_path / "plain"))
    root = Machine(**shape).write(tmp_path / "linked")
    _move_and_link(root, path, new_home, link)
    assert _native_scan(root) == "ok"
    assert _same_both_ways(root) == plain


@needs_native
def test_a_symlink_out_of_the_root_stays_in_the_root(tmp_path):
    root = Machine(packages=1, cores_per_node=2, threads=2).write(tmp_path)
    core_id = os.path.join(str(root), CPU.lstrip("/"), "cpu1/topology/core_id")
    os.remove(core_id)
    os.symlink("/proc/self/status", core_id)  # this machine's file: must read as the dump's (absent) one
    with FsRoot(root) as fs:
        assert fs.read_optional(f"{CPU}/cpu1/topology/core_id") is None
    assert _outcome(root, True) == _outcome(root, False)
