"""A container cgroup's settings: what the kubelet hands the runtime (``LinuxContainerResources``).

>>> from pynuma.pod import Pod
>>> pod = Pod.from_dict({"name": "p", "containers": [{"name": "c", "limits": {"cpu": "500m", "memory": "1Gi"}}]})
>>> cfg = resource_config_for_container(pod, "c")
>>> cfg.cpu_shares, cfg.cpu_quota, cfg.memory
(512, 50000, 1073741824)

Rules of ``pkg/kubelet/kuberuntime/kuberuntime_container_linux.go``: shares
from the CPU request (the limit when only a limit is set); with CFS quota
enforced, a quota from the CPU limit over the configured period (-1 = none);
the memory limit when set; hugetlb limits from the ``hugepages-*`` limits
with every other host page size limited to 0; on cgroup v2
``memory.oom.group=1`` so an OOM kill takes the whole container.  The CPU
and Memory Managers' decisions arrive as ``cpuset_cpus`` / ``cpuset_mems``.
"""
from __future__ import annotations

from typing import Iterable, Optional, Union

from ...cpuset import CPUSet
from ...pod import Container, Pod
from ..qos import qos_class
from .config import ResourceConfig
from .conversions import QUOTA_PERIOD_US, hugepage_limits, milli_cpu_to_quota, milli_cpu_to_shares
from .pod import POLICY_NONE, memory_protection

OOM_GROUP = "memory.oom.group"


def with_unrequested_sizes(limits: dict, huge_page_sizes: Iterable[int]) -> dict:
    """``limits`` plus a 0 limit for every host page size it does not name (the kubelet's rule)."""
    out = dict(limits)
    for size in huge_page_sizes:
        out.setdefault(size, 0)
    return out


def resource_config_for_container(pod: Pod, container: Union[str, Container], *, enforce_cpu_limits: bool = True,
                                  cpu_period_us: int = QUOTA_PERIOD_US, huge_page_sizes: Iterable[int] = (),
                                  cgroup_v2: bool = False, single_process_oom_kill: bool = False,
                                  enforce_memory_qos: bool = False,
                                  memory_reservation_policy: Optional[str] = POLICY_NONE,
                                  cpuset_cpus: Optional[CPUSet] = None, cpuset_mems: Optional[CPUSet] = None,
                                  pod_level_resources: bool = True) -> ResourceConfig:
    """The container cgroup's :class:`ResourceConfig` (see the module docstring for the rules)."""
    if isinstance(container, str):
        container = pod.container(container)
    request = container.requests.get("cpu")
    limit = container.limits.get("cpu")
    shares = milli_cpu_to_shares((limit if request is None and limit is not None else request).milli_value()
                                 if (request or limit) is not None else 0)
    memory = container.limits.get("memory")
    cfg = ResourceConfig(cpu_shares=shares,
                         memory=memory.value() if memory is not None and memory.value() != 0 else None,
                         hugepage_limits=with_unrequested_sizes(hugepage_limits(container.limits), huge_page_sizes))
    if enforce_cpu_limits:
        quota = milli_cpu_to_quota(limit.milli_value(), cpu_period_us) if limit is not None else 0
        cfg = cfg.with_changes(cpu_quota=quota if quota > 0 else -1, cpu_period=cpu_period_us)
    if cpuset_cpus is not None:
        cfg = cfg.with_changes(cpuset_cpus=cpuset_cpus.to_cpulist())
    if cpuset_mems is not None:
        cfg = cfg.with_changes(cpuset_mems=cpuset_mems.to_cpulist())
    if cgroup_v2:
        if not single_process_oom_kill:
            cfg = cfg.with_unified({OOM_GROUP: "1"})
        if enforce_memory_qos:
            req = container.request("memory")
            prot = memory_protection(qos_class(pod, pod_level_resources), req.value() if req is not None else 0,
                                     memory_reservation_policy)
            if prot:
                cfg = cfg.with_unified(prot)
    return cfg
