"""Per-pod usage as the kubelet's stats summary reports it (what eviction ranks on)."""
from __future__ import annotations

from ..._mapping import Mapping

from ..._dataclass import dataclass, field
from ...quantity import Quantity

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Callable, Dict, List, Optional, Tuple

    from ...pod import Pod


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


def stats_from_cgroups(cgroup_pods, pods) -> "Tuple[List[Pod], Dict[str, PodStats]]":
    """``(pods, stats)`` from walked pod cgroups: every pod's memory and pids, and a spec-less pod for each cgroup
    no given pod owns (ranked by usage alone), after the given ones."""
    from ...pod import Pod

    out = list(pods)
    known = {p.uid for p in out}
    stats: "Dict[str, PodStats]" = {}
    for cg in cgroup_pods:
        stats[cg.uid] = PodStats(cg.working_set, cg.pids,
                                 tuple(ContainerStats(c.id, None, None, c.working_set) for c in cg.containers))
        if cg.uid not in known:
            known.add(cg.uid)
            out.append(Pod(name=f"pod{cg.uid}", uid=cg.uid))
    return out, stats


def stats_lookup(stats: Mapping[str, PodStats]) -> "Callable[[Pod], Optional[PodStats]]":
    """A stats function over a ``uid -> PodStats`` map."""
    return lambda pod: stats.get(pod.uid)
