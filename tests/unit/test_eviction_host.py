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


def test_a_dump_without_cgroups_still_gives_filesystem_signals(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text("MemTotal: 1024 kB\nMemAvailable: 512 kB\n")
    h = read_host(FsRoot(str(tmp_path)))
    assert "memory.available" not in h.observations
    assert any("memory.available" in w for w in h.warnings)
    assert h.observations["nodefs.available"].capacity > 0  # statvfs of the nearest existing dir
    assert h.explain["meminfo"]["MemAvailable"] == 512 * 1024


def test_filesystems_measured_at_the_nearest_existing_dir(tmp_path):
    h = read_host(FsRoot(str(tmp_path)), kubelet_root="/var/lib/kubelet")
    assert h.explain["filesystems"]["nodefs"] == "/" and h.dedicated_image_fs is False
    fsobs = h.observations["nodefs.available"]
    assert 0 <= fsobs.available <= fsobs.capacity


def test_parsers():
    assert parse_meminfo("MemTotal: 2 kB\nHugePages_Total: 3\n") == {"MemTotal": 2048, "HugePages_Total": 3}
    with pytest.raises(ValueError):
        parse_meminfo("MemTotal: lots\n")
    assert parse_loadavg_tasks("0.00 0.01 0.05 1/234 5678") == 234
    with pytest.raises(ValueError):
        parse_loadavg_tasks("garbage")
