"""Node allocatable: capacity minus kube-reserved, system-reserved and hard eviction thresholds.

>>> from pynuma.quantity import Quantity as Q
>>> cap = {"cpu": Q.parse("10"), "memory": Q.parse("10Gi")}
>>> r = node_allocatable_reservation(cap, {"cpu": Q.parse("100m")}, {}, [])
>>> str(r["cpu"])
'100m'

Rules from the kubelet's ``pkg/kubelet/cm/node_container_manager_linux.go``:
only hard ``memory.available`` and ``nodefs.available`` thresholds reserve
capacity; the value enforced on the ``kubepods`` cgroup leaves the eviction
part out (the allocatableMemory.available threshold covers it).
"""
from __future__ import annotations

from ..errors import InputError
from ..quantity import Quantity
from .eviction.signals import MEMORY_AVAILABLE, NODEFS_AVAILABLE, OP_LESS_THAN
from .eviction.thresholds import Threshold

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from collections.abc import Mapping
    from typing import Dict, Iterable, List, Optional

    Resources = Mapping[str, Quantity]

RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")
HUGEPAGES_PREFIX = "hugepages-"


def validate_reserved(reserved: Resources, what: str = "kube-reserved") -> Dict[str, Quantity]:
    """Reject resources the kubelet cannot reserve (``cannot reserve "<name>" resource``)."""
    for name in reserved:
        if name not in RESERVABLE:
            raise InputError(f'{what}: cannot reserve "{name}" resource')
        if reserved[name].amount < 0:
            raise InputError(f"{what}: {name} reservation must not be negative: {reserved[name]}")
    return dict(reserved)


def reserved_cpus_override(kube_reserved: Resources, system_reserved: Resources,
                           reserved_cpu_count: int) -> "tuple[Dict[str, Quantity], Dict[str, Quantity]]":
    """``(kube, system)`` reservations once ``--reserved-cpus`` (``reservedSystemCPUs``) is applied.

    A non-empty reserved CPU list replaces the cpu reservation: kube-reserved
    loses its cpu, and system-reserved reserves the list's size (the kubelet's
    ``cmd/kubelet/app/server.go``), so allocatable cpu is capacity minus
    exactly the CPUs the static policy keeps back.
    """
    kube, system = dict(kube_reserved), dict(system_reserved)
    if reserved_cpu_count > 0:
        kube.pop("cpu", None)
        system["cpu"] = Quantity(reserved_cpu_count)
    return kube, system


def hard_eviction_reservation(thresholds: Iterable[Threshold], capacity: Resources) -> Dict[str, Quantity]:
    """What hard eviction thresholds hold back: memory.available -> memory, nodefs.available -> ephemeral-storage."""
    out: Dict[str, Quantity] = {}
    for t in thresholds:
        if t.operator != OP_LESS_THAN or not t.is_hard:
            continue
        resource = {MEMORY_AVAILABLE: "memory", NODEFS_AVAILABLE: "ephemeral-storage"}.get(t.signal)
        if resource is None:
            continue
        cap = capacity.get(resource, Quantity(0))
        out[resource] = t.value.resolve_quantity(cap.value())
    return out


def node_allocatable_reservation(capacity: Resources, kube_reserved: Resources, system_reserved: Resources,
                                 hard_thresholds: Iterable[Threshold]) -> Dict[str, Quantity]:
    """Total reservation per resource of ``capacity`` (system + kube + eviction); zeros omitted."""
    eviction = hard_eviction_reservation(hard_thresholds, capacity)
    out: Dict[str, Quantity] = {}
    for k in capacity:
        total = 0
        fmt = None
        for src in (system_reserved, kube_reserved, eviction):
            q = src.get(k)
            if q is not None:
                total += q.amount
                fmt = fmt or q.format
        if total != 0:
            out[k] = Quantity(total, fmt or "DecimalSI")
    return out


def _minus_hugepages(out: Dict[str, Quantity], pools: Resources) -> None:
    """``memory`` less every hugepages pool of ``pools``, clamped at 0 after each (upstream's loop).

    Upstream reads ``result[memory]`` as a zero quantity when memory is
    missing, so any hugepages pool yields ``memory: 0`` then.
    """
    for k, pool in list(pools.items()):
        if k.startswith(HUGEPAGES_PREFIX):
            mem = out.get("memory")
            amount = (0 if mem is None else mem.amount) - pool.amount
            fmt = pool.format if mem is None or mem.amount == 0 else mem.format  # Sub from zero takes y's format
            out["memory"] = Quantity(max(amount, 0), fmt)


def node_allocatable_enforced(capacity: Resources, kube_reserved: Resources,
                              system_reserved: Resources) -> Dict[str, Quantity]:
    """The limits written to the node-allocatable (``kubepods``) cgroup: capacity - kube - system, >= 0.

    Memory also leaves out the hugepages pools (as they stand after the
    reservations, ``getNodeAllocatableAbsoluteImpl``); the eviction
    reservation is not subtracted.
    """
    out: Dict[str, Quantity] = {}
    for k, cap in capacity.items():
        v = cap.amount - (system_reserved.get(k, Quantity(0)).amount) - (kube_reserved.get(k, Quantity(0)).amount)
        out[k] = Quantity(max(v, 0), cap.format)
    _minus_hugepages(out, out)
    return out


def node_status_allocatable(capacity: Resources, kube_reserved: Resources, system_reserved: Resources,
                            hard_thresholds: Iterable[Threshold]) -> Dict[str, Quantity]:
    """The Node's ``status.allocatable``: capacity - reservation (>= 0), memory minus every hugepages pool."""
    reservation = node_allocatable_reservation(capacity, kube_reserved, system_reserved, hard_thresholds)
    out: Dict[str, Quantity] = {}
    for k, cap in capacity.items():
        v = cap.amount - (reservation[k].amount if k in reservation else 0)
        out[k] = Quantity(max(v, 0), cap.format)
    _minus_hugepages(out, capacity)  # setters.go MachineInfo: the capacity of every pool
    return out


def validation_errors(capacity: Resources, kube_reserved: Resources, system_reserved: Resources,
                      hard_thresholds: Iterable[Threshold]) -> List[str]:
    """One sentence per resource whose reservation exceeds capacity (equal is fine)."""
    errors = []
    for k, r in node_allocatable_reservation(capacity, kube_reserved, system_reserved, hard_thresholds).items():
        cap = capacity.get(k, Quantity(0))
        left = cap.amount - r.amount
        if left < 0:
            errors.append(f'Resource "{k}" has an allocatable of {Quantity(left, cap.format)}, capacity of {cap}')
    return errors


def validate_node_allocatable(capacity: Resources, kube_reserved: Resources, system_reserved: Resources,
                              hard_thresholds: Iterable[Threshold]) -> None:
    """Raise :class:`InputError` with the kubelet's message when a reservation exceeds capacity."""
    errors = validation_errors(capacity, kube_reserved, system_reserved, hard_thresholds)
    if errors:
        raise InputError("invalid Node Allocatable configuration. " + " ".join(errors))


def parse_resource_list(text: Optional[str], what: str) -> Dict[str, Quantity]:
    """``cpu=1,memory=2Gi`` (the kubelet's ``--kube-reserved`` syntax) as quantities."""
    out: Dict[str, Quantity] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise InputError(f"{what}: malformed pair {item!r}, expect name=quantity")
        k, v = (s.strip() for s in item.split("=", 1))
        try:
            out[k] = Quantity.parse(v)
        except InputError as err:
            raise InputError(f"{what}: {k}: {err}") from None
    return out
