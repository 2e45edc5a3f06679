"""The QoS-level cgroups: ``kubepods`` (Guaranteed pods), ``burstable`` and ``besteffort``.

>>> from pynuma.pod import Pod
>>> pods = [Pod.from_dict({"name": "b", "containers": [{"name": "c", "requests": {"cpu": "1"}}]})]
>>> qos_cgroup_config(pods).burstable.cpu_shares
1024

Rules of the kubelet's QoS container manager
(``pkg/kubelet/cm/qos_container_manager_linux.go``): besteffort always gets
2 shares, burstable the shares of its pods' summed CPU requests, the root
none; every tier's hugetlb limits are unbounded; with MemoryQoS the root
and burstable get ``memory.min`` / ``memory.low`` from the memory
requests below them; ``--qos-reserved=memory=P%`` caps burstable and
besteffort so that lower classes cannot take what higher ones requested.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Sequence, Tuple

from ...pod import Pod
from ..qos import BEST_EFFORT, BURSTABLE, GUARANTEED, qos_class
from .config import ResourceConfig
from .conversions import MIN_SHARES, milli_cpu_to_shares
from .pod import MEMORY_LOW, MEMORY_MIN, POLICY_NONE, POLICY_TIERED
from .podresources import milli, pod_requests, value

# what the kubelet writes to keep a QoS tier's hugetlb effectively unbounded
UNBOUNDED_HUGETLB = 1 << 62


@dataclass(frozen=True)
class QoSCgroupConfig:
    """Settings of the three QoS-level cgroups; ``guaranteed`` is the ``kubepods`` root itself."""

    guaranteed: ResourceConfig
    burstable: ResourceConfig
    besteffort: ResourceConfig

    def by_class(self) -> Dict[str, ResourceConfig]:
        return {GUARANTEED: self.guaranteed, BURSTABLE: self.burstable, BEST_EFFORT: self.besteffort}

    def to_dict(self) -> dict:
        return {"guaranteed": self.guaranteed.to_dict(), "burstable": self.burstable.to_dict(),
                "besteffort": self.besteffort.to_dict()}


def _key(pod: Pod) -> Tuple[str, str, str]:
    return (pod.namespace, pod.name, pod.uid)


def memory_requests_by_class(pods: Iterable[Pod], pod_level_resources: bool = True) -> Dict[str, int]:
    """Σ memory requests (bytes) of the Guaranteed and of the Burstable pods."""
    out = {GUARANTEED: 0, BURSTABLE: 0}
    for pod in pods:
        qos = qos_class(pod, pod_level_resources)
        if qos in out:
            out[qos] += value(pod_requests(pod, pod_level_resources), "memory")
    return out


def burstable_cpu_shares(pods: Iterable[Pod], pod_level_resources: bool = True) -> int:
    """Shares of the burstable tier: its pods' CPU requests summed, as shares (2 with none)."""
    total = sum(milli(pod_requests(p, pod_level_resources), "cpu") for p in pods
                if qos_class(p, pod_level_resources) == BURSTABLE)
    return milli_cpu_to_shares(total)


def memory_protection(pods: Sequence[Pod], pods_under_root: Optional[Sequence[Pod]],
                      policy: Optional[str], pod_level_resources: bool = True) -> Dict[str, Dict[str, str]]:
    """Unified memory settings per class (MemoryQoS on cgroup v2): ``{class: {file: value}}``.

    ``TieredReservation``: root ``memory.min`` = Guaranteed + Burstable
    requests below the root, root ``memory.low`` = Burstable requests below
    the root, burstable ``memory.low`` = this manager's Burstable requests;
    written even when 0 so stale values clear.  ``"None"``: root
    ``memory.min`` and burstable ``memory.low`` both 0.  None (older
    kubelets): root ``memory.min`` = Guaranteed + Burstable, burstable
    ``memory.min`` = Burstable, each only when positive.
    """
    own = memory_requests_by_class(pods, pod_level_resources)
    under = own if pods_under_root is None else memory_requests_by_class(pods_under_root, pod_level_resources)
    out: Dict[str, Dict[str, str]] = {GUARANTEED: {}, BURSTABLE: {}, BEST_EFFORT: {}}
    if policy == POLICY_TIERED:
        out[GUARANTEED][MEMORY_MIN] = str(under[GUARANTEED] + under[BURSTABLE])
        out[GUARANTEED][MEMORY_LOW] = str(under[BURSTABLE])
        out[BURSTABLE][MEMORY_LOW] = str(own[BURSTABLE])
    elif policy == POLICY_NONE:
        out[GUARANTEED][MEMORY_MIN] = "0"
        out[BURSTABLE][MEMORY_LOW] = "0"
    else:
        if own[GUARANTEED] + own[BURSTABLE] > 0:
            out[GUARANTEED][MEMORY_MIN] = str(own[GUARANTEED] + own[BURSTABLE])
        if own[BURSTABLE] > 0:
            out[BURSTABLE][MEMORY_MIN] = str(own[BURSTABLE])
    return out


def reserved_memory_limits(pods: Sequence[Pod], pods_under_root: Optional[Sequence[Pod]], allocatable_memory: int,
                           percent: int, pod_level_resources: bool = True) -> Optional[Tuple[int, int]]:
    """``(burstable limit, besteffort limit)`` in bytes under ``--qos-reserved=memory=percent%``.

    Burstable may use what the root may use (``allocatable_memory``) minus
    ``percent`` of the requests of every other non-BestEffort pod below the
    root; besteffort, that minus ``percent`` of the burstable requests.
    None when the allocatable memory is unknown or 0 (the kubelet then sets
    no limits).
    """
    if not allocatable_memory:
        return None
    own_burstable = {_key(p) for p in pods if qos_class(p, pod_level_resources) == BURSTABLE}
    under = pods if pods_under_root is None else pods_under_root
    others = 0
    for pod in under:
        qos = qos_class(pod, pod_level_resources)
        if qos == BEST_EFFORT or (qos == BURSTABLE and _key(pod) in own_burstable):
            continue
        others += value(pod_requests(pod, pod_level_resources), "memory")
    burstable_requests = memory_requests_by_class(pods, pod_level_resources)[BURSTABLE]
    burstable = allocatable_memory - others * percent // 100
    return burstable, burstable - burstable_requests * percent // 100


def qos_cgroup_config(pods: Sequence[Pod], *, pods_under_root: Optional[Sequence[Pod]] = None,
                      allocatable_memory: Optional[int] = None, qos_reserved_memory: Optional[int] = None,
                      memory_qos: bool = False, memory_reservation_policy: Optional[str] = POLICY_NONE,
                      huge_page_sizes: Iterable[int] = (), pod_level_resources: bool = True) -> QoSCgroupConfig:
    """One full QoS update (``UpdateCgroups``).

    ``pods``: the active pods of this QoS manager; ``pods_under_root``:
    every pod below its root when that differs (a system partition nested
    under ``kubepods``), else None; ``allocatable_memory``: bytes the root
    may use; ``qos_reserved_memory``: the P of ``--qos-reserved=memory=P%``
    (None = not set); ``memory_qos``: MemoryQoS on a cgroup v2 host;
    ``huge_page_sizes``: the host's page sizes in bytes.
    """
    unbounded = {size: UNBOUNDED_HUGETLB for size in huge_page_sizes}
    guaranteed = ResourceConfig(hugepage_limits=dict(unbounded))
    burstable = ResourceConfig(cpu_shares=burstable_cpu_shares(pods, pod_level_resources),
                               hugepage_limits=dict(unbounded))
    besteffort = ResourceConfig(cpu_shares=MIN_SHARES, hugepage_limits=dict(unbounded))
    if memory_qos:
        prot = memory_protection(pods, pods_under_root, memory_reservation_policy, pod_level_resources)
        if prot[GUARANTEED]:
            guaranteed = guaranteed.with_unified(prot[GUARANTEED])
        if prot[BURSTABLE]:
            burstable = burstable.with_unified(prot[BURSTABLE])
    if qos_reserved_memory is not None and allocatable_memory is not None:
        limits = reserved_memory_limits(pods, pods_under_root, allocatable_memory, qos_reserved_memory,
                                        pod_level_resources)
        if limits is not None:
            burstable = burstable.with_changes(memory=limits[0])
            besteffort = besteffort.with_changes(memory=limits[1])
    return QoSCgroupConfig(guaranteed, burstable, besteffort)
