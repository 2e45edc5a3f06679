"""``--reserved-memory``: per-NUMA memory the kubelet keeps for the system.

>>> parse_reserved_memory("0:memory=1Gi;1:memory=2Gi,hugepages-2Mi=64Mi")[1].limits["hugepages-2Mi"]
Quantity('64Mi')

Syntax (kubelet flag): ``<numa>:<type>=<quantity>[,<type>=<quantity>...]``,
entries separated by ``;`` (the flag may also be repeated).  Types are
``memory`` and ``hugepages-<size>``.  The per-type totals must equal the Node
Allocatable reservation (kube-reserved + system-reserved + hard eviction) of
that type, and every NUMA id must exist on the machine.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

from ...errors import InputError
from ...hugepages.resources import is_hugepage_resource_name
from ...quantity import DECIMAL_SI, Quantity

SystemReserved = Dict[int, Dict[str, int]]


@dataclass(frozen=True)
class MemoryReservation:
    """Memory reserved on one NUMA node, per memory type."""

    numa_node: int
    limits: Dict[str, Quantity] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: Mapping, where: str = "reserved memory") -> "MemoryReservation":
        """From ``{"numaNode": 0, "limits": {"memory": "1Gi"}}`` (KubeletConfiguration form)."""
        if not isinstance(raw, Mapping):
            raise InputError(f"{where}: expected a map")
        node = raw.get("numaNode", raw.get("numa_node"))
        if isinstance(node, bool) or not isinstance(node, int):
            raise InputError(f"{where}: numaNode must be an integer")
        limits = raw.get("limits") or {}
        if not isinstance(limits, Mapping):
            raise InputError(f"{where}: limits must be a map")
        return cls(node, {str(k): Quantity.parse(v) for k, v in limits.items()})


def _is_memory_type(name: str) -> bool:
    return name == "memory" or is_hugepage_resource_name(name)


def parse_reserved_memory(text: str) -> List[MemoryReservation]:
    """Parse the ``--reserved-memory`` flag value; ``InputError`` naming the bad part."""
    out: List[MemoryReservation] = []
    for entry in text.split(";"):
        entry = entry.strip()
        if not entry:
            continue
        parts = entry.split(":")
        if len(parts) != 2:
            raise InputError(f"--reserved-memory: expected NUMA:type=quantity[,type=quantity...], got {entry!r}")
        node_text, limits_text = parts
        try:
            node = int(node_text.strip())
        except ValueError:
            raise InputError(f"--reserved-memory: NUMA node id must be an integer, got {node_text!r}") from None
        if node < 0:
            raise InputError(f"--reserved-memory: NUMA node id must not be negative, got {node}")
        limits: Dict[str, Quantity] = {}
        for item in limits_text.split(","):
            kv = item.split("=")
            if len(kv) != 2:
                raise InputError(f"--reserved-memory: expected type=quantity, got {item!r}")
            name = kv[0].strip()
            if not _is_memory_type(name):
                raise InputError(f"--reserved-memory: unknown memory type {name!r} (memory or hugepages-<size>)")
            try:
                q = Quantity.parse(kv[1].strip())
            except InputError as err:
                raise InputError(f"--reserved-memory: {name}: {err}") from None
            if q.amount < 0:
                raise InputError(f"--reserved-memory: {name}={q} is negative")
            if q.as_int64() is None:
                raise InputError(f"--reserved-memory: {name}={q} is not a whole number of bytes")
            limits[name] = q
        out.append(MemoryReservation(node, limits))
    return out


def _add(a: Optional[Quantity], b: Quantity) -> Quantity:
    # Quantity addition keeps the left side's format unless it is zero (Go's Add).
    if a is None or a.is_zero():
        return Quantity(b.amount + (a.amount if a else 0), b.format)
    return Quantity(a.amount + b.amount, a.format)


def validate_reserved_memory(numa_nodes: Iterable[int], node_allocatable_reservation: Mapping[str, object],
                             reservations: Sequence[MemoryReservation]) -> None:
    """Raise ``InputError`` unless the reservations fit the machine and Node Allocatable."""
    nodes = set(numa_nodes)
    totals: Dict[str, Quantity] = {}
    for r in reservations:
        if r.numa_node not in nodes:
            raise InputError(f"the reserved memory configuration references a NUMA node {r.numa_node} "
                             "that does not exist on this machine")
        for name, q in r.limits.items():
            # Go's q.Add(total): the newest entry's format wins unless it is zero
            totals[name] = _add(q, totals[name]) if name in totals else q
    nar = {str(k): Quantity.parse(v) for k, v in (node_allocatable_reservation or {}).items()}
    types = set(totals) | {n for n in nar if _is_memory_type(n)}
    for name in sorted(types, key=lambda n: (n != "memory", n)):
        expected = _add(Quantity(0, DECIMAL_SI), nar[name]) if name in nar else Quantity(0, DECIMAL_SI)
        got = _add(Quantity(0, DECIMAL_SI), totals[name]) if name in totals else Quantity(0, DECIMAL_SI)
        if expected != got:
            raise InputError(f'the total amount "{got}" of type "{name}" is not equal to the value '
                             f'"{expected}" determined by Node Allocatable feature')


def system_reserved_memory(numa_nodes: Iterable[int], node_allocatable_reservation: Optional[Mapping[str, object]],
                           reservations: Sequence[MemoryReservation]) -> SystemReserved:
    """Per-NUMA reserved bytes per type (every node present, maybe empty).

    ``node_allocatable_reservation=None`` skips the Node Allocatable check
    (conversion only).
    """
    nodes = sorted(set(numa_nodes))
    if node_allocatable_reservation is not None:
        validate_reserved_memory(nodes, node_allocatable_reservation, reservations)
    out: SystemReserved = {n: {} for n in nodes}
    for r in reservations:
        for name, q in r.limits.items():
            size = q.as_int64()
            if size is None:
                raise InputError("could not covert a variable of type Quantity to int64")  # upstream's wording
            out.setdefault(r.numa_node, {})[name] = size
    return out
