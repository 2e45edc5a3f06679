"""Allowed CPUs and memory nodes from the process's cpuset cgroup, as the root recorded it (rule 1).

The mount is the first line of ``/proc/mounts`` that is a ``cgroup2`` mount
whose ``cgroup.controllers`` lists ``cpuset``, a ``cpuset`` filesystem, or a
``cgroup`` mount with the ``cpuset`` option (mount points are taken inside
the root).  The cgroup name is ``/proc/self/cpuset``, else the path of the
first ``:cpuset:`` or ``0::`` line of ``/proc/self/cgroup``.  No mount, no
name or no file means no restriction (``None``).  This is hwloc's default.
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs more than discovery's start-up budget
    from typing import List, Optional, Sequence, Tuple

from .. import _impl
from ..errors import ParseError
from ..parse import memoized, parse_cgroup_path, parse_mounts, parse_proc_cgroup

_bitmap = _impl.select("bitmap")

# /proc/mounts is the longest text discovery parses and changes rarely: kept by text
# (callers only iterate the list)
_parse_mounts = memoized(parse_mounts, 8)

_V2 = ("cpuset.cpus.effective", "cpuset.mems.effective")
_V1 = ("cpuset.cpus", "cpuset.mems")
_LEGACY = ("cpus", "mems")


_UNREAD = object()


def find_mount(fs, text=_UNREAD) -> "Optional[Tuple[str, Tuple[str, str]]]":
    """(mount point, (cpus file name, mems file name)) of the cpuset hierarchy, or ``None``.

    ``text`` is ``/proc/mounts`` when the caller already read it.
    """
    if text is _UNREAD:
        text = fs.read_optional("/proc/mounts")
    if text is None:
        return None
    for _dev, point, fstype, options in _parse_mounts(text):
        if fstype == "cgroup2":
            controllers = fs.read_optional(point.rstrip("/") + "/cgroup.controllers")
            if controllers is not None and "cpuset" in controllers.split():
                return point, _V2
        elif fstype == "cpuset":
            return point, _LEGACY
        elif fstype == "cgroup" and "cpuset" in options:
            return point, (_LEGACY if "noprefix" in options else _V1)
    return None


def cgroup_name(fs, cpuset_text=_UNREAD, cgroup_text=_UNREAD) -> "Optional[str]":
    """The process's cpuset cgroup path (``/proc/self/cpuset``, else ``/proc/self/cgroup``)."""
    text = fs.read_optional("/proc/self/cpuset") if cpuset_text is _UNREAD else cpuset_text
    if text is not None:
        try:
            return parse_cgroup_path(text)
        except ValueError:
            pass
    text = fs.read_optional("/proc/self/cgroup") if cgroup_text is _UNREAD else cgroup_text
    if text is None:
        return None
    try:
        lines = parse_proc_cgroup(text)
    except ValueError as err:
        raise ParseError(fs.host_path("/proc/self/cgroup"), str(err)) from None
    for hierarchy, controllers, path in lines:
        if "cpuset" in controllers or (hierarchy == "0" and not controllers):
            return path
    return None


_PROC_FILES = ["/proc/mounts", "/proc/self/cpuset", "/proc/self/cgroup"]
MOUNTS_LIMIT = 1 << 24  # a busy node's mount table (a few per pod) runs past 64 KiB


def allowed(fs, warnings: "List[str]", texts: "Optional[Sequence[Optional[str]]]" = None,
            online: "Optional[int]" = None) -> "Tuple[Optional[int], Optional[int]]":
    """(allowed CPUs bitmap, allowed memory nodes bitmap); ``None`` where unrestricted.

    ``texts``: /proc/mounts, /proc/self/cpuset and /proc/self/cgroup when
    the caller already read them.  ``online``: the online CPUs (bitmap); a
    cpuset naming none of them is not applied, as an empty one is not.
    """
    mounts, cpuset, cgroup = fs.read_many(_PROC_FILES, MOUNTS_LIMIT) if texts is None else texts
    mount = find_mount(fs, mounts)
    if mount is None:
        return None, None
    name = cgroup_name(fs, cpuset, cgroup)
    if name is None:
        return None, None
    point, files = mount
    directory = point.rstrip("/") + "/" + name.strip("/")
    directory = directory.rstrip("/") or "/"
    paths = [directory.rstrip("/") + "/" + f for f in files]
    result = []
    for path, text in zip(paths, fs.read_many(paths)):
        if text is None:
            result.append(None)
            continue
        if not text.strip(" \t\r\n\x00"):
            # an empty cpuset would leave nothing to report; the kernel never shows one to a running task
            warnings.append(f"{fs.host_path(path)}: empty; not applied")
            result.append(None)
            continue
        try:
            bits = _bitmap.parse_cpulist(text)
        except ValueError as err:
            raise ParseError(fs.host_path(path), str(err)) from None
        if online and not result and not bits & online:
            # CPUs only: a task always runs on some online CPU of its cpuset
            warnings.append(f"{fs.host_path(path)}: names none of the online CPUs; not applied")
            bits = None
        result.append(bits)
    return result[0], result[1]
