"""The pod-level cgroup settings the kubelet writes (``ResourceConfigForPod``).

>>> from pynuma.pod import Pod
>>> pod = Pod.from_dict({"name": "p", "containers": [{"name": "c", "requests": {"cpu": "100m"},
...                                                  "limits": {"cpu": "200m", "memory": "200Mi"}}]})
>>> cfg = resource_config_for_pod(pod)
>>> cfg.cpu_shares, cfg.cpu_quota, cfg.cpu_period, cfg.memory
(102, 20000, 100000, 209715200)

Rules (``pkg/kubelet/cm/helpers_linux.go``): shares from the pod's CPU
request; quota and period only for Guaranteed pods, or Burstable pods whose
every container (init ones too) limits CPU; a memory limit likewise;
BestEffort pods get 2 shares and nothing else; hugetlb limits from the
requests; with MemoryQoS on cgroup v2, ``memory.min`` / ``memory.low``
from the memory request as the reservation policy says.
"""
from __future__ import annotations

from typing import Optional

from ...pod import Pod
from ...quantity import Quantity
from ..qos import BURSTABLE, GUARANTEED, qos_class
from .config import ResourceConfig
from .conversions import MIN_SHARES, QUOTA_PERIOD_US, hugepage_limits, milli_cpu_to_quota, milli_cpu_to_shares
from .podresources import limits_declared, milli, pod_limits, pod_requests, uses_pod_level, value

# ``--memory-reservation-policy`` values; Python None = a kubelet from before the setting existed.
POLICY_NONE = "None"
POLICY_TIERED = "TieredReservation"
MEMORY_RESERVATION_POLICIES = (POLICY_NONE, POLICY_TIERED)

MEMORY_MIN = "memory.min"
MEMORY_LOW = "memory.low"


def _quantities(amounts):
    return {name: Quantity(v) for name, v in amounts.items()}


def memory_protection(qos: str, memory_request: int, policy: Optional[str]) -> Optional[dict]:
    """Unified ``memory.min`` / ``memory.low`` of a pod (or container) cgroup under MemoryQoS, or None."""
    if memory_request <= 0:
        return None
    if policy is None:
        return {MEMORY_MIN: str(memory_request)}
    if policy == POLICY_TIERED:
        if qos == GUARANTEED:
            return {MEMORY_MIN: str(memory_request)}
        if qos == BURSTABLE:
            return {MEMORY_LOW: str(memory_request)}
    return None


def resource_config_for_pod(pod: Pod, *, enforce_cpu_limits: bool = True, cpu_period_us: int = QUOTA_PERIOD_US,
                            enforce_memory_qos: bool = False, memory_reservation_policy: Optional[str] = POLICY_NONE,
                            pod_level_resources: bool = True,
                            custom_cpu_cfs_quota_period: Optional[bool] = None) -> ResourceConfig:
    """The pod cgroup's :class:`ResourceConfig`.

    ``enforce_cpu_limits`` is ``--cpu-cfs-quota``; ``cpu_period_us`` is
    ``--cpu-cfs-quota-period`` in µs; ``enforce_memory_qos`` is MemoryQoS
    on a cgroup v2 host; ``memory_reservation_policy`` is ``"None"``,
    ``"TieredReservation"`` or None (older kubelets: ``memory.min`` for
    every class); ``pod_level_resources`` is the PodLevelResources gate.
    ``custom_cpu_cfs_quota_period=False`` reproduces older kubelets, which
    computed the quota over 100 ms while that alpha gate was off.
    """
    if memory_reservation_policy is not None and memory_reservation_policy not in MEMORY_RESERVATION_POLICIES:
        from ...errors import InputError

        raise InputError(f"memory reservation policy {memory_reservation_policy!r}: expected one of "
                         f"{', '.join(MEMORY_RESERVATION_POLICIES)}")
    requests = pod_requests(pod, pod_level_resources)
    limits = pod_limits(pod, pod_level_resources)
    cpu_declared = limits_declared(pod, "cpu")
    memory_declared = limits_declared(pod, "memory")
    if uses_pod_level(pod, pod_level_resources, pod.pod_requests) or \
            uses_pod_level(pod, pod_level_resources, pod.pod_limits):
        level = pod.pod_limits or {}
        if "cpu" in level and level["cpu"].amount != 0:
            cpu_declared = True
        if "memory" in level and level["memory"].amount != 0:
            memory_declared = True

    shares = milli_cpu_to_shares(milli(requests, "cpu"))
    quota_period = QUOTA_PERIOD_US if custom_cpu_cfs_quota_period is False else cpu_period_us
    quota = milli_cpu_to_quota(milli(limits, "cpu"), quota_period)
    if not enforce_cpu_limits:
        quota = -1
    memory_limit = value(limits, "memory")

    qos = qos_class(pod, pod_level_resources)
    if qos == GUARANTEED:
        cfg = ResourceConfig(cpu_shares=shares, cpu_quota=quota, cpu_period=cpu_period_us, memory=memory_limit)
    elif qos == BURSTABLE:
        cfg = ResourceConfig(cpu_shares=shares,
                             cpu_quota=quota if cpu_declared else None,
                             cpu_period=cpu_period_us if cpu_declared else None,
                             memory=memory_limit if memory_declared else None)
    else:
        cfg = ResourceConfig(cpu_shares=MIN_SHARES)
    cfg = cfg.with_changes(hugepage_limits=hugepage_limits(_quantities(requests)))
    if enforce_memory_qos:
        unified = memory_protection(qos, value(requests, "memory"), memory_reservation_policy)
        if unified:
            cfg = cfg.with_unified(unified)
    return cfg


__all__ = ["resource_config_for_pod", "memory_protection", "POLICY_NONE", "POLICY_TIERED"]
