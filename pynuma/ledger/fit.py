"""Would a pod fit this node, and why not: the scheduler's ``NodeResourcesFit`` and the kubelet's admission.

>>> from pynuma.pod import Pod
>>> node = NodeState.build({"cpu": "4", "memory": "8Gi", "pods": "110", "hugepages-1Gi": "0"})
>>> pod = Pod.from_dict({"name": "db", "containers": [{"name": "c",
...     "requests": {"memory": "1Gi", "hugepages-1Gi": "2Gi"}, "limits": {"memory": "1Gi", "hugepages-1Gi": "2Gi"}}]})
>>> r = fit(pod, node)
>>> r.fits, r.reasons, r.reason
(False, ('Insufficient hugepages-1Gi',), 'OutOfhugepages-1Gi')

Rules and texts follow kubernetes ``pkg/scheduler/framework/plugins/noderesources/fit.go``
(master, v1.35 line: ``Unresolvable`` records, ignored resource groups, DRA
extended resources), ``pkg/scheduler`` ``AdmissionCheck`` and
``pkg/kubelet/lifecycle/predicate.go`` (reasons ``OutOf<resource>``).
:func:`fit` is the node's view: the pod's hugepages are validated first,
then the kubelet's admission runs; ``reasons`` carry the scheduler's wording
of every failure and ``reason``/``message`` the kubelet's first one.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

from ..pod import Container, Pod
from . import predicates as pr
from .node import NodeState
from ..policy.podrequests import CPU, EPHEMERAL, MEMORY, PODS, is_extended_resource, request_units
from .validate import validate_hugepages

UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"
TOO_MANY_PODS = "Too many pods"
SIDECARS_DISABLED = "Pod has a restartable init container and the SidecarContainers feature is disabled"
INVALID = "PodInvalid"
UNEXPECTED = "UnexpectedAdmissionError"
OS_LABEL_MISMATCH = "PodOSSelectorNodeLabelDoesNotMatch"
OS_NOT_SUPPORTED = "PodOSNotSupported"


@dataclass(frozen=True)
class FitOptions:
    """Feature gates and plugin arguments; defaults are a current kubelet / scheduler."""

    pod_level_resources: bool = True
    sidecar_containers: bool = True
    ignored_resources: FrozenSet[str] = frozenset()
    ignored_resource_groups: FrozenSet[str] = frozenset()
    dra_extended_resource: bool = False
    device_class_extended_resources: FrozenSet[str] = frozenset()
    dra_manager_absent: bool = False
    include_all_failures: bool = True
    host_os: str = "linux"


@dataclass(frozen=True)
class Insufficient:
    """One resource the node lacks: amounts in scheduler integers (cpu millicores, bytes, units)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool

    @property
    def kubelet_reason(self) -> str:
        return "OutOf" + self.resource_name

    @property
    def kubelet_message(self) -> str:
        return (f"Node didn't have enough resource: {self.resource_name}, requested: {self.requested}, "
                f"used: {self.used}, capacity: {self.capacity}")

    def to_json(self) -> Dict[str, Any]:
        return {"resource_name": self.resource_name, "reason": self.reason, "requested": self.requested,
                "used": self.used, "capacity": self.capacity, "unresolvable": self.unresolvable}


@dataclass(frozen=True)
class PredicateFailure:
    """A non-resource check that failed: ``name`` (NodeAffinity, ...) and its reason text."""

    name: str
    reason: str

    @property
    def message(self) -> str:
        return f"Predicate {self.name} failed: {self.reason}"

    def to_json(self) -> Dict[str, str]:
        return {"name": self.name, "reason": self.reason}


@dataclass(frozen=True)
class FitResult:
    """Whether the pod fits, and every reason it does not.

    ``reasons``: the scheduler's texts (``Insufficient cpu``, ``Too many pods``,
    a predicate's reason).  ``reason``/``message``: what the kubelet would
    report (``OutOfcpu`` ...), from the first failure.  ``requests``: the pod's
    request in scheduler integers.  ``unchecked``: resources whose node
    allocatable was unknown, so were not checked.
    """

    fits: bool
    status_code: Optional[str] = None
    reasons: Tuple[str, ...] = ()
    insufficient: Tuple[Insufficient, ...] = ()
    predicates: Tuple[PredicateFailure, ...] = ()
    invalid: Tuple[str, ...] = ()
    failed_stage: Optional[str] = None
    reason: Optional[str] = None
    message: Optional[str] = None
    requests: Mapping[str, int] = field(default_factory=dict)
    unchecked: Tuple[str, ...] = ()

    def to_json(self) -> Dict[str, Any]:
        return {"fits": self.fits, "status_code": self.status_code, "reasons": list(self.reasons),
                "insufficient": [i.to_json() for i in self.insufficient],
                "predicates": [p.to_json() for p in self.predicates], "invalid": list(self.invalid),
                "failed_stage": self.failed_stage, "reason": self.reason, "message": self.message,
                "requests": dict(self.requests), "unchecked": list(self.unchecked)}


# -- the resource check ----------------------------------------------------------------------------

def _delegated_to_dra(name: str, node: NodeState, options: FitOptions) -> bool:
    if not options.dra_extended_resource or node.allocatable.get(name, 0) > 0:
        return False
    return options.dra_manager_absent or name in options.device_class_extended_resources


def _ignored(name: str, options: FitOptions) -> bool:
    if not is_extended_resource(name):
        return False
    return name in options.ignored_resources or name.split("/", 1)[0] in options.ignored_resource_groups


def _record(name: str, reason: str, request: int, node: NodeState) -> Insufficient:
    capacity = int(node.allocatable.get(name, 0))
    return Insufficient(name, reason, request, int(node.requested.get(name, 0)), capacity, request > capacity)


def fits_request(request: Mapping[str, int], node: NodeState, options: FitOptions = FitOptions()) -> List[Insufficient]:
    """``fitsRequest``: the pod count, then cpu, memory, ephemeral-storage, then every other resource.

    A resource the pod requests 0 of is never checked, so an over-committed
    node still takes a pod that asks for none of it.
    """
    out: List[Insufficient] = []
    if node.pod_count + 1 > node.allowed_pods:
        out.append(Insufficient(PODS, TOO_MANY_PODS, 1, node.pod_count, node.allowed_pods, False))
    if not any(request.values()):
        return out
    for name in (CPU, MEMORY, EPHEMERAL):
        want = request.get(name, 0)
        if want > 0 and node.knows(name) and want > node.free(name):
            out.append(_record(name, f"Insufficient {name}", want, node))
    for name in sorted(n for n in request if n not in (CPU, MEMORY, EPHEMERAL)):
        want = request[name]
        if want <= 0 or not node.knows(name) or _ignored(name, options) or _delegated_to_dra(name, node, options):
            continue
        if want > node.free(name):
            out.append(_record(name, f"Insufficient {name}", want, node))
    return out


def _unchecked(req: Mapping[str, int], node: NodeState) -> Tuple[str, ...]:
    return tuple(sorted(n for n, v in req.items() if v and not node.knows(n)))


def _status_code(records: List[Insufficient]) -> Optional[str]:
    if not records:
        return None
    return UNRESOLVABLE if any(r.unresolvable for r in records) else UNSCHEDULABLE


def scheduler_fit(pod: Pod, node: NodeState, options: FitOptions = FitOptions()) -> FitResult:
    """The ``NodeResourcesFit`` plugin: PreFilter (sidecar gate) then Filter."""
    req = request_units(pod, options.pod_level_resources)
    if not options.sidecar_containers and any(c.is_sidecar for c in pod.init_containers):
        return FitResult(False, UNRESOLVABLE, (SIDECARS_DISABLED,), failed_stage="prefilter", requests=req)
    if not node.exists:
        return FitResult(False, UNRESOLVABLE, ("node not found",), failed_stage="filter", requests=req)
    records = fits_request(req, node, options)
    return FitResult(not records, _status_code(records), tuple(r.reason for r in records), tuple(records),
                     failed_stage="filter" if records else None, requests=req,
                     unchecked=_unchecked(req, node))


# -- the kubelet's admission -----------------------------------------------------------------------

def remove_missing_extended_resources(pod: Pod, node: NodeState) -> Pod:
    """Drop container requests of extended resources the node does not list (cluster-level resources)."""
    def strip(c: Container) -> Container:
        kept = {n: q for n, q in c.requests.items() if not is_extended_resource(n) or n in node.allocatable}
        return c if len(kept) == len(c.requests) else replace(c, requests=kept)

    return replace(pod, containers=tuple(strip(c) for c in pod.containers),
                   init_containers=tuple(strip(c) for c in pod.init_containers))


PREDICATES: Tuple[Tuple[str, Callable[[Pod, NodeState], Optional[str]]], ...] = (
    (pr.NODE_AFFINITY, pr.node_affinity), (pr.NODE_NAME, pr.node_name), (pr.NODE_PORTS, pr.node_ports))


def admission_check(pod: Pod, node: NodeState, options: FitOptions = FitOptions()):
    """The scheduler's ``AdmissionCheck``: resources (one check), NodeAffinity, NodeName, NodePorts.

    NodeName is skipped when the node's name is not known (``""``, see
    :func:`~pynuma.ledger.predicates.node_name_known`).  Returns ``(insufficient, predicate failures)``; without
    ``include_all_failures`` it stops at the first failing check.
    """
    records = fits_request(request_units(pod, options.pod_level_resources), node, options)
    failures: List[PredicateFailure] = []
    if records and not options.include_all_failures:
        return records, failures
    for name, check in PREDICATES:
        if name == pr.NODE_NAME and not pr.node_name_known(node):
            continue  # no node name given: nothing to compare spec.nodeName with
        reason = check(pod, node)
        if reason is not None:
            failures.append(PredicateFailure(name, reason))
            if not options.include_all_failures:
                break
    return records, failures


def general_predicates(pod: Pod, node: NodeState, options: FitOptions = FitOptions()):
    """The kubelet's ``generalFilter``: the admission check, then NoExecute taints (not for static pods)."""
    records, failures = admission_check(pod, node, options)
    if not pr.is_static_pod(pod):
        reason = pr.taint_toleration(pod, node)
        if reason is not None:
            failures.append(PredicateFailure(pr.TAINT_TOLERATION, reason))
    return records, failures


def _reject(reason: str, message: str, req: Mapping[str, int], **kw) -> FitResult:
    return FitResult(False, UNRESOLVABLE, (message,), reason=reason, message=message, requests=req, **kw)


def kubelet_admit(pod: Pod, node: NodeState, options: FitOptions = FitOptions(),
                  update_plugin_resources: Optional[Callable[[Pod, NodeState], NodeState]] = None) -> FitResult:
    """The kubelet's predicate admit handler: OS checks, plugin resources, general predicates.

    ``update_plugin_resources(pod, node) -> node`` stands for the device
    manager's update of allocatable; an exception from it rejects the pod
    with ``UnexpectedAdmissionError``.
    """
    req = request_units(pod, options.pod_level_resources)
    if pr.reject_by_os_label(pod.labels, options.host_os):
        return _reject(OS_LABEL_MISMATCH, "Failed to admit pod as the `kubernetes.io/os` label doesn't match "
                       "node label", req)
    if pr.reject_by_os_field(pod.os_name, options.host_os):
        return _reject(OS_NOT_SUPPORTED, "Failed to admit pod as the OS field doesn't match node OS", req)
    if update_plugin_resources is not None:
        try:
            node = update_plugin_resources(pod, node)
        except Exception as err:  # the device manager's error becomes the reason, as in the kubelet
            return _reject(UNEXPECTED, f"Update plugin resources failed due to {err}, which is unexpected.", req)
    checked = remove_missing_extended_resources(pod, node)
    records, failures = general_predicates(checked, node, options)
    reasons = tuple(r.reason for r in records) + tuple(f.reason for f in failures)
    unchecked = _unchecked(req, node)
    if not reasons:
        return FitResult(True, requests=req, unchecked=unchecked)
    first = records[0] if records else None
    reason = first.kubelet_reason if first else failures[0].name
    message = first.kubelet_message if first else failures[0].message
    code = UNRESOLVABLE if failures or any(r.unresolvable for r in records) else UNSCHEDULABLE
    return FitResult(False, code, reasons, tuple(records), tuple(failures), failed_stage="filter",
                     reason=reason, message=message, requests=req, unchecked=unchecked)


def fit(pod: Pod, node: NodeState, options: FitOptions = FitOptions()) -> FitResult:
    """Would the node take ``pod``: hugepages validated first, then the kubelet's admission."""
    invalid = validate_hugepages(pod)
    if invalid:
        req = request_units(pod, options.pod_level_resources)
        return FitResult(False, UNRESOLVABLE, tuple(invalid), invalid=tuple(invalid), failed_stage="validation",
                         reason=INVALID, message="; ".join(invalid), requests=req)
    return kubelet_admit(pod, node, options)


__all__ = ["FitOptions", "FitResult", "Insufficient", "PredicateFailure", "NodeState", "fit", "fits_request",
           "scheduler_fit", "admission_check", "general_predicates", "kubelet_admit",
           "remove_missing_extended_resources"]
