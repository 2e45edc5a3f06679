"""Who gets evicted first: per-pod usage, pod requests, and the kubelet's comparator chains.

A comparator takes two pods and returns -1 (first one goes first), 0 or 1;
a chain applies them in order, a later one only breaking ties.  Pods
without stats go before pods with stats in every stats-based comparator.
The sort is stable (Go's insertion sort for short lists is too), so the
input order breaks remaining ties.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cmp_to_key
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ...pod import Container, Pod
from ...quantity import Quantity
from .signals import (
    ALLOCATABLE_MEMORY_AVAILABLE, CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE, EPHEMERAL_STORAGE,
    IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE, INODES, MEMORY, MEMORY_AVAILABLE, NODEFS_AVAILABLE,
    NODEFS_INODES_FREE, PID_AVAILABLE,
)

# Which parts of a pod's disk use count (kubelet fsStatsType).
FS_ROOT, FS_LOGS, FS_LOCAL_VOLUME, FS_IMAGES = "root", "logs", "localVolumeSource", "images"


@dataclass(frozen=True)
class FsUsage:
    """Bytes and inodes used (``None`` = not reported)."""

    used_bytes: Optional[int] = None
    inodes_used: Optional[int] = None


@dataclass(frozen=True)
class ContainerStats:
    """One container's usage: writable layer, logs, memory working set."""

    name: str
    rootfs: Optional[FsUsage] = None
    logs: Optional[FsUsage] = None
    memory_working_set: Optional[int] = None


@dataclass(frozen=True)
class PodStats:
    """One pod's usage as the stats summary reports it."""

    memory_working_set: Optional[int] = None
    process_count: Optional[int] = None
    containers: Tuple[ContainerStats, ...] = ()
    volumes: Mapping[str, FsUsage] = field(default_factory=dict)
    ephemeral_storage: Optional[FsUsage] = None

    @classmethod
    def from_usage(cls, pod: Pod, usage: Mapping) -> "PodStats":
        """From the compact ``usage`` map of the conformance vectors and ``--pods`` files.

        Keys: ``memory_working_set``, ``process_count``, ``container_rootfs`` /
        ``container_logs`` (+ ``_inodes``; used by *each* app container),
        ``container_memory_working_set`` (each app container; optional),
        ``per_local_volume`` (+ ``_inodes``; each declared volume), ``pod_ephemeral_storage``.
        """
        def num(key: str) -> Optional[int]:
            v = usage.get(key)
            return None if v is None else Quantity.parse(v).value()

        def fs(b: str, i: str) -> FsUsage:
            return FsUsage(num(b) or 0, num(i) or 0)

        containers = tuple(
            ContainerStats(c.name, fs("container_rootfs", "container_rootfs_inodes"),
                           fs("container_logs", "container_logs_inodes"), num("container_memory_working_set"))
            for c in pod.containers)
        vols = {}
        for v in pod.volumes:
            if isinstance(v, Mapping) and v.get("name"):
                vols[str(v["name"])] = fs("per_local_volume", "per_local_volume_inodes")
        eph = num("pod_ephemeral_storage")
        return cls(num("memory_working_set"), num("process_count"), containers, vols,
                   None if eph is None else FsUsage(eph, None))


StatsFunc = Callable[[Pod], Optional[PodStats]]
Comparator = Callable[[Pod, Pod], int]


def stats_lookup(stats: Mapping[str, PodStats]) -> StatsFunc:
    """A stats function over a ``uid -> PodStats`` map."""
    return lambda pod: stats.get(pod.uid)


# -- requests ----------------------------------------------------------------
def _request(c: Container, resource: str) -> Fraction:
    q = c.request(resource)
    return q.amount if q is not None else Fraction(0)


def pod_request(pod: Pod, resource: str) -> Fraction:
    """The pod's effective request of ``resource`` (sidecar-aware; pod-level cpu/memory when set).

    Sum of app containers and sidecars, raised to the peak of any regular
    init container (plus the sidecars started before it).
    """
    if pod.pod_requests and resource in ("cpu", "memory") and resource in pod.pod_requests:
        return pod.pod_requests[resource].amount
    total = sum((_request(c, resource) for c in pod.containers), Fraction(0))
    sidecars = Fraction(0)
    init_peak = Fraction(0)
    for c in pod.init_containers:
        r = _request(c, resource)
        if c.is_sidecar:
            total += r
            sidecars += r
            r = sidecars
        else:
            r = r + sidecars
        init_peak = max(init_peak, r)
    return max(total, init_peak)


def pod_priority(pod: Pod) -> int:
    return pod.priority if pod.priority is not None else 0


# -- usage -------------------------------------------------------------------
def _local_volume_names(pod: Pod) -> List[str]:
    # hostPath, or a local ephemeral volume: gitRepo, configMap, emptyDir on the default medium.
    out = []
    for v in pod.volumes:
        if not isinstance(v, Mapping):
            continue
        ed = v.get("emptyDir")
        if ("hostPath" in v or "gitRepo" in v or "configMap" in v
                or (isinstance(ed, Mapping) and not ed.get("medium")) or (ed is not None and not isinstance(ed, Mapping))):
            out.append(str(v.get("name")))
    return out


def pod_disk_usage(stats: PodStats, pod: Pod, measured: Sequence[str]) -> Dict[str, int]:
    """``{"ephemeral-storage": bytes, "inodes": count}`` over the measured parts."""
    disk = inodes = 0
    for c in stats.containers:
        parts = ([c.rootfs] if FS_ROOT in measured else []) + ([c.logs] if FS_LOGS in measured else [])
        for p in parts:
            if p is not None:
                disk += p.used_bytes or 0
                inodes += p.inodes_used or 0
    if FS_LOCAL_VOLUME in measured:
        for name in _local_volume_names(pod):
            v = stats.volumes.get(name)
            if v is not None:
                disk += v.used_bytes or 0
                inodes += v.inodes_used or 0
    return {EPHEMERAL_STORAGE: disk, INODES: inodes}


# -- comparators ---------------------------------------------------------------
def _cmp_bool(a: bool, b: bool) -> int:
    """True before False."""
    if a == b:
        return 0
    return -1 if a else 1


def _cmp(a, b) -> int:
    return (a > b) - (a < b)


def priority(p1: Pod, p2: Pod) -> int:
    """Lower priority first."""
    return _cmp(pod_priority(p1), pod_priority(p2))


def _with_stats(stats: StatsFunc, body):
    def cmp(p1: Pod, p2: Pod) -> int:
        s1, s2 = stats(p1), stats(p2)
        if s1 is None or s2 is None:
            return _cmp_bool(s1 is None, s2 is None)
        return body(p1, s1, p2, s2)
    return cmp


def exceed_memory_requests(stats: StatsFunc) -> Comparator:
    """Pods whose working set exceeds their memory request first."""
    def body(p1, s1, p2, s2):
        e1 = (s1.memory_working_set or 0) > pod_request(p1, MEMORY)
        e2 = (s2.memory_working_set or 0) > pod_request(p2, MEMORY)
        return _cmp_bool(e1, e2)
    return _with_stats(stats, body)


def memory(stats: StatsFunc) -> Comparator:
    """Larger (working set - memory request) first."""
    def body(p1, s1, p2, s2):
        u1 = (s1.memory_working_set or 0) - pod_request(p1, MEMORY)
        u2 = (s2.memory_working_set or 0) - pod_request(p2, MEMORY)
        return _cmp(u2, u1)
    return _with_stats(stats, body)


def process(stats: StatsFunc) -> Comparator:
    """More processes first."""
    return _with_stats(stats, lambda p1, s1, p2, s2: _cmp(s2.process_count or 0, s1.process_count or 0))


def exceed_disk_requests(stats: StatsFunc, measured: Sequence[str], resource: str) -> Comparator:
    """Pods whose measured use exceeds their request of ``resource`` first (inodes: request 0)."""
    def body(p1, s1, p2, s2):
        e1 = pod_disk_usage(s1, p1, measured)[resource] > pod_request(p1, resource)
        e2 = pod_disk_usage(s2, p2, measured)[resource] > pod_request(p2, resource)
        return _cmp_bool(e1, e2)
    return _with_stats(stats, body)


def disk(stats: StatsFunc, measured: Sequence[str], resource: str) -> Comparator:
    """Larger (measured use - ephemeral-storage request) first; the request is subtracted even for inodes."""
    def body(p1, s1, p2, s2):
        u1 = pod_disk_usage(s1, p1, measured)[resource] - pod_request(p1, EPHEMERAL_STORAGE)
        u2 = pod_disk_usage(s2, p2, measured)[resource] - pod_request(p2, EPHEMERAL_STORAGE)
        return _cmp(u2, u1)
    return _with_stats(stats, body)


def chain(*comparators: Comparator) -> Comparator:
    """The first non-zero answer of the comparators, in order."""
    def cmp(p1: Pod, p2: Pod) -> int:
        for c in comparators:
            r = c(p1, p2)
            if r:
                return r
        return 0
    return cmp


def order(pods: Sequence[Pod], comparator: Comparator) -> List[Pod]:
    """Pods sorted by ``comparator`` (stable)."""
    return sorted(pods, key=cmp_to_key(comparator))


# -- ranking functions per signal ----------------------------------------------
RankFunc = Callable[[Sequence[Pod], StatsFunc], List[Pod]]


def rank_memory_pressure(pods: Sequence[Pod], stats: StatsFunc) -> List[Pod]:
    return order(pods, chain(exceed_memory_requests(stats), priority, memory(stats)))


def rank_pid_pressure(pods: Sequence[Pod], stats: StatsFunc) -> List[Pod]:
    return order(pods, chain(priority, process(stats)))


def rank_disk_pressure(measured: Sequence[str], resource: str) -> RankFunc:
    def rank(pods: Sequence[Pod], stats: StatsFunc) -> List[Pod]:
        return order(pods, chain(exceed_disk_requests(stats, measured, resource), priority,
                                 disk(stats, measured, resource)))
    rank.measured = tuple(measured)  # type: ignore[attr-defined]
    return rank


def signal_rank_funcs(dedicated_image_fs: bool, container_fs_separate: bool) -> Dict[str, RankFunc]:
    """The ranking function of every signal for a filesystem layout (``buildSignalToRankFunc``)."""
    out: Dict[str, RankFunc] = {
        MEMORY_AVAILABLE: rank_memory_pressure,
        ALLOCATABLE_MEMORY_AVAILABLE: rank_memory_pressure,
        PID_AVAILABLE: rank_pid_pressure,
    }
    if dedicated_image_fs and not container_fs_separate:
        node, image = (FS_LOGS, FS_LOCAL_VOLUME), (FS_ROOT, FS_IMAGES)
        container = image
    elif dedicated_image_fs and container_fs_separate:
        node, image = (FS_LOGS, FS_LOCAL_VOLUME, FS_ROOT), (FS_IMAGES,)
        container = node
    else:
        node = image = container = (FS_IMAGES, FS_ROOT, FS_LOGS, FS_LOCAL_VOLUME)
    for sig_b, sig_i, parts in ((NODEFS_AVAILABLE, NODEFS_INODES_FREE, node),
                                (IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE, image),
                                (CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE, container)):
        out[sig_b] = rank_disk_pressure(parts, EPHEMERAL_STORAGE)
        out[sig_i] = rank_disk_pressure(parts, INODES)
    return out


COMPARATOR_NAMES = ("exceed_memory_requests", "exceed_disk_requests", "priority", "memory", "disk", "process")


def comparator_by_name(name: str, stats: StatsFunc, measured: Sequence[str] = (),
                       resource: str = EPHEMERAL_STORAGE) -> Comparator:
    """A comparator by its conformance id."""
    table = {
        "exceed_memory_requests": lambda: exceed_memory_requests(stats),
        "exceed_disk_requests": lambda: exceed_disk_requests(stats, measured, resource),
        "priority": lambda: priority,
        "memory": lambda: memory(stats),
        "disk": lambda: disk(stats, measured, resource),
        "process": lambda: process(stats),
    }
    if name not in table:
        raise ValueError(f"unknown comparator {name!r}")
    return table[name]()
