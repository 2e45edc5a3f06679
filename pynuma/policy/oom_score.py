"""Container ``oom_score_adj`` as the current kubelet sets it.

>>> from pynuma.pod import Pod
>>> pod = Pod.from_dict({"name": "p", "containers": [{"name": "c", "requests": {"memory": "1G"}}]})
>>> container_oom_score_adj(pod, "c", 8 * 10**9)
875

Rules (kubernetes ``pkg/kubelet/qos/policy.go``, pod-level-resources era,
without the alpha ``KubeletOOMScoreAdjTieBreak`` nudge): node-critical pods
and Guaranteed pods get -997, BestEffort 1000; Burstable containers get
``1000 - 1000 * request / capacity`` (integer division), plus an equal share
of any pod-level memory request the containers leave unclaimed, a sidecar
never scores above the smallest app container, and the result is clamped to
``[3, 999]``.
"""
from __future__ import annotations

from ..errors import InputError
from .._container_sums import aggregate
from ..pod import Container, Pod
from .qos import BEST_EFFORT, GUARANTEED, qos_class

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, List, Optional, Union

KUBELET_OOM_SCORE_ADJ = -999
KUBE_PROXY_OOM_SCORE_ADJ = -999
GUARANTEED_OOM_SCORE_ADJ = -997
BEST_EFFORT_OOM_SCORE_ADJ = 1000

# kubelet pkg/scheduling: priorities at or above this are "system critical".
SYSTEM_CRITICAL_PRIORITY = 2 * 10**9
NODE_CRITICAL_CLASS = "system-node-critical"
_CONFIG_SOURCE = "kubernetes.io/config.source"
_CONFIG_MIRROR = "kubernetes.io/config.mirror"


def is_critical_pod(pod: Pod) -> bool:
    """Static pods, mirror pods and pods with a system-critical priority (kubelet ``IsCriticalPod``)."""
    source = pod.annotations.get(_CONFIG_SOURCE)
    if source is not None and source != "api":
        return True
    if _CONFIG_MIRROR in pod.annotations:
        return True
    return pod.priority is not None and pod.priority >= SYSTEM_CRITICAL_PRIORITY


def is_node_critical_pod(pod: Pod) -> bool:
    """Critical and in the ``system-node-critical`` priority class."""
    return is_critical_pod(pod) and pod.priority_class_name == NODE_CRITICAL_CLASS


def _mem(c: Container) -> int:
    # the request as given: the API server has already defaulted it from the limit (Pod.defaulted)
    q = c.requests.get("memory")
    return q.value() if q is not None else 0


def _div(a: int, b: int) -> int:
    # Go's integer division truncates toward zero; Python's // floors.
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def aggregate_memory_request(pod: Pod) -> int:
    """The pod's effective memory request from its containers (``AggregateContainerRequests``), in bytes.

    max(app containers + sidecars, the peak of each regular init container plus
    the sidecars started before it), summed exactly and rounded up once.
    """
    amount = aggregate(pod, lambda c: c.requests).get("memory", (0, ""))[0]
    return -(-amount.numerator // amount.denominator)  # Value(): rounded up (int or Fraction alike)


def _pod_level_memory_request(pod: Pod, pod_level_resources: bool) -> Optional[int]:
    """The pod-level memory request when pod-level requests count, else None."""
    if not pod_level_resources or not pod.pod_requests:
        return None
    if not any(n in ("cpu", "memory") for n in pod.pod_requests):
        return None
    q = pod.pod_requests.get("memory")
    return q.value() if q is not None else 0


def remaining_memory_per_container(pod: Pod, pod_level_resources: bool = True) -> int:
    """Unclaimed pod-level memory request shared equally among app and init containers (0 when none)."""
    pod_req = _pod_level_memory_request(pod, pod_level_resources)
    if not pod_req:
        return 0
    count = len(pod.containers) + len(pod.init_containers)
    if count == 0:
        return 0
    return _div(pod_req - aggregate_memory_request(pod), count)


def _clamp(adj: int) -> int:
    # Burstable must stay above Guaranteed (-997 + 1000 = 3) and below BestEffort.
    if adj < 1000 + GUARANTEED_OOM_SCORE_ADJ:
        return 1000 + GUARANTEED_OOM_SCORE_ADJ
    if adj == BEST_EFFORT_OOM_SCORE_ADJ:
        return adj - 1
    return adj


def container_oom_score_adj(pod: Pod, container: Union[str, Container], memory_capacity: int, *,
                            pod_level_resources: bool = True, legacy_critical: bool = False) -> int:
    """``oom_score_adj`` the kubelet gives ``container`` (a name or one of ``pod``'s containers).

    ``memory_capacity`` is the node's memory capacity in bytes.
    ``pod_level_resources`` is the kubelet's ``PodLevelResources`` gate.
    ``legacy_critical=True`` reproduces kubelets before v1.24ish that gave every
    critical pod (not only ``system-node-critical`` ones) -997.
    """
    if isinstance(container, str):
        container = pod.container(container)
    _check_capacity(memory_capacity)
    return _PodTerms(pod, pod_level_resources, legacy_critical).adj(container, memory_capacity)


def oom_score_adjs(pod: Pod, memory_capacity: int, *, pod_level_resources: bool = True,
                   legacy_critical: bool = False) -> "List[int]":
    """``oom_score_adj`` of every container of ``pod``, in ``pod.all_containers()`` order (what the
    containers share is worked out once: a pod of many containers costs linear time)."""
    _check_capacity(memory_capacity)
    terms = _PodTerms(pod, pod_level_resources, legacy_critical)
    return [terms.adj(c, memory_capacity) for c in pod.all_containers()]


def pod_oom_score_adjs(pod: Pod, memory_capacity: int, **options) -> "Dict[str, int]":
    """``{container name: oom_score_adj}`` for every init and app container of ``pod``."""
    return dict(zip((c.name for c in pod.all_containers()), oom_score_adjs(pod, memory_capacity, **options)))


def _check_capacity(memory_capacity) -> None:
    if isinstance(memory_capacity, bool) or not isinstance(memory_capacity, int) or memory_capacity <= 0:
        raise InputError(f"memory capacity must be a positive number of bytes, got {memory_capacity!r}")


class _PodTerms:
    """What the scores of one pod's containers share: a fixed score, or the pod's share and sidecar bound."""

    def __init__(self, pod: Pod, pod_level_resources: bool, legacy_critical: bool) -> None:
        self.fixed: "Optional[int]" = None
        critical = is_critical_pod(pod) if legacy_critical else is_node_critical_pod(pod)
        qos = None if critical else qos_class(pod, pod_level_resources)
        if critical or qos == GUARANTEED:
            self.fixed = GUARANTEED_OOM_SCORE_ADJ
        elif qos == BEST_EFFORT:
            self.fixed = BEST_EFFORT_OOM_SCORE_ADJ
        if self.fixed is not None:
            return
        self.share = remaining_memory_per_container(pod, pod_level_resources)
        # A sidecar lives as long as the app containers: never more killable than the smallest one.
        self.smallest = min(_mem(c) for c in pod.containers) + self.share if pod.containers else None
        self.init_ids = {id(c) for c in pod.init_containers}
        self.init_names = {c.name for c in pod.init_containers}

    def adj(self, container: Container, memory_capacity: int) -> int:
        if self.fixed is not None:
            return self.fixed
        adj = 1000 - _div(1000 * (_mem(container) + self.share), memory_capacity)
        is_sidecar = container.is_sidecar and (id(container) in self.init_ids or container.name in self.init_names)
        if is_sidecar and self.smallest is not None:
            adj = min(adj, 1000 - _div(1000 * self.smallest, memory_capacity))
        return _clamp(adj)
