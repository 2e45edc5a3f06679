"""A node as fit sees it: allocatable, what its pods already request, its labels, taints and host ports.

>>> node = NodeState.build({"cpu": "2", "memory": "4Gi", "pods": "10"})
>>> node.free("cpu"), node.allowed_pods
(2000, 10)

Amounts are the scheduler's integers (``framework.Resource``): cpu in
millicores, memory, ephemeral-storage and hugepages in bytes, everything
else in units; ``pods`` in allocatable is the number of pods allowed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, Mapping, Optional, Tuple, Union

from ..pod import HostPort, Pod
from ..quantity import Quantity
from ..policy.podrequests import PODS, request_units, to_units

QuantityLike = Union[Quantity, str, int]


def host_ports(pod: Pod) -> Tuple[HostPort, ...]:
    """The host ports a pod holds while it runs (``schedutil.GetHostPorts``).

    Sidecars (init containers with ``restartPolicy: Always``) first, then app
    containers; a regular init container has exited before the pod runs, so
    its ports are neither wanted nor held.
    """
    return tuple(hp for c in pod.init_containers if c.is_sidecar for hp in c.ports) + \
        tuple(hp for c in pod.containers for hp in c.ports)


def allocatable_units(allocatable: Mapping[str, QuantityLike]) -> Dict[str, int]:
    """Node allocatable in scheduler integers, ``pods`` kept as the allowed pod count."""
    parsed = {k: Quantity.parse(v) for k, v in allocatable.items()}
    out = to_units(parsed)
    if PODS in parsed:
        out[PODS] = parsed[PODS].value()
    return out


@dataclass(frozen=True)
class NodeState:
    """Allocatable and requested totals plus the node facts the kubelet's predicates read."""

    allocatable: Mapping[str, int]
    requested: Mapping[str, int] = field(default_factory=dict)
    pod_count: int = 0
    name: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: Tuple[Mapping, ...] = ()
    host_ports: Tuple[HostPort, ...] = ()
    # allocatable lists only what is known (a topology file says nothing of disks): a resource it
    # does not list is not checked, and is reported as unchecked
    partial: bool = False
    exists: bool = True  # False: no node object (the scheduler's fit then never passes)
    # resources whose capacity could not be read (a dump without /proc/meminfo): not checked either
    unknown: FrozenSet[str] = frozenset()

    @property
    def allowed_pods(self) -> int:
        return int(self.allocatable.get(PODS, 0))

    def knows(self, resource: str) -> bool:
        return resource not in self.unknown and (not self.partial or resource in self.allocatable)

    def free(self, resource: str) -> int:
        return int(self.allocatable.get(resource, 0)) - int(self.requested.get(resource, 0))

    @classmethod
    def build(cls, allocatable: Optional[Mapping[str, QuantityLike]], existing: Iterable[Pod] = (), *,
              name: str = "", labels: Optional[Mapping[str, str]] = None, taints: Iterable[Mapping] = (),
              pod_level_resources: bool = True, partial: bool = False,
              unknown: Iterable[str] = (), use_status_resources: bool = True) -> "NodeState":
        """From allocatable quantities and the pods already on the node (their requests summed).

        ``name`` ``""`` means the node's name is not known (pynuma's callers
        say so when the user gave none): the NodeName predicate is then
        skipped.  ``use_status_resources`` (the ``InPlacePodVerticalScaling``
        gate) counts each pod at the larger of its spec and its status.
        """
        requested: Dict[str, int] = {}
        ports = []
        pods = list(existing)
        for p in pods:
            for res, n in request_units(p, pod_level_resources, use_status_resources).items():
                requested[res] = requested.get(res, 0) + n
            ports += host_ports(p)
        return cls(allocatable_units(allocatable or {}), requested, len(pods), name, dict(labels or {}),
                   tuple(taints), tuple(ports), partial, allocatable is not None, frozenset(unknown))

    def with_allocatable(self, updates: Mapping[str, int]) -> "NodeState":
        """A copy with some allocatable entries replaced (device plugin updates)."""
        merged = dict(self.allocatable)
        merged.update(updates)
        return NodeState(merged, self.requested, self.pod_count, self.name, self.labels, self.taints,
                         self.host_ports, self.partial, self.exists, self.unknown)
