"""Eviction signals of this host (read-only): the live host measures its own filesystems."""
from __future__ import annotations

from pynuma.fsroot import FsRoot
from pynuma.pressure.host import read_host


def test_live_host_filesystems_are_measured():
    h = read_host(FsRoot("/"), kubelet_root="/var/lib/kubelet")
    assert h.fs_unknown is None and "unknown" not in h.explain["filesystems"]
    fsobs = h.observations["nodefs.available"]
    assert 0 <= fsobs.available <= fsobs.capacity
