"""The ledger's values: node configuration, placements, entries and a consistent view of them all.

Everything here is immutable and free of I/O; :mod:`pynuma.ledger.store`
reads and writes it, :mod:`pynuma.ledger.checkpoints` derives the kubelet's
files from a :class:`LedgerView`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..cpuset import CPUSet
from ..policy.memorymanager.state import Block
from .node import NodeState
from ..policy.podrequests import from_units

ASSUMED, BOUND = "assumed", "bound"


@dataclass(frozen=True)
class Placement:
    """What an admitted pod holds exclusively, per container: CPUs, memory blocks, devices."""

    cpus: Mapping[str, CPUSet] = field(default_factory=dict)
    memory: Mapping[str, Sequence[Block]] = field(default_factory=dict)
    devices: Mapping[str, Mapping[str, Sequence[str]]] = field(default_factory=dict)  # container -> resource -> ids

    def to_json(self) -> Dict[str, Any]:
        return {"cpus": {c: str(s) for c, s in sorted(self.cpus.items())},
                "memory": {c: [{"numa": list(b.numa_affinity or ()), "type": b.type, "size": b.size} for b in bl]
                           for c, bl in sorted(self.memory.items())},
                "devices": {c: {r: list(ids) for r, ids in sorted(d.items())} for c, d in sorted(self.devices.items())}}

    def is_empty(self) -> bool:
        return not (self.cpus or self.memory or self.devices)


@dataclass(frozen=True)
class Entry:
    """One pod in the ledger: ``assumed`` (reserved, bind not confirmed) or ``bound``."""

    uid: str
    name: str
    namespace: str
    state: str
    requests: Mapping[str, int]  # scheduler integers: cpu millicores, bytes, units
    assumed_at: float
    deadline: Optional[float]
    bound_at: Optional[float]
    generation: int
    placement: Placement = field(default_factory=Placement)

    def to_json(self) -> Dict[str, Any]:
        return {"uid": self.uid, "name": self.name, "namespace": self.namespace, "state": self.state,
                "requests": {k: str(q) for k, q in sorted(from_units(self.requests).items())},
                "assumed_at": self.assumed_at, "deadline": self.deadline, "bound_at": self.bound_at,
                "generation": self.generation, **self.placement.to_json()}


@dataclass(frozen=True)
class NodeConfig:
    """What the ledger accounts against, and what it needs to derive the kubelet's checkpoint files.

    ``allocatable``: scheduler integers (``pods`` = pods allowed); ``None`` =
    not configured.  ``cpu_policy``/``cpus``: the CPU Manager policy and the
    CPUs its state covers.  ``memory``: the static Memory Manager's machine
    (``[[node, bytes, [[page_kb, pages], ...]], ...]``) and reservations
    (``{node: {resource: bytes}}``).  ``devices``: the device inventory
    (``[{resource, id, numa, healthy}]``); each healthy device adds one unit
    of its resource to allocatable.
    """

    allocatable: Optional[Mapping[str, int]] = None
    cpu_policy: Optional[str] = None
    cpus: Optional[CPUSet] = None
    memory: Optional[Mapping[str, Any]] = None
    devices: Tuple[Mapping[str, Any], ...] = ()
    node_name: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: Tuple[Mapping[str, Any], ...] = ()
    partial: bool = False  # allocatable lists only some resources: the others are not checked
    unknown: Tuple[str, ...] = ()  # resources whose capacity could not be read: not checked

    def to_json(self) -> Dict[str, Any]:
        return {"allocatable": None if self.allocatable is None else dict(self.allocatable), "partial": self.partial, "unknown": list(self.unknown),
                "cpu_policy": self.cpu_policy, "cpus": None if self.cpus is None else str(self.cpus),
                "memory": self.memory, "devices": list(self.devices), "node_name": self.node_name,
                "labels": dict(self.labels), "taints": list(self.taints)}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "NodeConfig":
        cpus = raw.get("cpus")
        return cls(raw.get("allocatable"), raw.get("cpu_policy"), None if cpus is None else CPUSet.parse(cpus),
                   raw.get("memory"), tuple(raw.get("devices") or ()), raw.get("node_name") or "",
                   dict(raw.get("labels") or {}), tuple(raw.get("taints") or ()), bool(raw.get("partial")),
                   tuple(raw.get("unknown") or ()))

    def device_counts(self) -> Dict[str, int]:
        counts: Dict[str, int] = {}
        for d in self.devices:
            if d.get("healthy", True):
                counts[d["resource"]] = counts.get(d["resource"], 0) + 1
        return counts

    def effective_allocatable(self) -> Optional[Dict[str, int]]:
        """Allocatable with the device inventory's counts filled in (the inventory wins for its resources)."""
        if self.allocatable is None and not self.devices:
            return None
        out = dict(self.allocatable or {})
        out.update(self.device_counts())
        return out


@dataclass(frozen=True)
class LedgerView:
    """A consistent read of the ledger at one ``generation`` (what a writer decides from)."""

    generation: int
    config: NodeConfig
    entries: Tuple[Entry, ...]

    def entry(self, uid: str) -> Optional[Entry]:
        for e in self.entries:
            if e.uid == uid:
                return e
        return None

    def requested(self) -> Dict[str, int]:
        """Sum of every entry's requests (assumed and bound), in scheduler integers."""
        total: Dict[str, int] = {}
        for e in self.entries:
            for name, n in e.requests.items():
                total[name] = total.get(name, 0) + n
        return total

    def node_state(self) -> NodeState:
        """The node as fit sees it: allocatable minus every entry (``exists`` False when unconfigured)."""
        alloc = self.config.effective_allocatable()
        return NodeState(alloc or {}, self.requested(), len(self.entries), self.config.node_name,
                         dict(self.config.labels), tuple(self.config.taints), (), self.config.partial, alloc is not None,
                         frozenset(self.config.unknown))

    def cpu_assignments(self) -> Dict[str, Dict[str, CPUSet]]:
        return {e.uid: dict(e.placement.cpus) for e in self.entries if e.placement.cpus}

    def cpu_state(self):
        """The CPU Manager state the entries imply: shared pool = configured CPUs minus every exclusive one."""
        from ..policy.cpumanager.state import CPUState

        assignments = self.cpu_assignments()
        state = CPUState(None, assignments)
        if self.config.cpu_policy == "static" and self.config.cpus is not None:
            state.default = self.config.cpus - state.assigned()
        return state

    def memory_assignments(self) -> Dict[str, Dict[str, List[Block]]]:
        return {e.uid: {c: list(b) for c, b in e.placement.memory.items()} for e in self.entries if e.placement.memory}

    def device_allocations(self) -> Dict[str, Dict[str, Dict[str, List[str]]]]:
        return {e.uid: {c: {r: list(ids) for r, ids in d.items()} for c, d in e.placement.devices.items()}
                for e in self.entries if e.placement.devices}
