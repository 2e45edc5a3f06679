"""Device hints as the kubelet's Device Manager gives them, from a device inventory.

Devices come from a JSON list ``[{"resource", "id", "numa"}]`` (``numa``: a
node id, a list of ids, or ``null`` = no locality) or from discovered PCI
devices (:func:`devices_from_pci`, resource names chosen by the caller).

>>> inv = DeviceInventory.from_json([{"resource": "gpu", "id": "g0", "numa": 0},
...                                  {"resource": "gpu", "id": "g1", "numa": 1}])
>>> [h.to_json() for h in DeviceHintProvider(inv, [0, 1]).request_hints("gpu", 1, inv.available("gpu"), set())]
[{'numa': [0], 'preferred': True}, {'numa': [1], 'preferred': True}, {'numa': [0, 1], 'preferred': False}]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ...errors import AllocationError
from ...limits import MAX_NUMA_NODES
from ..topologymanager.bitmask import iterate_masks
from ..topologymanager.hints import ProviderHints, TopologyHint


@dataclass(frozen=True)
class Device:
    """One device of an extended resource; ``numa`` empty = the device reports no NUMA locality."""

    resource: str
    id: str
    numa: Tuple[int, ...] = ()
    healthy: bool = True


def _node_id(n: Any) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and 0 <= n < MAX_NUMA_NODES


def _numa(raw: Any, where: str) -> Tuple[int, ...]:
    if raw is None or raw == -1:
        return ()
    if _node_id(raw):
        return (raw,)
    if isinstance(raw, list) and all(_node_id(n) for n in raw):
        return tuple(sorted(set(raw)))
    raise ValueError(f"{where}: 'numa' must be a node id below {MAX_NUMA_NODES}, a list of them or null")


@dataclass
class DeviceInventory:
    """Devices per resource plus what is already allocated (``{pod_uid: {container: {resource: [ids]}}}``)."""

    devices: Dict[str, Dict[str, Device]] = field(default_factory=dict)
    allocated: Dict[str, Dict[str, Dict[str, List[str]]]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any, where: str = "devices") -> "DeviceInventory":
        """Parse ``[{"resource", "id", "numa", "healthy"?}]``; ``ValueError`` naming the bad item."""
        if not isinstance(raw, list):
            raise ValueError(f"{where}: expected a list of {{resource, id, numa}} objects")
        inv = cls()
        for i, item in enumerate(raw):
            w = f"{where}[{i}]"
            if not isinstance(item, Mapping):
                raise ValueError(f"{w}: expected an object")
            res, did = item.get("resource"), item.get("id")
            if not isinstance(res, str) or not res or not isinstance(did, (str, int)) or isinstance(did, bool):
                raise ValueError(f"{w}: needs a 'resource' name and an 'id'")
            healthy = item.get("healthy", True)
            if not isinstance(healthy, bool):
                raise ValueError(f"{w}: 'healthy' must be true or false")
            per = inv.devices.setdefault(res, {})
            if str(did) in per:
                raise ValueError(f"{w}: duplicate device id {did!r} for {res}")
            per[str(did)] = Device(res, str(did), _numa(item.get("numa"), w), healthy)
        return inv

    def resources(self) -> List[str]:
        return sorted(self.devices)

    def has_topology(self, resource: str) -> bool:
        """Whether any device of ``resource`` reports NUMA locality (else: no preference)."""
        return any(d.numa for d in self.devices.get(resource, {}).values())

    def allocated_ids(self, resource: str) -> Set[str]:
        return {i for conts in self.allocated.values() for res in conts.values() for i in res.get(resource, ())}

    def container_devices(self, pod_uid: str, container: str, resource: str) -> Optional[List[str]]:
        got = self.allocated.get(pod_uid, {}).get(container, {}).get(resource)
        return None if got is None else list(got)

    def available(self, resource: str) -> Set[str]:
        """Healthy devices of ``resource`` not allocated to anyone."""
        used = self.allocated_ids(resource)
        return {i for i, d in self.devices.get(resource, {}).items() if d.healthy and i not in used}


def devices_from_pci(pci_devices: Iterable[Any], resource_of) -> DeviceInventory:
    """Inventory from discovered PCI devices; ``resource_of(dev) -> name | None`` picks and names them."""
    items = []
    for dev in pci_devices:
        res = resource_of(dev)
        if res:
            items.append({"resource": res, "id": dev.address, "numa": dev.numa_node})
    return DeviceInventory.from_json(items)


def _request(container: Any, resource: str) -> int:
    q = container.limits.get(resource)
    if q is None:
        q = container.requests.get(resource)
    return 0 if q is None else q.value()  # devices are whole: Value() rounds up like the kubelet


def pod_request(pod: Any, resource: str) -> int:
    """The pod's need: max(app containers + sidecars, peak of each regular init container + sidecars before it)."""
    sidecars = 0
    peak = 0
    for c in pod.init_containers:
        r = _request(c, resource)
        if c.is_sidecar:
            sidecars += r
        else:
            peak = max(peak, r + sidecars)
    return max(peak, sum(_request(c, resource) for c in pod.containers) + sidecars)


class DeviceHintProvider:
    """The Device Manager's side of the ``HintProvider`` protocol, over a :class:`DeviceInventory`."""

    def __init__(self, inventory: DeviceInventory, numa_nodes: Sequence[int]) -> None:
        self.inv = inventory
        self.nodes = sorted(numa_nodes)

    def _mask_of(self, resource: str, ids: Iterable[str]) -> List[Tuple[int, ...]]:
        devs = self.inv.devices.get(resource, {})
        return [devs[i].numa for i in ids if i in devs]

    def request_hints(self, resource: str, request: int, available: Set[str], reusable: Set[str]) -> List[TopologyHint]:
        """Every NUMA set holding enough (reusable + available) devices; the smallest possible ones preferred."""
        devs = self.inv.devices.get(resource, {})
        all_numa = [d.numa for d in devs.values()]
        avail_numa = self._mask_of(resource, available)
        reuse_numa = [n for n in self._mask_of(resource, reusable) if n]
        min_size = len(self.nodes)
        out: List[TopologyHint] = []
        for mask in iterate_masks(self.nodes):
            if sum(1 for n in all_numa if mask.any_set(n)) >= request and mask.count() < min_size:
                min_size = mask.count()
            if not all(mask.any_set(n) for n in reuse_numa):
                continue  # a device this pod already holds lies outside the set
            matching = len(reuse_numa) + sum(1 for n in avail_numa if mask.any_set(n))
            if matching >= request:
                out.append(TopologyHint(mask, False))
        return [TopologyHint(h.numa_affinity, h.numa_affinity.count() == min_size) for h in out]

    def _resource_hints(self, pod: Any, resource: str, request: int, containers: Sequence[str]) -> Optional[list]:
        if not self.inv.has_topology(resource):
            return None  # no locality known: no preference
        held: List[str] = []
        for name in containers:
            got = self.inv.container_devices(pod.uid, name, resource)
            if got is not None:
                held += got
        if held:
            if len(held) != request:
                return []
            return self.request_hints(resource, request, set(held), set())
        available = self.inv.available(resource)
        if len(available) < request:
            return []
        return self.request_hints(resource, request, available, set())

    def hints(self, pod: Any, container: Any) -> ProviderHints:
        """Per device resource the container asks for; ``None`` when it asks for none."""
        out: Dict[str, Optional[list]] = {}
        for res in self.inv.resources():
            n = _request(container, res)
            if n > 0:
                out[res] = self._resource_hints(pod, res, n, [container.name])
        return out or None

    def pod_hints(self, pod: Any) -> ProviderHints:
        out: Dict[str, Optional[list]] = {}
        names = [c.name for c in pod.all_containers()]
        for res in self.inv.resources():
            n = pod_request(pod, res)
            if n > 0:
                out[res] = self._resource_hints(pod, res, n, names)
        return out or None

    def allocate(self, pod: Any, container: Any, hint: Optional[TopologyHint] = None) -> Dict[str, List[str]]:
        """Pick devices for ``container``: on the hint's nodes first, then unknown locality, then the rest."""
        got: Dict[str, List[str]] = {}
        for res in self.inv.resources():
            n = _request(container, res)
            if n <= 0:
                continue
            held = self.inv.container_devices(pod.uid, container.name, res)
            if held is not None:
                got[res] = held
                continue
            free = self.inv.available(res)
            if len(free) < n:
                raise AllocationError(f"requested number of devices unavailable for {res}. "
                                      f"Requested: {n}, Available: {len(free)}")
            devs = self.inv.devices[res]
            aff = None if hint is None else hint.numa_affinity

            def rank(i: str):
                numa = devs[i].numa
                if aff is not None and numa and aff.any_set(numa):
                    return (0, min(x for x in numa if aff.is_set(x)), i)
                return (1, -1, i) if not numa else (2, min(numa), i)

            pick = sorted(free, key=rank)[:n]
            got[res] = pick
            self.inv.allocated.setdefault(pod.uid, {}).setdefault(container.name, {})[res] = pick
        return got
