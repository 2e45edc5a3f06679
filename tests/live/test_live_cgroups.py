"""This machine's real cgroup hierarchy, read-only (a v1 hybrid host in CI; any host works)."""
from __future__ import annotations

import os

import pytest

from pynuma import _impl
from pynuma.cgroups import detect, node_root_stats, walk_pods
from pynuma.cgroups import walk as cgwalk
from pynuma.fsroot import FsRoot

pytestmark = pytest.mark.skipif(not os.path.isfile("/proc/mounts"), reason="no /proc/mounts")


def test_detect_live_host():
    layout = detect(FsRoot("/"))
    assert layout.mode in ("v1", "v2", "hybrid")
    assert layout.primary is not None
    assert os.path.isdir(layout.primary)
    assert layout.reasons


def test_root_stats_are_plausible():
    fs = FsRoot("/")
    st = node_root_stats(fs)
    assert st.memory_limit and st.memory_limit > 0  # MemTotal
    if st.memory_usage is not None:
        assert 0 < st.memory_usage
        assert 0 <= st.memory_working_set <= st.memory_usage


def test_walk_live_is_consistent_across_backends():
    fs = FsRoot("/")
    layout = detect(fs)
    pods = walk_pods(fs, layout)  # [] on a host without a kubelet
    assert all(p.uid and p.qos for p in pods)
    if layout.kubepods is None:
        return
    impls = _impl.implementations("cgwalk")
    args = (fs.root_fd, cgwalk._bases(layout, layout.kubepods), layout.driver == "systemd",
            [tuple(s) for s in cgwalk._version(layout).file_specs(cgwalk.huge_sizes(fs))], False, None)
    got = {k: m.walk(*args)[0][:6] for k, m in impls.items()}
    assert len(set(map(tuple, got.values()))) == 1
