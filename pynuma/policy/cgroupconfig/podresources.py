"""A pod's effective requests and limits, as the kubelet sums them for its cgroups.

Rules of ``k8s.io/component-helpers/resource`` ``PodRequests`` / ``PodLimits``
(without the in-place-resize status views): app containers and sidecars
run together; regular init containers run one at a time beside the
sidecars started before them; the pod needs the larger of the two phases.
Pod-level ``spec.resources`` (PodLevelResources) replace the aggregate per
resource, then ``spec.overhead`` is added (to limits only where a non-zero
limit exists).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable, Dict, Iterable, Mapping, Optional

from ...pod import Container, Pod
from ...quantity import Quantity

Amounts = Dict[str, Fraction]
SUPPORTED_POD_LEVEL = ("cpu", "memory")
_HUGEPAGES = "hugepages-"


def is_supported_pod_level_resource(name: str) -> bool:
    """Resources ``spec.resources`` may hold: cpu, memory and every ``hugepages-<size>``."""
    return name in SUPPORTED_POD_LEVEL or name.startswith(_HUGEPAGES)


def _defaulted(requests: Mapping[str, Quantity], limits: Mapping[str, Quantity]) -> Dict[str, Quantity]:
    # API defaulting, which a manifest given to pynuma has not been through: a limit with no
    # request (key absent) is the request.
    out = dict(requests)
    for name, q in limits.items():
        out.setdefault(name, q)
    return out


def container_requests(c: Container) -> Dict[str, Quantity]:
    """A container's requests after API defaulting (request = limit where only a limit is given)."""
    return _defaulted(c.requests, c.limits)


def pod_level_requests(pod: Pod) -> Dict[str, Quantity]:
    """``spec.resources.requests`` after the same defaulting from ``spec.resources.limits``."""
    return _defaulted(pod.pod_requests or {}, pod.pod_limits or {})


def _add(into: Amounts, res: Mapping[str, Quantity]) -> None:
    for name, q in res.items():
        into[name] = into.get(name, Fraction(0)) + q.amount


def _max_into(into: Amounts, res: Mapping[str, Fraction]) -> None:
    for name, v in res.items():
        if name not in into or v > into[name]:
            into[name] = v


def aggregate(pod: Pod, view: Callable[[Container], Mapping[str, Quantity]]) -> Amounts:
    """max(app containers + every sidecar, the peak of each init container beside earlier sidecars)."""
    running: Amounts = {}
    for c in pod.containers:
        _add(running, view(c))
    init_peak: Amounts = {}
    sidecars: Amounts = {}
    for c in pod.init_containers:
        res = view(c)
        if c.is_sidecar:
            _add(running, res)
            _add(sidecars, res)
            _max_into(init_peak, sidecars)
        else:
            candidate = dict(sidecars)
            _add(candidate, res)
            _max_into(init_peak, candidate)
    out = dict(running)
    _max_into(out, init_peak)
    return out


def uses_pod_level(pod: Pod, pod_level_resources: bool, section: Optional[Mapping[str, Quantity]]) -> bool:
    """Whether a pod-level section counts: the gate is on and it names a supported resource."""
    return pod_level_resources and any(is_supported_pod_level_resource(n) for n in (section or {}))


def pod_requests(pod: Pod, pod_level_resources: bool = True, exclude_overhead: bool = False) -> Amounts:
    """Per-resource requests of the whole pod (exact amounts; a resource nobody names is absent)."""
    out = aggregate(pod, container_requests)
    level = pod_level_requests(pod)
    if uses_pod_level(pod, pod_level_resources, level):
        for name, q in level.items():
            if is_supported_pod_level_resource(name):
                out[name] = q.amount
    if not exclude_overhead:
        for name, q in (pod.overhead or {}).items():
            out[name] = out.get(name, Fraction(0)) + q.amount
    return out


def pod_limits(pod: Pod, pod_level_resources: bool = True, exclude_overhead: bool = False) -> Amounts:
    """Per-resource limits of the whole pod; overhead only raises limits that exist and are non-zero."""
    out = aggregate(pod, lambda c: c.limits)
    if uses_pod_level(pod, pod_level_resources, pod.pod_limits) or \
            uses_pod_level(pod, pod_level_resources, pod.pod_requests):
        for name, q in (pod.pod_limits or {}).items():
            if is_supported_pod_level_resource(name):
                out[name] = q.amount
    if not exclude_overhead:
        for name, q in (pod.overhead or {}).items():
            if out.get(name):
                out[name] += q.amount
    return out


def limits_declared(containers: Iterable[Container], resource: str) -> bool:
    """Whether every container has a non-zero limit on ``resource``."""
    return all(c.limits.get(resource, Quantity(0)).amount != 0 for c in containers)


def milli(amounts: Mapping[str, Fraction], name: str) -> int:
    """Millicores of ``name`` rounded up (Kubernetes ``MilliValue``), 0 when absent."""
    v = amounts.get(name)
    return 0 if v is None else _ceil(Fraction(v) * 1000)


def value(amounts: Mapping[str, Fraction], name: str) -> int:
    """Whole units of ``name`` rounded up (Kubernetes ``Value``), 0 when absent."""
    v = amounts.get(name)
    return 0 if v is None else _ceil(Fraction(v))


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)
