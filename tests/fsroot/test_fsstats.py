"""pynuma.pressure.fsstats: statvfs figures for nodefs / imagefs under a root."""
from __future__ import annotations

import os

from pynuma.fsroot import FsRoot
from pynuma.pressure.fsstats import IMAGE_DIRS, fs_stats, node_fs_stats


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
    (tmp_path / IMAGE_DIRS[1].lstrip("/")).mkdir(parents=True)
    out = node_fs_stats(FsRoot(str(tmp_path)))
    assert out["imagefs"].path == IMAGE_DIRS[1]
    assert set(out) == {"nodefs", "imagefs"}
    assert "containerfs" in node_fs_stats(FsRoot(str(tmp_path)), containerfs="/var/lib/other")


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
