"""What a pod asks of a node, computed as the scheduler and the kubelet compute it.

>>> from pynuma.pod import Pod
>>> pod = Pod.from_dict({"name": "p", "containers": [{"name": "app", "requests": {"cpu": "1"}}],
...                      "initContainers": [{"name": "init", "requests": {"cpu": "5"}},
...                                         {"name": "proxy", "requests": {"cpu": "1"}, "restartPolicy": "Always"}]})
>>> {k: str(v) for k, v in pod_requests(pod).items()}
{'cpu': '5'}

Follows ``k8s.io/component-helpers/resource`` ``PodRequests``/``PodLimits``
(kubernetes master after v1.35): app containers and every sidecar
(restartable init container) run together; a regular init container runs
with the sidecars declared before it; the pod needs the larger of the two.
Pod-level ``spec.resources`` (cpu, memory, hugepages) replace the container
aggregate where set, then the pod overhead is added.  With
``use_status_resources`` (in-place resize) the larger of what the spec asks,
what is allocated and what is actuated counts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Dict, Iterable, Mapping, Optional, Tuple

from .._container_sums import add_into as _add, aggregate, max_into as _max_into
from ..pod import Container, ContainerStatus, Pod, is_supported_pod_level_resource
from ..quantity import DECIMAL_SI, Quantity

Resources = Dict[str, Quantity]
_Amounts = Dict[str, Tuple[Fraction, str]]  # resource -> (exact amount, format of the first quantity seen)

HUGEPAGES_PREFIX = "hugepages-"
RESIZE_PENDING = "PodResizePending"
INFEASIBLE = "Infeasible"


@dataclass(frozen=True)
class RequestOptions:
    """Knobs of ``PodResourcesOptions``; the defaults give what the scheduler uses for a new pod."""

    exclude_overhead: bool = False
    skip_pod_level_resources: bool = False
    use_status_resources: bool = False
    non_missing_container_requests: Mapping[str, Quantity] = field(default_factory=dict)


DEFAULT = RequestOptions()


# -- pod-level resources (KEP-2837) -------------------------------------------------------------

def _names_supported(res: Optional[Mapping[str, Quantity]]) -> bool:
    return any(is_supported_pod_level_resource(n) for n in (res or {}))


def is_pod_level_requests_set(pod: Pod) -> bool:
    return _names_supported(pod.pod_requests)


def is_pod_level_limits_set(pod: Pod) -> bool:
    return _names_supported(pod.pod_limits)


def is_pod_level_resources_set(pod: Pod) -> bool:
    """Whether ``spec.resources`` names a supported resource in its requests or limits."""
    return is_pod_level_requests_set(pod) or is_pod_level_limits_set(pod)


# -- exact sums ------------------------------------------------------------------------------------

def _sum(*parts: Optional[Mapping[str, Quantity]]) -> _Amounts:
    out: _Amounts = {}
    for p in parts:
        _add(out, p)
    return out


def _as_quantities(amounts: _Amounts) -> Resources:
    return {n: Quantity(a, f) for n, (a, f) in amounts.items()}


def _as_amounts(res: Mapping[str, Quantity]) -> _Amounts:
    return {n: (q.amount, q.format) for n, q in res.items()}


# -- aggregation over containers -----------------------------------------------------------------

View = Callable[[Container], Optional[Mapping[str, Quantity]]]


def _is_infeasible(pod: Pod) -> bool:
    # only the first PodResizePending condition counts, as upstream's lookup returns the first match
    for cond in pod.conditions:
        if cond.type == RESIZE_PENDING:
            return cond.reason == INFEASIBLE
    return False


def _statuses(pod: Pod) -> Dict[str, ContainerStatus]:
    out: Dict[str, ContainerStatus] = {}
    for st in pod.container_statuses:
        out.setdefault(st.name, st)
    return out


def _fill_missing(res: Optional[Mapping[str, Quantity]], defaults: Mapping[str, Quantity]):
    if not defaults:
        return res
    out = dict(res or {})
    for name, q in defaults.items():
        out.setdefault(name, q)
    return out


def _max_of_views(pod: Pod, views: Iterable[View]) -> _Amounts:
    # the max is taken after summing each view: two containers that swapped sizes give max of sums
    out: _Amounts = {}
    for view in views:
        _max_into(out, aggregate(pod, view))
    return out


def container_requests(pod: Pod, options: RequestOptions = DEFAULT) -> Resources:
    """The container part of the pod's requests (no pod-level resources, no overhead)."""
    return _as_quantities(_container_requests(pod, options))


def _container_requests(pod: Pod, options: RequestOptions) -> _Amounts:
    fill = options.non_missing_container_requests

    def spec(c: Container):
        return c.requests

    def filled(view: View) -> View:
        # upstream fills missing requests after each view, even a view that gave nothing
        return (lambda c: _fill_missing(view(c), fill)) if fill else view

    if not options.use_status_resources:
        return aggregate(pod, filled(spec))
    statuses = _statuses(pod)
    infeasible = _is_infeasible(pod)

    def allocated(c: Container):
        st = statuses.get(c.name)
        if st is not None and st.allocated is not None:
            return st.allocated
        return None if infeasible else c.requests

    def actuated(c: Container):
        st = statuses.get(c.name)
        if st is not None and st.requests is not None:
            return st.requests
        return allocated(c)  # the allocation, else the spec (nothing when the resize is infeasible)

    views = (allocated, actuated) if infeasible else (spec, allocated, actuated)
    return _max_of_views(pod, [filled(v) for v in views])


def container_limits(pod: Pod, options: RequestOptions = DEFAULT) -> Resources:
    """The container part of the pod's limits (no pod-level resources, no overhead)."""
    return _as_quantities(_container_limits(pod, options))


def _container_limits(pod: Pod, options: RequestOptions) -> _Amounts:
    def spec(c: Container):
        return c.limits

    if not options.use_status_resources:
        return aggregate(pod, spec)
    statuses = _statuses(pod)
    infeasible = _is_infeasible(pod)

    def actuated(c: Container):
        st = statuses.get(c.name)
        if st is not None and st.limits is not None:
            return st.limits
        return None if infeasible else c.limits

    return _max_of_views(pod, (actuated,) if infeasible else (spec, actuated))


def _apply_pod_level(amounts: _Amounts, pod_level: Optional[Mapping[str, Quantity]]) -> None:
    for name, q in (pod_level or {}).items():
        if is_supported_pod_level_resource(name):
            amounts[name] = (q.amount, q.format)


def pod_requests(pod: Pod, options: RequestOptions = DEFAULT) -> Resources:
    """Per resource, what the pod requests (a resource nobody mentions is absent, never zero)."""
    amounts = _container_requests(pod, options)
    if not options.skip_pod_level_resources and is_pod_level_requests_set(pod):
        _apply_pod_level(amounts, pod.pod_requests)
    if not options.exclude_overhead:
        _add(amounts, pod.overhead)
    return _as_quantities(amounts)


def pod_limits(pod: Pod, options: RequestOptions = DEFAULT) -> Resources:
    """Per resource, the pod's limit; overhead only raises limits that exist and are non-zero."""
    amounts = _container_limits(pod, options)
    if not options.skip_pod_level_resources and is_pod_level_limits_set(pod):
        _apply_pod_level(amounts, pod.pod_limits)
    if not options.exclude_overhead:
        for name, q in pod.overhead.items():
            have = amounts.get(name)
            if have is not None and have[0] != 0:
                amounts[name] = (have[0] + q.amount, have[1])
    return _as_quantities(amounts)


def request_quantity(pod: Pod, resource: str, pod_level_resources: bool = True) -> Quantity:
    """One resource's request as eviction ranking and resize feasibility read it (``GetResourceRequestQuantity``).

    With pod-level resources set (and the gate on), the pod-level request
    alone, the containers not looked at (0 when it does not name
    ``resource``); otherwise :func:`pod_requests` without overhead.  The pod
    overhead is added to a request that is not zero.
    """
    if pod_level_resources and is_pod_level_resources_set(pod):
        q = (pod.pod_requests or {}).get(resource) if is_supported_pod_level_resource(resource) else None
    else:
        q = pod_requests(pod, RequestOptions(exclude_overhead=True)).get(resource)
    total = q if q is not None else Quantity(0)
    overhead = pod.overhead.get(resource)
    return total + overhead if overhead is not None and not total.is_zero() else total


# -- the scheduler's integer view (framework.Resource) -------------------------------------------

CPU, MEMORY, EPHEMERAL, PODS = "cpu", "memory", "ephemeral-storage", "pods"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"


def is_native_resource(name: str) -> bool:
    """Unprefixed names and names in the ``kubernetes.io/`` domain (or a subdomain of it)."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """A resource named in another domain (``example.com/gpu``): device plugins and cluster resources."""
    return not is_native_resource(name) and not name.startswith("requests.")


def is_scalar_resource(name: str) -> bool:
    """Names the scheduler accounts beside cpu, memory and ephemeral-storage (``IsScalarResourceName``)."""
    return (is_extended_resource(name) or name.startswith(HUGEPAGES_PREFIX)
            or ("/" in name and "kubernetes.io/" in name) or name.startswith(ATTACHABLE_VOLUMES_PREFIX))


def to_units(res: Mapping[str, Quantity]) -> Dict[str, int]:
    """Integers as the scheduler keeps them: cpu in millicores, the rest in bytes or units (rounded up).

    ``pods`` and names the scheduler does not account (``storage``) are left out.
    """
    out: Dict[str, int] = {}
    for name, q in res.items():
        if name == CPU:
            out[name] = q.milli_value()
        elif name in (MEMORY, EPHEMERAL) or is_scalar_resource(name):
            out[name] = q.value()
    return out


def from_units(units: Mapping[str, int]) -> Resources:
    """Quantities back from scheduler integers (cpu millicores -> cores)."""
    out: Resources = {}
    for name, n in units.items():
        if name == CPU:
            out[name] = Quantity(Fraction(n, 1000), DECIMAL_SI)
        elif name in (MEMORY, EPHEMERAL) or name.startswith(HUGEPAGES_PREFIX):
            out[name] = Quantity(n, "BinarySI")
        else:
            out[name] = Quantity(n, DECIMAL_SI)
    return out


def request_units(pod: Pod, pod_level_resources: bool = True, use_status_resources: bool = False) -> Dict[str, int]:
    """The pod's requests as the scheduler keeps them: ``computePodResourceRequest`` for a new pod,
    ``calculateResource`` (``use_status_resources``: in-place resize on) for one already on the node."""
    return to_units(pod_requests(pod, RequestOptions(skip_pod_level_resources=not pod_level_resources,
                                                     use_status_resources=use_status_resources)))


__all__ = ["RequestOptions", "pod_requests", "pod_limits", "container_requests", "container_limits",
           "is_pod_level_resources_set", "is_pod_level_limits_set", "is_pod_level_requests_set",
           "is_supported_pod_level_resource", "is_extended_resource", "is_native_resource", "is_scalar_resource",
           "to_units", "from_units", "request_units", "aggregate"]
