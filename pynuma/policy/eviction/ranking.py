"""Who gets evicted first: pod requests, measured usage, and the kubelet's ranking per signal.

Each ranking is the kubelet's comparator chain (see :mod:`.comparators`)
expressed as per-pod sort keys: exceeds-request, priority, usage above
request.  Pods without stats go first in every stats-based step.  The sort
is stable (Go's insertion sort for short lists is too), so the input order
breaks remaining ties.
"""
from __future__ import annotations

from ..._mapping import Mapping

from ...pod import Pod
from .podstats import ContainerStats, FsUsage, PodStats, stats_lookup  # noqa: F401 - re-exported
from .signals import (
    ALLOCATABLE_MEMORY_AVAILABLE, CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE, EPHEMERAL_STORAGE,
    IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE, INODES, MEMORY, MEMORY_AVAILABLE, NODEFS_AVAILABLE,
    NODEFS_INODES_FREE, PID_AVAILABLE,
)

# Which parts of a pod's disk use count (kubelet fsStatsType).
FS_ROOT, FS_LOGS, FS_LOCAL_VOLUME, FS_IMAGES = "root", "logs", "localVolumeSource", "images"


TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from fractions import Fraction
    from typing import Callable, Dict, List, Optional, Sequence

    StatsFunc = Callable[[Pod], Optional[PodStats]]
    RankFunc = Callable[[Sequence[Pod], StatsFunc], List[Pod]]
    KeyFunc = Callable[[Pod], tuple]
else:  # the aliases, spelled out (typing not imported)
    StatsFunc = "Callable[[Pod], Optional[PodStats]]"
    RankFunc = "Callable[[Sequence[Pod], StatsFunc], List[Pod]]"
    KeyFunc = "Callable[[Pod], tuple]"


# -- requests ----------------------------------------------------------------
def pod_request(pod: Pod, resource: str) -> Fraction:
    """The pod's request of ``resource`` as eviction ranks it (:func:`~pynuma.policy.podrequests.request_quantity`:
    pod-level when set, else the sidecar-aware container sum, plus overhead when not zero)."""
    from ..podrequests import request_quantity

    return request_quantity(pod, resource).amount


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


# -- ranking functions per signal ----------------------------------------------
# The chains above, as sort keys computed once per pod (the comparators are
# consistent, so a stable key sort gives the same order in O(n log n) cheap
# tuple comparisons instead of recomputing requests and usage per comparison).


def _stat_key(stats: StatsFunc, value) -> KeyFunc:
    def key(pod: Pod) -> tuple:
        s = stats(pod)
        return (0,) if s is None else (1, value(pod, s))  # no stats: first
    return key


def priority_key(pod: Pod) -> tuple:
    return (pod_priority(pod),)


def exceed_memory_key(stats: StatsFunc) -> KeyFunc:
    return _stat_key(stats, lambda p, s: 0 if (s.memory_working_set or 0) > pod_request(p, MEMORY) else 1)


def memory_key(stats: StatsFunc) -> KeyFunc:
    return _stat_key(stats, lambda p, s: pod_request(p, MEMORY) - (s.memory_working_set or 0))


def process_key(stats: StatsFunc) -> KeyFunc:
    return _stat_key(stats, lambda p, s: -(s.process_count or 0))


def exceed_disk_key(stats: StatsFunc, measured: Sequence[str], resource: str) -> KeyFunc:
    return _stat_key(stats, lambda p, s: 0 if pod_disk_usage(s, p, measured)[resource] > pod_request(p, resource)
                     else 1)


def disk_key(stats: StatsFunc, measured: Sequence[str], resource: str) -> KeyFunc:
    return _stat_key(stats, lambda p, s: pod_request(p, EPHEMERAL_STORAGE) - pod_disk_usage(s, p, measured)[resource])


def order_by_keys(pods: Sequence[Pod], *keys: KeyFunc) -> List[Pod]:
    """Pods sorted (stably) by the concatenated keys."""
    return sorted(pods, key=lambda p: tuple(k(p) for k in keys))


def rank_memory_pressure(pods: Sequence[Pod], stats: StatsFunc) -> List[Pod]:
    """Exceeds memory request, then lower priority, then larger usage above request."""
    return order_by_keys(pods, exceed_memory_key(stats), priority_key, memory_key(stats))


def rank_pid_pressure(pods: Sequence[Pod], stats: StatsFunc) -> List[Pod]:
    """Lower priority, then more processes."""
    return order_by_keys(pods, priority_key, process_key(stats))


def rank_disk_pressure(measured: Sequence[str], resource: str) -> RankFunc:
    """Exceeds request, then lower priority, then larger measured usage above the ephemeral-storage request."""
    def rank(pods: Sequence[Pod], stats: StatsFunc) -> List[Pod]:
        return order_by_keys(pods, exceed_disk_key(stats, measured, resource), priority_key,
                             disk_key(stats, measured, resource))
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
