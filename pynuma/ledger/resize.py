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
from .fit import FitOptions, fits_request
from .node import NodeState, allocatable_units
from ..policy.podrequests import CPU, MEMORY, request_units

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


def _infeasible(desired: Pod, allocatable: Mapping[str, int], pod_level: bool) -> Optional[str]:
    req = request_units(desired, pod_level)
    for name in (CPU, MEMORY):
        want, have = req.get(name, 0), allocatable.get(name, 0)
        if want > have:
            return f"Node didn't have enough capacity: {name}, requested: {want}, capacity: {have}"
    return None


def retry_pending_resize(node_allocatable: Mapping, others: Iterable[Pod], allocated: Pod, desired: Pod,
                         conditions: Iterable[PodCondition] = (), pod_level_resize: bool = False,
                         options: FitOptions = FitOptions()) -> ResizeOutcome:
    """Decide one pending resize of ``allocated`` towards ``desired`` against the other pods."""
    before = tuple(conditions)
    in_progress = [c for c in before if c.type == IN_PROGRESS]
    if same_allocation(allocated, desired, pod_level_resize):
        after = tuple(c for c in before if c.type != PENDING)
        return ResizeOutcome(allocated, after, after != before, "unchanged")
    alloc_units = allocatable_units(node_allocatable)
    message = _infeasible(desired, alloc_units, options.pod_level_resources)
    decision = INFEASIBLE
    if message is None:
        node = NodeState.build(node_allocatable, others, pod_level_resources=options.pod_level_resources)
        records = fits_request(request_units(desired, options.pod_level_resources), node, options)
        if records:
            decision, message = DEFERRED, records[0].kubelet_message
    if message is not None:
        pending = PodCondition(PENDING, "True", decision, message)
        after = (pending,) + tuple(in_progress)
        return ResizeOutcome(allocated, after, after != before, decision.lower())
    after = (PodCondition(IN_PROGRESS, "True", "", ""),)
    return ResizeOutcome(desired, after, True, "accepted")


__all__ = ["ResizeOutcome", "retry_pending_resize", "same_allocation"]
