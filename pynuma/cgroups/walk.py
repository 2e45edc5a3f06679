"""Per-pod and per-container usage from the kubelet's cgroups, as the eviction manager sees it.

>>> from pynuma.fsroot import FsRoot
>>> for pod in walk_pods(FsRoot("/")):                      # doctest: +SKIP
...     print(pod.uid, pod.qos, pod.working_set, [c.id for c in pod.containers])

The walk itself runs in the native walker (``pynuma._native_cgwalk``, C with
the GIL released) or its pure twin; this module only turns its flat records
into values.  Memory figures are bytes, cpu usage nanoseconds, ``None`` =
not available (controller off, file missing).  ``UNLIMITED`` = no limit.
"""
from __future__ import annotations

from .. import _impl
from .._dataclass import NamedTuple
from ..errors import PynumaError, Unsupported
from ..fsroot import FsRoot
from .v1 import ROOT_STAT_FALLBACK, controllers as _v1_controllers, file_specs as _v1_file_specs
from .v2 import controllers as _v2_controllers, file_specs as _v2_file_specs
from ._spec import (ANON, CONTAINER, CPU_NS, FILE, HUGETLB0, INACTIVE_FILE, LIMIT, NSLOTS, PIDS_CURRENT,
                    PIDS_MAX, POD, UNLIMITED, USAGE, huge_sizes_from_listing, parse_int, parse_keyed,
                    working_set)
from .detect import CgroupLayout, detect
from ..meminfo import mem_total

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, List, Optional, Tuple

_walker = _impl.select("cgwalk")

HUGEPAGES_DIR = "/sys/kernel/mm/hugepages"
_SLOT_NAMES = {USAGE: "usage", LIMIT: "limit", ANON: "rss/anon", FILE: "file", INACTIVE_FILE: "inactive_file",
               PIDS_CURRENT: "pids.current", PIDS_MAX: "pids.max", CPU_NS: "cpu usage"}


class CgroupStats(NamedTuple):
    """Usage of one cgroup.

    ``memory_working_set`` = usage - inactive_file floored at 0 (cAdvisor's
    figure the eviction manager uses); ``memory_rss`` is v1 ``total_rss`` /
    v2 ``anon``; ``memory_file`` v1 ``total_cache`` / v2 ``file``;
    ``hugetlb`` maps page size (``2MB``) to bytes in use; ``problems`` names
    figures dropped because their file was unreadable or held garbage.
    """

    path: str
    memory_usage: Optional[int]
    memory_working_set: Optional[int]
    memory_limit: Optional[int]
    memory_rss: Optional[int]
    memory_file: Optional[int]
    memory_inactive_file: Optional[int]
    pids_current: Optional[int]
    pids_max: Optional[int]
    cpu_usage_ns: Optional[int]
    hugetlb: Dict[str, int]
    problems: Tuple[str, ...] = ()

    @property
    def memory_limit_known(self) -> bool:
        """Whether the limit is a real one (cAdvisor treats > 2^62 as unlimited)."""
        return self.memory_limit is not None and self.memory_limit <= (1 << 62)

    def as_dict(self) -> dict:
        d = self._asdict()
        d["problems"] = list(self.problems)
        return d


class ContainerCgroupStats(NamedTuple):
    """A container cgroup: runtime (``cri-containerd``, ``crio``, ``docker``, ``""``), id, usage."""

    id: str
    runtime: str
    stats: CgroupStats

    @property
    def working_set(self) -> Optional[int]:
        return self.stats.memory_working_set


class PodCgroupStats(NamedTuple):
    """A pod cgroup: uid, QoS tier (from where its cgroup sits), usage, containers."""

    uid: str
    qos: str
    stats: CgroupStats
    containers: Tuple[ContainerCgroupStats, ...]

    @property
    def working_set(self) -> Optional[int]:
        """Pod memory working set in bytes (what eviction ranks on)."""
        return self.stats.memory_working_set

    @property
    def memory_usage(self) -> Optional[int]:
        return self.stats.memory_usage

    @property
    def pids(self) -> Optional[int]:
        return self.stats.pids_current


def _problems(path: str, bad: int) -> Tuple[str, ...]:
    out = []
    for slot in range(NSLOTS):
        if bad >> slot & 1:
            out.append(_SLOT_NAMES.get(slot, f"hugetlb[{slot - HUGETLB0}]"))
    return tuple(out)


def _stats(path: str, slots, bad: int, huge_sizes) -> CgroupStats:
    usage = slots[USAGE]
    inactive = slots[INACTIVE_FILE]
    huge = {s: slots[HUGETLB0 + i] for i, s in enumerate(huge_sizes) if slots[HUGETLB0 + i] is not None} \
        if huge_sizes else {}
    return CgroupStats(path, usage, working_set(usage, inactive), slots[LIMIT], slots[ANON], slots[FILE], inactive,
                       slots[PIDS_CURRENT], slots[PIDS_MAX], slots[CPU_NS], huge,
                       _problems(path, bad) if bad else ())


def _controllers(layout: CgroupLayout) -> Tuple[str, ...]:
    return _v2_controllers() if layout.version == 2 else _v1_controllers()


def _file_specs(layout: CgroupLayout, sizes: List[str]):
    return _v2_file_specs(sizes) if layout.version == 2 else _v1_file_specs(sizes)


def huge_sizes(fs: FsRoot) -> List[str]:
    """hugetlb page-size names this machine has (``["2MB", "1GB"]``)."""
    return huge_sizes_from_listing(fs.listdir(HUGEPAGES_DIR))


def _bases(layout: CgroupLayout, rel: str) -> List[str]:
    out = []
    for ctrl in _controllers(layout):
        point = layout.hierarchy(ctrl)
        out.append((point.rstrip("/") + rel).lstrip("/") if point else "")
    return out


def _records(fs: FsRoot, layout: CgroupLayout, rel: str, full: bool, hook=None):
    sizes = huge_sizes(fs)
    bases = _bases(layout, rel)
    specs = [tuple(s) for s in _file_specs(layout, sizes)]
    if full:
        # A controller file the walk's top cgroup lacks, no cgroup below it has (v2 enables
        # controllers top-down; v1 hierarchies hold the same files everywhere): skip it once here
        # rather than failing an open in every cgroup.
        specs = [s for s in specs if bases[s[0]] and fs.exists(f"/{bases[s[0]]}/{s[1]}")]
    try:
        recs = _walker.walk(fs.root_fd, bases, layout.driver == "systemd", specs, full, hook)
    except OSError as err:
        where = fs.host_path((layout.primary or "") + rel)
        raise PynumaError(f"{where}: {err.strerror or err}") from err
    return recs, sizes


def walk_pods(fs: FsRoot, layout: Optional[CgroupLayout] = None, hook=None) -> List[PodCgroupStats]:
    """Every pod cgroup under kubepods with its containers' usage (``[]`` when no kubelet runs here).

    ``layout`` defaults to :func:`~pynuma.cgroups.detect.detect`; ``hook`` is for tests
    (called after each directory listing).  Pods and containers that vanish during
    the walk are left out.
    """
    layout = layout or detect(fs)
    if layout.kubepods is None:
        return []
    recs, sizes = _records(fs, layout, layout.kubepods, True, hook)
    return pods_from_records(recs, sizes)


def pods_from_records(recs, sizes) -> List[PodCgroupStats]:
    """Values from a walker's flat records (pods in walk order, each followed by its containers).

    This runs once per cgroup on every eviction cycle, hence the inlined,
    allocation-lean loop (tuple.__new__ skips NamedTuple's argument handling).
    """
    return _build(recs, sizes)


def _build(recs, sizes) -> List[PodCgroupStats]:
    new = tuple.__new__
    stats_cls, cont_cls, pod_cls = CgroupStats, ContainerCgroupStats, PodCgroupStats
    huge_slots = [(s, HUGETLB0 + i) for i, s in enumerate(sizes)]
    pods: List[PodCgroupStats] = []
    pod = None
    conts: list = []
    for kind, qos, uid, runtime, cid, path, sl, bad in recs:
        if kind != CONTAINER and kind != POD:
            continue
        usage = sl[USAGE]
        inactive = sl[INACTIVE_FILE]
        if usage is None:
            ws = None
        elif inactive is None:
            ws = usage
        else:
            ws = usage - inactive if inactive < usage else 0
        huge = {s: sl[i] for s, i in huge_slots if sl[i] is not None} if huge_slots else {}
        st = new(stats_cls, (path, usage, ws, sl[LIMIT], sl[ANON], sl[FILE], inactive, sl[PIDS_CURRENT],
                             sl[PIDS_MAX], sl[CPU_NS], huge, _problems(path, bad) if bad else ()))
        if kind == CONTAINER:
            conts.append(new(cont_cls, (cid, runtime, st)))
        else:
            if pod is not None:
                pods.append(new(pod_cls, (pod[0], pod[1], pod[2], tuple(conts))))
            pod = (uid, qos, st)
            conts = []
    if pod is not None:
        pods.append(new(pod_cls, (pod[0], pod[1], pod[2], tuple(conts))))
    return pods


def kubepods_stats(fs: FsRoot, layout: Optional[CgroupLayout] = None) -> CgroupStats:
    """Usage of the kubepods cgroup (``allocatableMemory.available`` = its limit - working set)."""
    layout = layout or detect(fs)
    if layout.kubepods is None:
        raise Unsupported("no kubepods cgroup on this machine: " + layout.reasons[-1])
    recs, sizes = _records(fs, layout, layout.kubepods, False)
    kind, _q, _u, _r, _c, _p, slots, bad = recs[0]
    return _stats(layout.kubepods, slots, bad, sizes)


def node_root_stats(fs: FsRoot, layout: Optional[CgroupLayout] = None) -> CgroupStats:
    """Usage of the root cgroup, as cAdvisor reports the node (``memory.available`` input).

    v1: ``memory.usage_in_bytes`` and ``total_inactive_file`` of the memory hierarchy root.
    v2: the root has no ``memory.current``: usage = ``anon + file`` of the root ``memory.stat``.
    The limit is the machine's memory capacity (``MemTotal`` of ``/proc/meminfo``).
    """
    layout = layout or detect(fs)
    point = layout.primary
    if point is None:
        raise Unsupported("no memory cgroup hierarchy mounted")
    recs, sizes = _records(fs, layout, "", False)
    _k, _q, _u, _r, _c, _p, slots, bad = recs[0]
    slots = list(slots)
    stat = fs.read_optional(point.rstrip("/") + "/memory.stat") or ""
    if layout.version != 2 and slots[INACTIVE_FILE] is None:
        try:
            for s, v in parse_keyed(stat, ROOT_STAT_FALLBACK).items():
                if slots[s] is None:
                    slots[s] = v
        except ValueError:
            pass
    if layout.version == 2 and slots[USAGE] is None and slots[ANON] is not None and slots[FILE] is not None:
        slots[USAGE] = slots[ANON] + slots[FILE]
    total = mem_total(fs)
    if total is not None:
        slots[LIMIT] = total
    return _stats("/", tuple(slots), bad, sizes)


__all__ = ["CgroupStats", "ContainerCgroupStats", "PodCgroupStats", "walk_pods", "kubepods_stats",
           "node_root_stats", "huge_sizes", "UNLIMITED", "parse_int"]
