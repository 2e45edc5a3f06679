"""pynuma.pressure.fsstats: statvfs figures for nodefs / imagefs under a root."""
from __future__ import annotations

import os

import pytest

from pynuma.errors import InputError
from pynuma.fsroot import FsRoot
from pynuma.pressure.fsstats import (
    IMAGE_DIRS, FiguresUnknown, default_image_dir, fs_stats, fs_stats_from_summary, host_disk_reason, node_fs_stats,
)


def test_figures_match_statvfs(tmp_path):
    (tmp_path / "var/lib/kubelet").mkdir(parents=True)
    # XFS derives f_files from free space and btrfs f_blocks from chunk allocation: other writers move
    # them, so the figures must match statvfs just before or just after
    before = os.statvfs(tmp_path / "var/lib/kubelet")
    st = fs_stats(FsRoot(str(tmp_path)), "/var/lib/kubelet")
    after = os.statvfs(tmp_path / "var/lib/kubelet")
    assert st.measured_at == "/var/lib/kubelet"
    assert st.capacity_bytes in {ref.f_blocks * ref.f_frsize for ref in (before, after)}
    assert st.inodes in {before.f_files, after.f_files}
    assert 0 <= st.available_bytes <= st.capacity_bytes
    assert 0 <= st.inodes_free <= st.inodes


def test_missing_dir_is_measured_at_nearest_parent(tmp_path):
    (tmp_path / "var").mkdir()
    st = fs_stats(FsRoot(str(tmp_path)), "/var/lib/kubelet")
    assert (st.path, st.measured_at) == ("/var/lib/kubelet", "/var")


def test_imagefs_default_picks_existing_runtime_dir(tmp_path):
    assert default_image_dir(FsRoot(str(tmp_path))) == IMAGE_DIRS[0]
    (tmp_path / IMAGE_DIRS[1].lstrip("/")).mkdir(parents=True)
    assert default_image_dir(FsRoot(str(tmp_path))) == IMAGE_DIRS[1]


def test_a_dump_on_this_hosts_disk_has_no_filesystem_figures(tmp_path):
    """statvfs in a folder of the host's disk would be the host's figures: unknown, and said why."""
    (tmp_path / "var/lib/kubelet").mkdir(parents=True)
    fs = FsRoot(str(tmp_path))
    reason = host_disk_reason(fs, "/var/lib/kubelet")
    assert reason is not None and str(tmp_path / "var/lib/kubelet") in reason and "this host" in reason
    with pytest.raises(FiguresUnknown, match="this host"):
        node_fs_stats(fs)
    assert host_disk_reason(FsRoot("/"), "/var/lib/kubelet") is None  # the live host measures itself


def test_a_filesystem_of_its_own_under_the_root_is_measured():
    """A root that is a mount point (here /dev, a devtmpfs or tmpfs) is measured, as a node's / at /host would be."""
    if not os.path.isdir("/dev") or os.stat("/dev").st_dev == os.stat("/").st_dev:
        pytest.skip("/dev is not a mount of its own here")
    fs = FsRoot("/dev")
    assert host_disk_reason(fs, "/") is None
    before = os.statvfs("/dev")
    st = node_fs_stats(fs, nodefs="/", imagefs="/")["nodefs"]
    assert st.capacity_bytes in {before.f_blocks * before.f_frsize, os.statvfs("/dev").f_blocks * before.f_frsize}


SUMMARY = {"node": {"fs": {"availableBytes": 10, "capacityBytes": 100, "inodesFree": 5, "inodes": 50},
                    "runtime": {"imageFs": {"availableBytes": 20, "capacityBytes": 200}}}}


def test_figures_from_a_kubelet_summary():
    got = fs_stats_from_summary(SUMMARY, "s.json")
    assert (got["nodefs"].available_bytes, got["nodefs"].capacity_bytes, got["nodefs"].inodes) == (10, 100, 50)
    assert (got["imagefs"].capacity_bytes, got["imagefs"].inodes) == (200, None)
    only_node = fs_stats_from_summary(SUMMARY["node"], "s.json")  # the node part alone will do
    assert only_node["imagefs"].capacity_bytes == 200
    no_image = fs_stats_from_summary({"node": {"fs": SUMMARY["node"]["fs"]}}, "s.json")
    assert no_image["imagefs"] is no_image["nodefs"]


@pytest.mark.parametrize("doc, words", [
    ([], "expected a kubelet stats summary"),
    ({"node": {}}, "node.fs: missing"),
    ({"node": {"fs": {"availableBytes": -1, "capacityBytes": 1}}}, "node.fs.availableBytes"),
    ({"node": {"fs": {"availableBytes": 1}}}, "node.fs.capacityBytes"),
    ({"node": {"fs": SUMMARY["node"]["fs"], "runtime": {"imageFs": "x"}}}, "node.runtime.imageFs"),
])
def test_bad_summary_names_file_and_field(doc, words):
    with pytest.raises(InputError) as err:
        fs_stats_from_summary(doc, "s.json")
    assert words in str(err.value) and str(err.value).startswith("s.json: ")


def test_a_dumps_symlink_to_the_host_is_resolved_inside_the_dump(tmp_path):
    import os as _os

    from pynuma.fsroot import FsRoot as _FsRoot

    (tmp_path / "var").mkdir()
    _os.symlink("/", tmp_path / "var" / "hostroot")  # absolute: must mean the dump's /
    fs = _FsRoot(str(tmp_path))
    assert fs.stat("/var/hostroot").st_ino == _os.stat(tmp_path).st_ino
    assert fs.stat("/var/hostroot").st_ino != _os.stat("/").st_ino
    before = _os.statvfs(tmp_path).f_blocks
    got = fs.statvfs("/var/hostroot").f_blocks
    assert got in (before, _os.statvfs(tmp_path).f_blocks)
