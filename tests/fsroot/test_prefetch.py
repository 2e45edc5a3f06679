"""FsRoot.prefetch_scan: the whole-topology scan on a helper thread, taken by the next scan(None, None)."""
from __future__ import annotations

import threading
import time

import pytest

from pynuma import _impl, fsroot
from pynuma.discover import discover
from pynuma.fsroot import FsRoot
from tests.fixtures.sysfs_builder import Machine, put, remove

native_only = pytest.mark.skipif(not _impl.is_native("fsread"), reason="the prefetch is the native scan's")


@pytest.fixture(scope="module")
def big(tmp_path_factory):  # 32 CPUs: past the prefetch's 16
    return Machine(packages=2, nodes_per_package=2, cores_per_node=4, threads=2, offline=[5],
                   memory_only_nodes=[3]).write(tmp_path_factory.mktemp("big"))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return Machine(packages=1, cores_per_node=2, threads=2).write(tmp_path_factory.mktemp("small"))


@native_only
def test_a_prefetched_scan_gives_the_same_topology(big):
    with FsRoot(str(big)) as fs:
        plain = discover(fs)
    with FsRoot(str(big)) as fs:
        assert fs.prefetch_scan()
        assert not fs.prefetch_scan()  # one at a time
        prefetched = discover(fs)
        assert fs._prefetched is None  # taken
    assert prefetched.to_dict() == plain.to_dict()


@native_only
def test_small_machines_and_the_pure_path_scan_in_place(small, big, monkeypatch):
    with FsRoot(str(small)) as fs:
        assert not fs.prefetch_scan()
    monkeypatch.setattr(fsroot, "_SCAN_IS_NATIVE", False)
    with FsRoot(str(big)) as fs:
        assert not fs.prefetch_scan()


@native_only
def test_a_garbled_possible_list_starts_nothing(tmp_path):
    root = Machine(packages=2, cores_per_node=8, threads=2).write(tmp_path)
    put(root, "/sys/devices/system/cpu/possible", "0-x\n")
    with FsRoot(str(root)) as fs:
        assert not fs.prefetch_scan()


@native_only
@pytest.mark.parametrize("missing, starts", [
    ((), True),                                  # possible: 0-31
    (("possible",), False),                      # present says 0-7
    (("possible", "present"), True),             # online: 0-31
    (("possible", "present", "online"), True),   # an old kernel's tree says nothing: the scan may be big
])
def test_without_a_possible_list_the_next_cpu_list_decides(tmp_path, missing, starts):
    root = Machine(packages=2, cores_per_node=8, threads=2).write(tmp_path)
    put(root, "/sys/devices/system/cpu/present", "0-7\n")  # said by present alone
    for name in missing:
        remove(root, "/sys/devices/system/cpu/" + name)
    with FsRoot(str(root)) as fs:
        assert fs.prefetch_scan() is starts
        discover(fs)  # the answer is taken (or scanned in place) either way


@native_only
def test_the_scans_error_reaches_the_taker(big, monkeypatch):
    def failing(self, reported, mems):
        raise OSError(5, "Input/output error", "/sys/devices/system/cpu/online")

    monkeypatch.setattr(FsRoot, "_scan_now", failing)
    with FsRoot(str(big)) as fs:
        assert fs.prefetch_scan()
        with pytest.raises(OSError, match="Input/output error"):
            fs.scan(None, None)


@native_only
def test_close_waits_for_a_scan_still_reading(big, monkeypatch):
    finished = threading.Event()
    real = FsRoot._scan_now

    def slow(self, reported, mems):
        time.sleep(0.2)
        answer = real(self, reported, mems)  # the fd must still be open here
        finished.set()
        return answer

    monkeypatch.setattr(FsRoot, "_scan_now", slow)
    fs = FsRoot(str(big))
    assert fs.prefetch_scan()
    fs.close()
    assert finished.is_set() and fs.root_fd == -1


@native_only
def test_a_scan_with_its_own_arguments_leaves_the_prefetch_alone(big):
    with FsRoot(str(big)) as fs:
        assert fs.prefetch_scan()
        status, _answer, _pre = fs.scan((1 << 8) - 1, None)
        assert status in ("ok", "irregular")
        assert fs._prefetched is not None
        assert fs.scan(None, None)[0] == "ok"
        assert fs._prefetched is None


def _discovered(root, prefetch: bool):
    """``("ok", to_dict, warnings)`` or ``("error", type, message)`` of a discovery of ``root``."""
    try:
        with FsRoot(str(root)) as fs:
            if prefetch:
                assert fs.prefetch_scan()
            topo = discover(fs)
    except Exception as err:  # the prefetched scan's errors must be the plain one's
        return ("error", type(err).__name__, str(err))
    return ("ok", topo.to_dict(), topo.warnings)


@native_only
@pytest.mark.parametrize("edit", [
    lambda r: put(r, "/sys/devices/system/cpu/cpu7/topology/core_id", "seven\n"),  # the general path warns
    lambda r: put(r, "/sys/devices/system/node/node1/cpulist", "3-1\n"),  # an error naming the file
    lambda r: put(r, "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "?\n"),
    lambda r: (put(r, "/proc/mounts", "cgroup /c cgroup rw,cpuset 0 0\n"), put(r, "/proc/self/cpuset", "/j\n"),
               put(r, "/c/j/cpuset.cpus", "0-9\n"), put(r, "/c/j/cpuset.mems", "0\n")),
], ids=["bad-core-id", "bad-node-cpulist", "bad-hugepage-count", "cpuset-cgroup"])
def test_an_unusual_tree_gives_the_same_answer_prefetched_or_not(tmp_path, edit):
    root = Machine(packages=2, nodes_per_package=2, cores_per_node=4, threads=2).write(tmp_path)
    edit(root)
    assert _discovered(root, True) == _discovered(root, False)
