"""``group_walk``: per-group files read once per group, native and pure twins alike."""
from __future__ import annotations

import pytest

from pynuma.discover import discover
from pynuma.fsroot import FsRoot
from tests.fixtures.sysfs_builder import Machine, cpumask, put

CPU = "/sys/devices/system/cpu/cpu"
L2 = ("size", "id", "shared_cpu_map")


@pytest.fixture
def root(tmp_path):
    # 2 packages x 4 cores x 2 threads: 16 CPUs, an L2 per core (2 threads each)
    return Machine(packages=2, cores_per_node=4, threads=2).write(tmp_path)


def _walk(backend, root, *args):
    fsread = backend("fsread")
    fd = fsread.open_root(str(root))
    try:
        return fsread.group_walk(fd, *args)
    finally:
        fsread.close_root(fd)


def test_one_entry_per_group_lowest_cpu_first(backend, root):
    everyone = (1 << 16) - 1
    entries, complete = _walk(backend, root, CPU, "/cache/index2/", L2, 2, everyone, everyone)
    assert complete
    assert [cpu for cpu, _texts, _group in entries] == list(range(0, 16, 2))
    assert [group for _cpu, _texts, group in entries] == [0b11 << c for c in range(0, 16, 2)]
    assert all(texts[0] == "1024K\n" for _cpu, texts, _group in entries)


def test_group_is_limited_to_reported_and_unplaced_cpus(backend, root):
    reported = ((1 << 16) - 1) & ~(1 << 3)  # CPU 3 not reported
    remaining = reported & ~0b11  # CPUs 0-1 already placed
    entries, complete = _walk(backend, root, CPU, "/cache/index2/", L2, 2, reported, remaining)
    assert complete
    assert entries[0][0] == 2 and entries[0][2] == 0b100  # 2's core mate (3) is not reported


def test_missing_mask_stops_the_walk_at_that_leader(backend, root):
    put(root, f"{CPU}4/cache/index2/shared_cpu_map", "zz\n")
    everyone = (1 << 16) - 1
    entries, complete = _walk(backend, root, CPU, "/cache/index2/", L2, 2, everyone, everyone)
    assert not complete
    assert [cpu for cpu, _t, _g in entries] == [0, 2, 4]
    assert entries[-1][2] is None and entries[-1][1][2] == "zz\n"


def test_missing_files_are_none(backend, root):
    entries, complete = _walk(backend, root, CPU, "/cache/index9/", L2, 2, 1, 1)
    assert not complete and entries == [(0, [None, None, None], None)]


def test_bad_arguments(backend, root):
    with pytest.raises(ValueError):
        _walk(backend, root, CPU, "/cache/index2/", L2, 3, 1, 1)
    with pytest.raises(ValueError):
        _walk(backend, root, CPU, "/cache/index2/", L2, 2, -1, 1)
    assert _walk(backend, root, CPU, "/cache/index2/", L2, 2, 1, 0) == ([], True)


def test_twins_agree_on_wide_masks(tmp_path):
    # ids past 64 and 128: several bitmap words, and masks of many 32-bit words
    from pynuma import _impl

    impls = _impl.implementations("fsread")
    if len(impls) < 2:
        pytest.skip("native fsread not built")
    for cpu in range(0, 200, 3):
        put(tmp_path, f"{CPU}{cpu}/topology/package_cpus", cpumask(range(cpu, min(cpu + 9, 200)), words=7) + "\n")
        put(tmp_path, f"{CPU}{cpu}/topology/physical_package_id", f"{cpu}\n")
    reported = sum(1 << c for c in range(0, 200, 3))
    results = []
    for module in impls.values():
        fd = module.open_root(str(tmp_path))
        try:
            results.append(module.group_walk(fd, CPU, "/topology/", ("physical_package_id", "package_cpus"), 1,
                                             reported, reported))
        finally:
            module.close_root(fd)
    assert results[0] == results[1]
    entries, complete = results[0]
    assert complete and [cpu for cpu, _t, _g in entries] == list(range(0, 200, 9))


def test_recording_lists_the_files_read(root):
    with FsRoot(str(root), record=True) as fs:
        entries, _ = fs.group_walk(CPU, "/cache/index2/", L2, 2, 0b1111, 0b1111)
        assert fs.files_read == [f"{CPU}{c}/cache/index2/{name}" for c in (0, 2) for name in L2]


def test_unusual_cache_instance_gives_the_general_walks_result(root):
    # a later instance with a size that does not parse: the fast walk gives way to the general one
    put(root, f"{CPU}6/cache/index2/size", "lots\n")
    topo = discover(root)
    (warning,) = [w for w in topo.warnings if "index2" in w]  # one instance broken: one warning
    assert "cpu6/cache/index2" in warning and "lots" in warning
    l2 = sorted(c.cpus.min() for c in topo.caches if c.level == 2)
    assert 6 not in l2 and 7 in l2 and 0 in l2
