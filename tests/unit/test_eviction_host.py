"""Live signals read from synthetic roots (v1, v2, hybrid): never the real machine's files."""
from __future__ import annotations

import os

import pytest

from pynuma.cgroups.synthetic import MEM_TOTAL, build_tree, make_pods
from pynuma.pressure.host import parse_loadavg_tasks, parse_meminfo, read_host
from pynuma.fsroot import FsRoot


def _kernel(root, pid_max="4194304", threads="1000", loadavg="0.1 0.2 0.3 2/321 999"):
    d = os.path.join(root, "proc/sys/kernel")
    os.makedirs(d, exist_ok=True)
    for name, text in (("pid_max", pid_max), ("threads-max", threads)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text + "\n")
    with open(os.path.join(root, "proc/loadavg"), "w") as f:
        f.write(loadavg + "\n")


@pytest.mark.parametrize("mode", ["v1", "v2", "hybrid"])
def test_memory_available_is_memtotal_minus_root_working_set(tmp_path, mode):
    expected = build_tree(str(tmp_path), mode=mode, pods=make_pods(2), extra_files=False)
    _kernel(str(tmp_path))
    h = read_host(FsRoot(str(tmp_path)), now=5.0, walk=True)
    root = expected["/"]
    usage = root.anon + root.file if mode == "v2" else root.usage
    ws = max(usage - root.inactive_file, 0)
    obs = h.observations["memory.available"]
    assert obs.capacity == MEM_TOTAL and obs.available == MEM_TOTAL - ws and obs.time == 5.0
    assert h.explain["cgroup"]["working_set"] == ws
    assert ("anon + file" in h.explain["cgroup"]["usage_how"]) == (mode == "v2")
    assert h.explain["cgroup"]["anon_plus_file"] == root.anon + root.file
    assert h.observations["pid.available"].available == 1000 - 321  # min(pid_max, threads-max) - tasks
    assert len(h.pods) == 2
    kp = expected[""]
    alloc = h.observations.get("allocatableMemory.available")
    if kp.limit is None:
        assert alloc is None
    else:
        kws = max(kp.usage - kp.inactive_file, 0)
        assert alloc.available == kp.limit - kws


def test_a_dump_has_no_filesystem_signals_of_this_host(tmp_path):
    """A dump's folders sit on this host's disk: nodefs/imagefs are unknown and the reading says why."""
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text("MemTotal: 1024 kB\nMemAvailable: 512 kB\n")
    h = read_host(FsRoot(str(tmp_path)))
    assert "memory.available" not in h.observations
    assert any("memory.available" in w for w in h.warnings)
    assert not any(s.startswith(("nodefs", "imagefs", "containerfs")) for s in h.observations)
    assert "this host" in h.fs_unknown and any(h.fs_unknown in w for w in h.warnings)
    assert h.explain["filesystems"]["unknown"] == h.fs_unknown
    assert h.explain["meminfo"]["MemAvailable"] == 512 * 1024


def _given(node_cap, image_cap):
    from pynuma.pressure.fsstats import fs_stats_from_summary

    node = {"fs": {"availableBytes": 10, "capacityBytes": node_cap, "inodesFree": 1, "inodes": 9}}
    if image_cap is not None:
        node["runtime"] = {"imageFs": {"availableBytes": 5, "capacityBytes": image_cap, "inodesFree": 1, "inodes": 9}}
    return fs_stats_from_summary({"node": node}, "given.json")


@pytest.mark.parametrize("image_cap, dedicated", [(None, False), (100, False), (300, True)])
def test_given_filesystem_figures_stand_in_for_a_dumps(tmp_path, image_cap, dedicated):
    h = read_host(FsRoot(str(tmp_path)), now=3.0, fs_given=_given(100, image_cap))
    assert h.fs_unknown is None
    assert (h.observations["nodefs.available"].available, h.observations["nodefs.available"].capacity) == (10, 100)
    assert h.observations["imagefs.available"].capacity == (image_cap or 100)
    assert h.observations["nodefs.inodesFree"].capacity == 9 and h.dedicated_image_fs is dedicated


def test_parsers():
    assert parse_meminfo("MemTotal: 2 kB\nHugePages_Total: 3\n") == {"MemTotal": 2048, "HugePages_Total": 3}
    with pytest.raises(ValueError):
        parse_meminfo("MemTotal: lots\n")
    assert parse_loadavg_tasks("0.00 0.01 0.05 1/234 5678") == 234
    with pytest.raises(ValueError):
        parse_loadavg_tasks("garbage")
