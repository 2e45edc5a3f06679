"""In-place pod resize: one pass of the kubelet deciding a pending resize (accept, defer, or infeasible).

Pure: the node's allocatable, the other pods at their current allocation,
the pod as allocated and as desired, and the resize conditions already on
the pod go in; the allocation and conditions after the pass come out
(kubelet ``allocation_manager`` ``RetryPendingResizes`` semantics).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Tuple

from ..pod import Pod, PodCondition
from .fit import FitOptions, kubelet_admit
from .node import NodeState, allocatable_units
from ..policy.podrequests import CPU, MEMORY, request_quantity

PENDING = "PodResizePending"
IN_PROGRESS = "PodResizeInProgress"
INFEASIBLE = "Infeasible"
DEFERRED = "Deferred"


@dataclass(frozen=True)
class ResizeOutcome:
    """The allocation after the pass (``allocated``), the pod's resize conditions and whether it changed."""

    allocated: Pod
    conditions: Tuple[PodCondition, ...]
    changed: bool
    decision: str  # "unchanged", "accepted", "deferred" or "infeasible"


def _same(a: Optional[Mapping], b: Optional[Mapping]) -> bool:
    a, b = dict(a or {}), dict(b or {})
    return a.keys() == b.keys() and all(a[k] == b[k] for k in a)


def same_allocation(a: Pod, b: Pod, pod_level: bool) -> bool:
    """Whether two pods ask for the same resources, container by container (and at pod level)."""
    if len(a.all_containers()) != len(b.all_containers()):
        return False
    pairs = zip(a.all_containers(), b.all_containers())
    if not all(x.name == y.name and _same(x.requests, y.requests) and _same(x.limits, y.limits) for x, y in pairs):
        return False
    return not pod_level or (_same(a.pod_requests, b.pod_requests) and _same(a.pod_limits, b.pod_limits))


def resource_request(pod: Pod, name: str, pod_level_resources: bool = True) -> int:
    """``GetResourceRequest``: one resource's request (:func:`~pynuma.policy.podrequests.request_quantity`)
    in millicores for cpu, else in units."""
    total = request_quantity(pod, name, pod_level_resources)
    return total.milli_value() if name == CPU else total.value()


def _infeasible(desired: Pod, allocatable: Mapping[str, int], pod_level: bool) -> Optional[str]:
    """``canResizePod``: the desired pod against node allocatable, memory named before cpu."""
    for name in (MEMORY, CPU):
        want, have = resource_request(desired, name, pod_level), allocatable.get(name, 0)
        if want > have:
            return f"Node didn't have enough capacity: {name}, requested: {want}, capacity: {have}"
    return None


def retry_pending_resize(node_allocatable: Mapping, others: Iterable[Pod], allocated: Pod, desired: Pod,
                         conditions: Iterable[PodCondition] = (), pod_level_resize: bool = False,
                         options: FitOptions = FitOptions(), *, node_name: str = "",
                         node_labels: Optional[Mapping[str, str]] = None,
                         node_taints: Iterable[Mapping] = ()) -> ResizeOutcome:
    """Decide one pending resize of ``allocated`` towards ``desired`` against the other pods.

    Infeasible: the desired requests exceed node allocatable (memory checked
    first).  Deferred: the kubelet's admission refuses the desired pod next
    to the others (missing extended resources removed, then the resources,
    NodeAffinity, NodeName, NodePorts and NoExecute taints, as the predicate
    admit handler runs them; ``node_name``/``node_labels``/``node_taints``
    describe the node, ``""`` = name not known).
    """
    before = tuple(conditions)
    in_progress = [c for c in before if c.type == IN_PROGRESS]
    if same_allocation(allocated, desired, pod_level_resize):
        after = tuple(c for c in before if c.type != PENDING)
        return ResizeOutcome(allocated, after, after != before, "unchanged")
    alloc_units = allocatable_units(node_allocatable)
    message = _infeasible(desired, alloc_units, options.pod_level_resources)
    decision = INFEASIBLE
    if message is None:
        node = NodeState.build(node_allocatable, others, name=node_name, labels=node_labels, taints=node_taints,
                               pod_level_resources=options.pod_level_resources)
        admitted = kubelet_admit(desired, node, options)
        if not admitted.fits:
            decision, message = DEFERRED, admitted.message
    if message is not None:
        pending = PodCondition(PENDING, "True", decision, message)
        after = (pending,) + tuple(in_progress)
        return ResizeOutcome(allocated, after, after != before, decision.lower())
    after = (PodCondition(IN_PROGRESS, "True", "", ""),)
    return ResizeOutcome(desired, after, True, "accepted")


__all__ = ["ResizeOutcome", "resource_request", "retry_pending_resize", "same_allocation"]
