"""A pod's effective requests and limits as exact amounts, for its cgroup settings.

The sums are :mod:`pynuma.policy.podrequests` (``PodRequests`` /
``PodLimits`` of ``k8s.io/component-helpers/resource``), taken after API
defaulting (a limit with no request is the request), which a manifest given
to pynuma has not been through.  ``pod_level_resources`` is the
PodLevelResources feature gate.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Dict, Mapping, Optional

from ...pod import Pod
from ...quantity import Quantity
from .. import podrequests

Amounts = Dict[str, Fraction]


def uses_pod_level(pod: Pod, pod_level_resources: bool, section: Optional[Mapping[str, Quantity]]) -> bool:
    """Whether a pod-level section counts: the gate is on and it names a supported resource."""
    return pod_level_resources and any(podrequests.is_supported_pod_level_resource(n) for n in (section or {}))


def _options(pod_level_resources: bool, exclude_overhead: bool) -> "podrequests.RequestOptions":
    return podrequests.RequestOptions(exclude_overhead=exclude_overhead,
                                      skip_pod_level_resources=not pod_level_resources)


def pod_requests(pod: Pod, pod_level_resources: bool = True, exclude_overhead: bool = False) -> Amounts:
    """Per-resource requests of the whole pod (exact amounts; a resource nobody names is absent)."""
    found = podrequests.pod_requests(pod.defaulted(), _options(pod_level_resources, exclude_overhead))
    return {name: q.amount for name, q in found.items()}


def pod_limits(pod: Pod, pod_level_resources: bool = True, exclude_overhead: bool = False) -> Amounts:
    """Per-resource limits of the whole pod; overhead only raises limits that exist and are non-zero."""
    found = podrequests.pod_limits(pod, _options(pod_level_resources, exclude_overhead))
    return {name: q.amount for name, q in found.items()}


def limits_declared(pod: Pod, resource: str) -> bool:
    """Whether every container's limits, as ``PodLimits`` hands them to its ``ContainerFn``, hold a
    non-zero ``resource``: an app container's own; a sidecar's together with the sidecars before it;
    a regular init container's own plus those sidecars' (it runs beside them)."""
    if any(_amount(c.limits, resource) == 0 for c in pod.containers):
        return False
    sidecars = Fraction(0)
    for c in pod.init_containers:
        own = _amount(c.limits, resource)
        if c.is_sidecar:
            sidecars += own
            seen = sidecars
        else:
            seen = own + sidecars
        if seen == 0:
            return False
    return True


def _amount(resources: Mapping[str, Quantity], name: str) -> Fraction:
    q = resources.get(name)
    return Fraction(0) if q is None else Fraction(q.amount)


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
