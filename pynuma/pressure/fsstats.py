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

Under a fake root (``--root DUMP``) a folder of the dump is usually just a
folder on this host's disk: ``statvfs`` there would report this host's
filesystem as the dumped machine's.  :func:`node_fs_stats` measures only a
filesystem that belongs to the root (the root is a mount point, or the path
is on a filesystem mounted inside it, e.g. a node's ``/`` mounted at
``/host``); otherwise the figures are unknown (:class:`FiguresUnknown` says
why) unless they are given, e.g. from a kubelet ``/stats/summary``
(:func:`fs_stats_from_summary`).
"""
from __future__ import annotations

import os

from .._dataclass import asdict, dataclass
from ..errors import InputError, Unsupported, from_oserror
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
    inodes_free: Optional[int]
    inodes: Optional[int]

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


class FiguresUnknown(Unsupported):
    """The filesystem figures cannot be measured here (a dump's folders sit on this host's disk)."""


def host_disk_reason(fs: FsRoot, path: str) -> Optional[str]:
    """Why ``statvfs`` of ``path`` under ``fs`` would measure this host's disk, or ``None`` when it would not.

    The live host measures itself.  Under a fake root the figures are the
    root's own when ``path`` is on another filesystem than the folder the
    root sits in (the root is a mount point, or something is mounted inside
    it); on the same one they are just this host's disk.
    """
    if fs.is_host:
        return None
    at = _nearest_existing(fs, path)
    try:
        inside = fs.stat(at).st_dev
        outside = os.stat(os.path.dirname(fs.root.rstrip("/")) or "/").st_dev
    except OSError:
        return None  # fs_stats reports the unreadable path itself
    if inside != outside:
        return None
    where = fs.root if at == "/" else fs.host_path(at)
    return (f"{where} is a folder on this host's filesystem, not the dumped machine's: "
            f"its figures would be this host's disk")


def default_image_dir(fs: FsRoot) -> str:
    """The first runtime image store that exists, else containerd's."""
    for d in IMAGE_DIRS:
        if fs.isdir(d):
            return d
    return IMAGE_DIRS[0]


def own_fs_stats(fs: FsRoot, path: str) -> FsStats:
    """:func:`fs_stats` of a filesystem that belongs to the root; :class:`FiguresUnknown` for this host's disk."""
    reason = host_disk_reason(fs, path)
    if reason is not None:
        raise FiguresUnknown(reason)
    return fs_stats(fs, path)


def node_fs_stats(fs: FsRoot, nodefs: str = KUBELET_ROOT, imagefs: Optional[str] = None,
                  containerfs: Optional[str] = None) -> Dict[str, FsStats]:
    """``{"nodefs", "imagefs"[, "containerfs"]: FsStats}``; containerfs only when configured apart.

    :class:`FiguresUnknown` when the root's folders sit on this host's disk.
    """
    out = {"nodefs": own_fs_stats(fs, nodefs), "imagefs": own_fs_stats(fs, imagefs or default_image_dir(fs))}
    if containerfs:
        out["containerfs"] = own_fs_stats(fs, containerfs)
    return out


# kubelet /stats/summary: node.fs is nodefs, node.runtime.imageFs / containerFs the runtime's
_SUMMARY_PLACES = (("nodefs", ("fs",)), ("imagefs", ("runtime", "imageFs")),
                   ("containerfs", ("runtime", "containerFs")))


def fs_stats_from_summary(summary: object, source: str) -> Dict[str, FsStats]:
    """Filesystem figures of a kubelet ``/stats/summary`` document (or its ``node`` part) named ``source``.

    ``nodefs`` is required; ``imagefs`` defaults to nodefs (no dedicated image
    filesystem), ``containerfs`` to imagefs.  ``InputError`` naming the file
    and the field on bad content.
    """
    node = summary.get("node", summary) if isinstance(summary, dict) else None
    if not isinstance(node, dict):
        raise InputError(f"{source}: expected a kubelet stats summary object with node.fs")
    out: Dict[str, FsStats] = {}
    for name, keys in _SUMMARY_PLACES:
        entry, where = node, "node"
        for k in keys:
            entry = entry.get(k) if isinstance(entry, dict) else None
            where += "." + k
        if entry is None:
            continue
        if not isinstance(entry, dict):
            raise InputError(f"{source}: {where}: expected an object")
        values = {}
        for key, required in (("availableBytes", True), ("capacityBytes", True), ("inodesFree", False),
                              ("inodes", False)):
            v = entry.get(key)
            if v is None and not required:
                values[key] = None
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InputError(f"{source}: {where}.{key}: expected a non-negative integer, got {v!r}")
            values[key] = v
        out[name] = FsStats(path=where, measured_at=source, available_bytes=values["availableBytes"],
                            capacity_bytes=values["capacityBytes"], inodes_free=values["inodesFree"],
                            inodes=values["inodes"])
    if "nodefs" not in out:
        raise InputError(f"{source}: node.fs: missing (the nodefs figures)")
    out.setdefault("imagefs", out["nodefs"])
    return out


def load_fs_stats(path: str) -> Dict[str, FsStats]:
    """:func:`fs_stats_from_summary` of a JSON or YAML file."""
    from ..inputfile import load_yaml

    return fs_stats_from_summary(load_yaml(path), path)
