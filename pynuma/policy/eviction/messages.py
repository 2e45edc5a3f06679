"""The kubelet's wording for evictions and admission refusals (kept for audit, never a silent delete)."""
from __future__ import annotations

from ...pod import Pod
from ...quantity import Quantity
from .met import threshold_met_info
from .observations import Observation, quantity_format
from .podstats import PodStats
from .signals import EPHEMERAL_STORAGE, MEMORY
from .thresholds import Threshold

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Mapping, Optional, Sequence, Tuple

REASON = "Evicted"
OFFENDING_CONTAINERS = "offending_containers"
OFFENDING_CONTAINERS_USAGE = "offending_containers_usage"
OFFENDING_POD = "offending_pod"
OFFENDING_POD_USAGE = "offending_pod_usage"
STARVED_RESOURCE = "starved_resource"


def _bytes(n: int) -> str:
    return str(Quantity(n, "BinarySI"))


def eviction_message(resource: str, pod: Pod, stats: Optional[PodStats], thresholds: Sequence[Threshold],
                     observations: Mapping[str, Observation],
                     pod_level_resources: bool = True) -> Tuple[str, Dict[str, str]]:
    """Message and event annotations for a pod evicted to reclaim ``resource`` (``evictionMessage``)."""
    annotations: Dict[str, str] = {}
    message = f"The node was low on resource: {resource}. "
    info = threshold_met_info(resource, thresholds, observations)
    if info is not None:
        quantity, threshold, obs = info
        fmt = quantity_format(threshold.signal)
        q = threshold.value.quantity if threshold.value.quantity is not None else Quantity(quantity, "BinarySI")
        message += f"Threshold quantity: {q}, available: {Quantity(obs.available, fmt)}. "
    if stats is None:
        return message, annotations
    if (resource == MEMORY and pod_level_resources and pod.pod_requests and MEMORY in pod.pod_requests
            and stats.memory_working_set is not None):
        usage = _bytes(stats.memory_working_set)
        message += (f"Pod {pod.name} was using {usage}, request is {pod.pod_requests[MEMORY]}, "
                    f"has larger consumption of {resource}. ")
        annotations[OFFENDING_POD] = pod.name
        annotations[OFFENDING_POD_USAGE] = usage
    containers = pod.containers + pod.init_containers
    names, usages = [], []
    for cs in stats.containers:
        for c in containers:
            if c.name != cs.name:
                continue
            request = c.requests.get(resource) or Quantity(0)
            usage = None
            if resource == EPHEMERAL_STORAGE:
                if (cs.rootfs is not None and cs.rootfs.used_bytes is not None
                        and cs.logs is not None and cs.logs.used_bytes is not None):
                    usage = cs.rootfs.used_bytes + cs.logs.used_bytes
            elif resource == MEMORY and cs.memory_working_set is not None:
                usage = cs.memory_working_set
            if usage is not None and usage > request.amount:
                message += (f"Container {c.name} was using {_bytes(usage)}, request is {request}, "
                            f"has larger consumption of {resource}. ")
                names.append(c.name)
                usages.append(_bytes(usage))
            break
    annotations[OFFENDING_CONTAINERS] = ",".join(names)
    annotations[OFFENDING_CONTAINERS_USAGE] = ",".join(usages)
    annotations[STARVED_RESOURCE] = resource
    return message, annotations


def evicted_status(message: str, with_condition: bool) -> dict:
    """The status the kubelet writes on the evicted pod."""
    status = {"phase": "Failed", "reason": REASON, "message": message}
    if with_condition:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                 "reason": "TerminationByKubelet", "message": message}]
    return status


def node_condition_message(conditions: Sequence[str]) -> str:
    """Admission refusal text (Go ``%v`` of the condition list)."""
    return f"The node had condition: [{' '.join(conditions)}]. "


def empty_dir_message(volume: str, limit: Quantity) -> str:
    return f'Usage of EmptyDir volume "{volume}" exceeds the limit "{limit}". '


def pod_ephemeral_message(limit: Quantity) -> str:
    return f"Pod ephemeral local storage usage exceeds the total limit of containers {limit}. "


def container_ephemeral_message(container: str, limit: Quantity) -> str:
    return f'Container {container} exceeded its local ephemeral storage limit "{limit}". '
