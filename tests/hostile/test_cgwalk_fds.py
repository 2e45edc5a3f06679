"""The cgroup walk closes exactly the descriptors it opened, on every odd tree (native and pure).

Each case compares ``/proc/self/fd`` (0, 1 and 2 included) before and after,
and the hook that removes cgroups mid-walk also opens descriptors of its own
and checks they survive: a walk closing a stale fd number would close one of
them (fd numbers are reused lowest first).
"""
from __future__ import annotations

import os
import shutil

import pytest

from pynuma.cgroups import walk as cgwalk
from pynuma.cgroups.detect import CGROUPFS, HYBRID, SYSTEMD, V1, V2
from pynuma.cgroups.kubepods import pod_cgroup_name
from pynuma.cgroups.synthetic import build_tree, hierarchies, make_pods
from pynuma.fsroot import FsRoot

from ._fds import open_fds


@pytest.fixture
def walker(backend, monkeypatch):
    mod = backend("cgwalk")
    monkeypatch.setattr(cgwalk, "_walker", mod)
    return mod


def _specs(mode):
    from pynuma.cgroups import v1, v2
    return [tuple(s) for s in (v2 if mode == V2 else v1).file_specs(["2MB"])]


def _bases(mode, kp):
    if mode == V2:
        return [f"sys/fs/cgroup/{kp}"]
    return [f"sys/fs/cgroup/{c}/{kp}" for c in ("memory", "cpuacct", "pids", "hugetlb")]


class _Guard:
    """Descriptors a hook holds while the walk runs; each must still be open, on its file, afterwards."""

    def __init__(self, path):
        self.path = str(path)
        self.held = []

    def grab(self, count=3):
        for _ in range(count):
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            self.held.append((fd, os.fstat(fd).st_ino))

    def check_and_release(self):
        for fd, ino in self.held:
            assert os.fstat(fd).st_ino == ino, f"fd {fd} was closed or replaced by the walk"
        for fd, _ in self.held:
            os.close(fd)
        self.held = []


@pytest.mark.parametrize("missing", ["memory", "cpuacct", "pids", "hugetlb"])
def test_missing_hierarchy_directory_leaves_fds_alone(tmp_path, walker, missing):
    build_tree(str(tmp_path), mode=V1, driver=CGROUPFS, pods=make_pods(4))
    shutil.rmtree(os.path.join(hierarchies(str(tmp_path), V1)[missing], "kubepods"))
    fs = FsRoot(str(tmp_path))
    before = open_fds()
    for _ in range(20):  # a stray close would hit 0, 1, 2 or the root fd sooner or later
        try:
            recs = walker.walk(fs.root_fd, _bases(V1, "kubepods"), False, _specs(V1), True)
        except OSError as err:
            assert missing == "memory"  # the primary hierarchy is required...
            assert "memory" in str(err.filename)  # ...and the error names it
        else:
            assert missing != "memory"
            assert len(recs) > 1
    assert open_fds() == before
    fs.close()


@pytest.mark.parametrize("mode", [V1, HYBRID, V2])
@pytest.mark.parametrize("what", ["pod", "tier", "container", "secondary"])
def test_directories_removed_while_walking(tmp_path, walker, mode, what):
    driver = SYSTEMD
    pods = make_pods(9)
    build_tree(str(tmp_path), mode=mode, driver=driver, pods=pods)
    kp = "kubepods.slice"
    hier = hierarchies(str(tmp_path), mode)
    primary = hier["unified" if mode == V2 else "memory"]
    guard = _Guard(tmp_path / "proc/meminfo")
    removed = []

    def hook(prefix):
        guard.grab()
        if removed:
            return
        here = os.path.join(primary, kp, prefix)
        subs = sorted(n for n in os.listdir(here) if os.path.isdir(os.path.join(here, n)))
        last = prefix.rstrip("/").rsplit("/", 1)[-1]
        if what == "tier" and prefix == "":
            victim = pod_cgroup_name("x", "Burstable", driver).rsplit("/", 1)[0]
        elif what in ("pod", "secondary") and prefix and "-pod" not in last and subs:
            victim = prefix + subs[0]  # a pod of the tier just listed
        elif what == "container" and "-pod" in last and subs:
            victim = prefix + subs[0]
        else:
            return
        dirs = list(hier.values())
        if what == "secondary":
            dirs = [d for d in dirs if d != primary]
        for d in dirs:
            shutil.rmtree(os.path.join(d, kp, victim), ignore_errors=True)
        removed.append(victim)

    fs = FsRoot(str(tmp_path))
    before = open_fds()
    pods_seen = cgwalk.walk_pods(fs, hook=hook)
    guard.check_and_release()
    assert removed, "the hook never removed anything: the case tests nothing"
    assert open_fds() == before
    assert pods_seen  # the rest of the tree was still read
    fs.close()


def test_walk_in_a_loop_does_not_leak(tmp_path, walker):
    build_tree(str(tmp_path), mode=V1, pods=make_pods(5))
    fs = FsRoot(str(tmp_path))
    before = open_fds()
    for _ in range(50):
        cgwalk.walk_pods(fs)
    assert open_fds() == before
    fs.close()
