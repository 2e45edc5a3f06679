"""Pod QoS class (Guaranteed / Burstable / BestEffort) as the kubelet computes it.

>>> from pynuma.pod import Pod
>>> qos_class(Pod.from_dict({"name": "p", "containers": [{"name": "c"}]}))
'BestEffort'

Rules (kubernetes ``pkg/apis/core/v1/helper/qos``): only cpu and memory count;
zero quantities count as unset; an already-set ``status.qosClass`` wins; with
the PodLevelResources gate and pod-level cpu/memory set, the pod-level
resources alone decide.
"""
from __future__ import annotations

from ..pod import Container, Pod, is_supported_pod_level_resource
from ..quantity import Quantity

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Iterable, Mapping, Optional, Tuple

GUARANTEED, BURSTABLE, BEST_EFFORT = "Guaranteed", "Burstable", "BestEffort"
QOS_CLASSES = (GUARANTEED, BURSTABLE, BEST_EFFORT)

# Only these resources take part in QoS: hugepages and extended resources never do.
_QOS_RESOURCES = ("cpu", "memory")


def uses_pod_level_resources(pod: Pod, pod_level_resources: bool = True) -> bool:
    """Whether the pod's own ``spec.resources`` decide (gate on and a supported resource set there)."""
    if not pod_level_resources:
        return False
    names = list((pod.pod_requests or {}).keys()) + list((pod.pod_limits or {}).keys())
    return any(is_supported_pod_level_resource(n) for n in names)


def _defaulted_requests(requests: Mapping[str, Quantity], limits: Mapping[str, Quantity]) -> Dict[str, Quantity]:
    # API defaulting: a limit with no request (key absent, not zero) becomes the request.
    out = dict(requests)
    for name, q in limits.items():
        if name not in out:
            out[name] = q
    return out


def _positive(res: Mapping[str, Quantity]) -> Dict[str, Quantity]:
    return {n: q for n, q in res.items() if n in _QOS_RESOURCES and q > 0}


def _accumulate(into: Dict[str, Quantity], res: Mapping[str, Quantity]) -> None:
    # sums of quantities stay exact without fractions (a milli-CPU pod costs no import)
    for name, q in res.items():
        into[name] = into[name] + q if name in into else q


def _collect(pairs: Iterable[Tuple[Mapping[str, Quantity], Mapping[str, Quantity]]]):
    """Sum positive cpu/memory requests and limits; guaranteed-capable iff every pair limits both."""
    requests: Dict[str, Quantity] = {}
    limits: Dict[str, Quantity] = {}
    all_limited = True
    for reqs, lims in pairs:
        reqs = _defaulted_requests(reqs, lims)
        pos_lims = _positive(lims)
        _accumulate(requests, _positive(reqs))
        _accumulate(limits, pos_lims)
        if not all(r in pos_lims for r in _QOS_RESOURCES):
            all_limited = False
    return requests, limits, all_limited


def _container_pairs(containers: Iterable[Container]):
    return [(c.requests, c.limits) for c in containers]


def _pod_level_qos(pod: Pod) -> str:
    """The class of ``spec.resources`` alone (``resourceQOS``), its requests defaulted as the API server
    defaults them: any entry at all and cpu and memory each requested as limited decide."""
    limits = pod.pod_limits or {}
    requests = pod.defaulted().pod_requests or {}
    if not requests and not limits:
        return BEST_EFFORT
    zero = Quantity(0)
    unset = [requests.get(n, zero) == 0 and limits.get(n, zero) == 0 for n in _QOS_RESOURCES]
    if any(requests.get(n, zero) != limits.get(n, zero) for n in _QOS_RESOURCES) or len(set(unset)) > 1:
        return BURSTABLE
    return BEST_EFFORT if unset[0] else GUARANTEED


def compute_qos_class(pod: Pod, pod_level_resources: bool = True) -> str:
    """QoS class from the spec alone (``ComputePodQOS``), ignoring ``status.qosClass``.

    With the gate on, a pod that has ``spec.resources`` at all (even empty) is classed by it alone.
    """
    if pod_level_resources and (pod.pod_requests is not None or pod.pod_limits is not None):
        return _pod_level_qos(pod)
    pairs = _container_pairs(pod.containers) + _container_pairs(pod.init_containers)
    requests, limits, all_limited = _collect(pairs)
    if not requests and not limits:
        return BEST_EFFORT
    if all_limited and requests.keys() == limits.keys() and all(limits[n] == requests[n] for n in requests):
        return GUARANTEED
    return BURSTABLE


def qos_class(pod: Pod, pod_level_resources: bool = True) -> str:
    """The pod's QoS class: ``status.qosClass`` when already set, else :func:`compute_qos_class`.

    ``pod_level_resources`` is the kubelet's ``PodLevelResources`` feature gate.
    """
    status: Optional[str] = pod.status_qos_class
    if status:
        return status
    return compute_qos_class(pod, pod_level_resources)
