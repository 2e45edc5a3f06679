"""Which cgroup hierarchy the kubelet uses here: v2 unified, v1, or hybrid.

Detection reads ``/proc/mounts`` through :class:`~pynuma.fsroot.FsRoot` so a
dump of another machine is judged by its own mounts.  Every step taken is
recorded in :attr:`CgroupLayout.reasons` (``pynuma cgroups --json`` prints it)
so a surprising answer can be explained.

* v2 ("unified"): a ``cgroup2`` mount at ``/sys/fs/cgroup`` (runc's
  ``IsCgroup2UnifiedMode``: the statfs magic of ``/sys/fs/cgroup``).
* hybrid: v1 controller hierarchies plus a ``cgroup2`` mount elsewhere
  (usually ``/sys/fs/cgroup/unified``, holding no controllers).  The
  kubelet, like runc, then manages resources through v1.
* v1: controller hierarchies only.
"""
from __future__ import annotations

import sys

from .._dataclass import dataclass, field
from ..errors import ParseError, Unsupported
from ..fsroot import FsRoot

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, List, Optional, Tuple

V1, V2, HYBRID = "v1", "v2", "hybrid"
SYSTEMD, CGROUPFS = "systemd", "cgroupfs"
CGROUP_ROOT = "/sys/fs/cgroup"
MOUNTS = "/proc/mounts"

# v1 controllers the walker reads from (memory first: it is the primary hierarchy).
V1_CONTROLLERS = ("memory", "cpuacct", "cpu", "pids", "hugetlb", "cpuset")


def _debug(msg: str, *args) -> None:
    """Log to ``pynuma.cgroups`` at debug level.

    Only a process that imported ``logging`` can have a handler listening, so importing
    it here for a message nobody could receive is skipped (it costs a command ~20 ms).
    """
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger("pynuma.cgroups").debug(msg, *args)


_CGROUP_TYPES = ("cgroup", "cgroup2")


def parse_mounts(text: str) -> List[Tuple[str, str, List[str]]]:
    """``(mountpoint, fstype, options)`` of every cgroup/cgroup2 mount in ``/proc/mounts`` text.

    The mount table is read by :func:`pynuma.parse.parse_mounts` (which skips
    mount points no kernel writes); a cgroup line without options, which
    would leave the controllers unknown, raises ``ValueError``.
    """
    from ..parse import parse_mounts as mount_table

    for lineno, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if len(parts) == 3 and parts[2] in _CGROUP_TYPES:
            raise ValueError(f"line {lineno}: cgroup mount without options: {line!r}")
    return [(point, fstype, list(options)) for _device, point, fstype, options in mount_table(text)
            if fstype in _CGROUP_TYPES]


@dataclass(frozen=True)
class CgroupLayout:
    """Where the cgroup hierarchies are mounted and which one the kubelet reads.

    ``v1_mounts`` maps controller -> mountpoint (``memory`` ->
    ``/sys/fs/cgroup/memory``); ``unified`` is the cgroup2 mountpoint or None.
    ``driver`` and ``kubepods`` are filled by :func:`detect` when a kubepods
    cgroup exists (``kubepods.slice`` = systemd, ``kubepods`` = cgroupfs).
    """

    mode: str
    v1_mounts: Dict[str, str] = field(default_factory=dict)
    unified: Optional[str] = None
    driver: Optional[str] = None
    kubepods: Optional[str] = None
    reasons: Tuple[str, ...] = ()

    @property
    def version(self) -> int:
        """2 when the kubelet reads cgroup v2 files, else 1 (v1 and hybrid)."""
        return 2 if self.mode == V2 else 1

    def hierarchy(self, controller: str) -> Optional[str]:
        """Mountpoint of ``controller``'s hierarchy (the unified mount on v2), or None."""
        if self.mode == V2:
            return self.unified
        return self.v1_mounts.get(controller)

    @property
    def primary(self) -> Optional[str]:
        """The hierarchy pods and containers are discovered in (memory on v1)."""
        return self.hierarchy("memory")


def layout_from_mounts(mounts: List[Tuple[str, str, List[str]]], source: str = MOUNTS) -> CgroupLayout:
    """The layout implied by parsed mounts (pure); ``source`` names the mount table in errors."""
    reasons: List[str] = []
    v1: Dict[str, str] = {}
    unified = None
    for point, fstype, options in mounts:
        if fstype == "cgroup2":
            if unified is None or point == CGROUP_ROOT:
                unified = point
            reasons.append(f"cgroup2 mounted at {point}")
            continue
        ctrls = [o for o in options if o in V1_CONTROLLERS]
        for c in ctrls:
            v1.setdefault(c, point)
        if ctrls:
            reasons.append(f"cgroup v1 {'+'.join(ctrls)} at {point}")
    if unified == CGROUP_ROOT:
        mode = V2
        reasons.append(f"{CGROUP_ROOT} is cgroup2 itself: unified (v2) mode")
    elif v1 and unified:
        mode = HYBRID
        reasons.append(f"v1 controllers plus cgroup2 at {unified}: hybrid mode, the kubelet uses v1")
    elif v1:
        mode = V1
        reasons.append("only v1 controller hierarchies: legacy (v1) mode")
    elif unified:
        mode = V2
        reasons.append(f"only cgroup2 (at {unified}): unified (v2) mode")
    else:
        raise Unsupported(f"{source}: no cgroup or cgroup2 mount found")
    return CgroupLayout(mode=mode, v1_mounts=v1, unified=unified, reasons=tuple(reasons))


def find_kubepods(fs: FsRoot, layout: CgroupLayout, cgroup_root: str = "/") -> Tuple[Optional[str], Optional[str], str]:
    """``(driver, kubepods path inside the hierarchy, reason)`` for the kubelet's pods cgroup."""
    primary = layout.primary
    if primary is None:
        return None, None, "no memory hierarchy mounted: no pod cgroups to find"
    base = "/" + cgroup_root.strip("/")
    base = "" if base == "/" else base
    for driver, name in ((SYSTEMD, "kubepods.slice"), (CGROUPFS, "kubepods")):
        rel = f"{base}/{name}"
        if fs.isdir(primary + rel):
            return driver, rel, f"{primary}{rel} exists: {driver} cgroup driver"
    return None, None, f"no kubepods.slice or kubepods under {primary}{base or '/'}: no kubelet pods here"


def detect(fs: FsRoot, cgroup_root: str = "/") -> CgroupLayout:
    """Detect the cgroup mode, then the kubelet's driver and pods cgroup, from ``/proc/mounts``.

    ``cgroup_root`` is the kubelet's ``--cgroup-root`` (default ``/``).
    """
    text = fs.read_optional(MOUNTS)
    if text is None:
        raise Unsupported(f"{fs.host_path(MOUNTS)}: cannot read the mount table")
    try:
        mounts = parse_mounts(text)
    except ValueError as err:
        raise ParseError(fs.host_path(MOUNTS), str(err)) from None
    layout = layout_from_mounts(mounts, fs.host_path(MOUNTS))
    driver, kubepods, why = find_kubepods(fs, layout, cgroup_root)
    for reason in layout.reasons + (why,):
        _debug("cgroup detection (%s): %s", fs.root, reason)
    return CgroupLayout(mode=layout.mode, v1_mounts=layout.v1_mounts, unified=layout.unified,
                        driver=driver, kubepods=kubepods, reasons=layout.reasons + (why,))
