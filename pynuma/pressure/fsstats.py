"""Filesystem bytes and inodes for the kubelet's eviction signals (nodefs, imagefs, containerfs).

>>> stats = node_fs_stats(FsRoot("/"))                      # doctest: +SKIP
>>> stats["nodefs"].available_bytes, stats["nodefs"].inodes_free

As cAdvisor reports them from ``statvfs``: available bytes = blocks free to
unprivileged users x fragment size; capacity = total blocks x fragment size;
inodes free = free inodes (``f_ffree``); inodes = total (``f_files``).
nodefs is the filesystem holding the kubelet root dir, imagefs the one of
the runtime's image store; both paths are configurable.  A configured path
that does not exist is measured at its nearest existing parent (the
filesystem it would live on), and :attr:`FsStats.measured_at` says so.
"""
from __future__ import annotations

import os

from .._dataclass import asdict, dataclass
from ..errors import from_oserror
from ..fsroot import FsRoot

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Optional

KUBELET_ROOT = "/var/lib/kubelet"
# Image stores of the common runtimes: the first that exists is imagefs by default.
IMAGE_DIRS = ("/var/lib/containerd", "/var/lib/containers/storage", "/var/lib/docker")


@dataclass(frozen=True)
class FsStats:
    """One filesystem's figures (bytes and inode counts)."""

    path: str
    measured_at: str
    available_bytes: int
    capacity_bytes: int
    inodes_free: int
    inodes: int

    def as_dict(self) -> dict:
        return asdict(self)


def _nearest_existing(fs: FsRoot, path: str) -> str:
    p = "/" + path.strip("/")
    while p != "/" and not fs.exists(p):
        p = p.rsplit("/", 1)[0] or "/"
    return p


def fs_stats(fs: FsRoot, path: str) -> FsStats:
    """``statvfs`` figures of the filesystem holding ``path`` (under ``fs``'s root)."""
    at = _nearest_existing(fs, path)
    try:
        st = fs.statvfs(at)
    except OSError as err:
        raise from_oserror(err, f"statvfs {fs.host_path(at)}") from err
    return FsStats(path=path, measured_at=at, available_bytes=st.f_bavail * st.f_frsize,
                   capacity_bytes=st.f_blocks * st.f_frsize, inodes_free=st.f_ffree, inodes=st.f_files)


def default_image_dir(fs: FsRoot) -> str:
    """The first runtime image store that exists, else containerd's."""
    for d in IMAGE_DIRS:
        if fs.isdir(d):
            return d
    return IMAGE_DIRS[0]


def node_fs_stats(fs: FsRoot, nodefs: str = KUBELET_ROOT, imagefs: Optional[str] = None,
                  containerfs: Optional[str] = None) -> Dict[str, FsStats]:
    """``{"nodefs", "imagefs"[, "containerfs"]: FsStats}``; containerfs only when configured apart."""
    out = {"nodefs": fs_stats(fs, nodefs), "imagefs": fs_stats(fs, imagefs or default_image_dir(fs))}
    if containerfs:
        out["containerfs"] = fs_stats(fs, containerfs)
    return out
