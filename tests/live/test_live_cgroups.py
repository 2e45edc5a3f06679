"""This machine's real cgroup hierarchy, read-only (a v1 hybrid host in CI; any host works)."""
from __future__ import annotations

import os

import pytest

from pynuma import _impl
from pynuma.cgroups import detect, node_root_stats, walk_pods
from pynuma.cgroups import walk as cgwalk
from pynuma.cgroups.detect import V1_CONTROLLERS
from pynuma.fsroot import FsRoot

pytestmark = pytest.mark.skipif(not os.path.isfile("/proc/mounts"), reason="no /proc/mounts")


def _cgroup_mounts():
    """``[(mountpoint, fstype, options)]`` of this host's cgroup mounts, read independently."""
    out = []
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                out.append((parts[1].replace("\\040", " "), parts[2], parts[3].split(",")))
    return out


def test_detect_live_host():
    # v1, v2 or hybrid, with or without a memory controller: what /proc/mounts says decides
    mounts = _cgroup_mounts()
    if not mounts:
        pytest.skip("no cgroup or cgroup2 mount on this host")
    layout = detect(FsRoot("/"))
    assert layout.reasons
    v2_root = any(t == "cgroup2" and p == "/sys/fs/cgroup" for p, t, _ in mounts)
    memory_v1 = [p for p, t, o in mounts if t == "cgroup" and "memory" in o]
    v1 = [p for p, t, o in mounts if t == "cgroup" and set(o) & set(V1_CONTROLLERS)]  # not name=systemd alone
    if v2_root or not v1:
        assert layout.mode == "v2"
        assert layout.primary in [p for p, t, _ in mounts if t == "cgroup2"]
    else:
        assert layout.mode == ("hybrid" if any(t == "cgroup2" for _, t, _ in mounts) else "v1")
        assert layout.primary == (memory_v1[0] if memory_v1 else None)  # memory may be disabled
    if layout.primary is not None:
        assert os.path.isdir(layout.primary)


def test_root_stats_are_plausible():
    fs = FsRoot("/")
    if not _cgroup_mounts() or detect(fs).primary is None:
        pytest.skip("no memory cgroup hierarchy mounted here")
    st = node_root_stats(fs)
    assert st.memory_limit and st.memory_limit > 0  # MemTotal
    if st.memory_usage is not None:
        assert 0 < st.memory_usage
        assert 0 <= st.memory_working_set <= st.memory_usage


def test_walk_live_is_consistent_across_backends():
    if not _cgroup_mounts():
        pytest.skip("no cgroup or cgroup2 mount on this host")
    fs = FsRoot("/")
    layout = detect(fs)
    pods = walk_pods(fs, layout)  # [] on a host without a kubelet
    assert all(p.uid and p.qos for p in pods)
    if layout.kubepods is None:
        return
    impls = _impl.implementations("cgwalk")
    args = (fs.root_fd, cgwalk._bases(layout, layout.kubepods), layout.driver == "systemd",
            [tuple(s) for s in cgwalk._file_specs(layout, cgwalk.huge_sizes(fs))], False, None)
    got = {k: m.walk(*args)[0][:6] for k, m in impls.items()}
    assert len(set(map(tuple, got.values()))) == 1
