"""The Memory Manager's state: per-NUMA memory tables and per-container memory blocks.

Mirrors the kubelet's ``memorymanager/state`` types.  Sizes are byte counts.
``None`` keeps a Go ``nil`` (slice or map) apart from an empty one, because
the checkpoint checksum renders them differently.

>>> table = MemoryTable(total=2 << 30, system_reserved=512 << 20, allocatable=1536 << 20, reserved=0, free=1536 << 20)
>>> table.free == table.allocatable - table.reserved
True
"""
from __future__ import annotations

from ..._dataclass import dataclass, field
from ..._mapping import Mapping
from ...errors import InputError
from ...quantity import BINARY_SI, Quantity

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing (and dataclasses) cost `pynuma state show` its start-up budget
    from typing import Any, Dict, List, Optional, Tuple

MEMORY = "memory"


@dataclass
class MemoryTable:
    """One resource (``memory`` or ``hugepages-<size>``) on one NUMA node."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int


@dataclass
class NUMANodeState:
    """A NUMA node: how many blocks use it, its memory tables, and the group (``cells``) it is used with."""

    number_of_assignments: int = 0
    memory_map: Optional[Dict[str, MemoryTable]] = field(default_factory=dict)
    cells: Optional[List[int]] = None


@dataclass(frozen=True)
class Block:
    """Memory of one type given to a container, spread over ``numa_affinity`` (ascending)."""

    numa_affinity: Optional[Tuple[int, ...]]
    type: str
    size: int


if TYPE_CHECKING:
    NUMANodeMap = Dict[int, NUMANodeState]
    Assignments = Dict[str, Dict[str, List[Block]]]
else:  # the same names for annotations elsewhere, without importing typing
    NUMANodeMap = "Dict[int, NUMANodeState]"
    Assignments = "Dict[str, Dict[str, List[Block]]]"


@dataclass
class MemoryState:
    """The whole state: machine state per NUMA node and memory blocks per pod and container."""

    machine_state: Optional[NUMANodeMap] = field(default_factory=dict)
    assignments: Optional[Assignments] = field(default_factory=dict)

    def copy(self) -> "MemoryState":
        from copy import deepcopy

        return deepcopy(self)

    def blocks(self, pod_uid: str, container: str) -> Optional[List[Block]]:
        """The container's blocks, or ``None`` when it has none in the state."""
        return ((self.assignments or {}).get(pod_uid) or {}).get(container)

    def set_blocks(self, pod_uid: str, container: str, blocks: List[Block]) -> None:
        if self.assignments is None:
            self.assignments = {}
        self.assignments.setdefault(pod_uid, {})[container] = list(blocks)

    def delete(self, pod_uid: str, container: str) -> None:
        pod = (self.assignments or {}).get(pod_uid)
        if pod is None:
            return
        pod.pop(container, None)
        if not pod:
            del self.assignments[pod_uid]


# -- conversion from/to the JSON forms (checkpoint: bytes; vectors/CLI: quantities) ----------

def to_bytes(value: Any, where: str = "size") -> int:
    """A byte count from an integer or a quantity string; ``InputError`` naming ``where``."""
    if isinstance(value, bool):
        raise InputError(f"{where}: expected a size, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        q = Quantity.parse(value)
        if q.amount.denominator != 1:
            raise InputError(f"{where}: {value!r} is not a whole number of bytes")
        return q.value()
    raise InputError(f"{where}: expected a size, got {type(value).__name__}")


def _ints(raw: Any, where: str) -> Optional[List[int]]:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in raw):
        raise InputError(f"{where}: expected a list of NUMA node ids")
    return list(raw)


_TABLE_KEYS = (("total", "total"), ("system_reserved", "systemReserved"), ("allocatable", "allocatable"),
               ("reserved", "reserved"), ("free", "free"))


def machine_state_from_dict(raw: Optional[Mapping], where: str = "machineState") -> Optional[NUMANodeMap]:
    """Parse ``{"<numa>": {"numberOfAssignments", "memoryMap", "cells"}}``."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected a map of NUMA node -> state")
    out: NUMANodeMap = {}
    for key, node in raw.items():
        try:
            nid = int(key)
        except (TypeError, ValueError):
            raise InputError(f"{where}: NUMA node id {key!r} is not an integer") from None
        if not isinstance(node, Mapping):
            raise InputError(f"{where}.{key}: expected a map")
        mm_raw = node.get("memoryMap")
        memory_map: Optional[Dict[str, MemoryTable]] = None
        if mm_raw is not None:
            if not isinstance(mm_raw, Mapping):
                raise InputError(f"{where}.{key}.memoryMap: expected a map")
            memory_map = {}
            for res, t in mm_raw.items():
                if t is None:
                    continue
                if not isinstance(t, Mapping):
                    raise InputError(f"{where}.{key}.memoryMap.{res}: expected a map")
                vals = {attr: to_bytes(t.get(js, 0), f"{where}.{key}.memoryMap.{res}.{js}") for attr, js in _TABLE_KEYS}
                memory_map[str(res)] = MemoryTable(**vals)
        count = node.get("numberOfAssignments", 0)
        if isinstance(count, bool) or not isinstance(count, int):
            raise InputError(f"{where}.{key}.numberOfAssignments: expected an integer")
        out[nid] = NUMANodeState(count, memory_map, _ints(node.get("cells"), f"{where}.{key}.cells"))
    return out


def assignments_from_dict(raw: Optional[Mapping], where: str = "entries") -> Optional[Assignments]:
    """Parse ``{podUID: {container: [{"numaAffinity", "type", "size"}]}}``."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected a map of pod UID -> containers")
    out: Assignments = {}
    for uid, conts in raw.items():
        if not isinstance(conts, Mapping):
            raise InputError(f"{where}.{uid}: expected a map of container -> blocks")
        out[str(uid)] = {}
        for name, blocks in conts.items():
            if not isinstance(blocks, list):
                raise InputError(f"{where}.{uid}.{name}: expected a list of blocks")
            parsed = []
            for i, b in enumerate(blocks):
                w = f"{where}.{uid}.{name}[{i}]"
                if not isinstance(b, Mapping):
                    raise InputError(f"{w}: expected a map")
                aff = _ints(b.get("numaAffinity"), f"{w}.numaAffinity")
                parsed.append(Block(None if aff is None else tuple(aff), str(b.get("type", "")),
                                    to_bytes(b.get("size", 0), f"{w}.size")))
            out[str(uid)][str(name)] = parsed
    return out


def _size_out(n: int, quantities: bool):
    return str(Quantity(n, BINARY_SI)) if quantities else n


def machine_state_to_dict(ms: Optional[NUMANodeMap], quantities: bool = False) -> Optional[dict]:
    """The JSON form; sizes as byte integers, or as quantity strings when ``quantities``."""
    if ms is None:
        return None
    out = {}
    for nid in sorted(ms):
        node = ms[nid]
        mm = None
        if node.memory_map is not None:
            mm = {res: {js: _size_out(getattr(t, attr), quantities) for attr, js in _TABLE_KEYS}
                  for res, t in sorted(node.memory_map.items())}
        out[str(nid)] = {"numberOfAssignments": node.number_of_assignments, "memoryMap": mm,
                         "cells": None if node.cells is None else list(node.cells)}
    return out


def assignments_to_dict(a: Optional[Assignments], quantities: bool = False) -> Optional[dict]:
    if a is None:
        return None
    return {uid: {name: [{"numaAffinity": None if b.numa_affinity is None else list(b.numa_affinity),
                          "type": b.type, "size": _size_out(b.size, quantities)} for b in blocks]
                  for name, blocks in sorted(conts.items())}
            for uid, conts in sorted(a.items())}


# -- comparison as the kubelet does it (validateState / tests) --------------------------------

def machine_state_differences(ms1: Optional[NUMANodeMap], ms2: Optional[NUMANodeMap]) -> List[str]:
    """Why two machine states differ by the kubelet's rules (empty when they are equal).

    Totals, system-reserved and allocatable must match per node and resource;
    free and reserved are compared as sums over the node's group (``cells``),
    since a multi-NUMA block may be charged to its nodes in any split.
    """
    ms1, ms2 = ms1 or {}, ms2 or {}
    if set(ms1) != set(ms2):
        return [f"NUMA nodes {sorted(ms1)} != {sorted(ms2)}"]
    out: List[str] = []
    for nid in sorted(ms1):
        n1, n2 = ms1[nid], ms2[nid]
        if n1.number_of_assignments != n2.number_of_assignments:
            out.append(f"node {nid}: {n1.number_of_assignments} assignments, expected {n2.number_of_assignments}")
            continue
        if sorted(n1.cells or []) != sorted(n2.cells or []):
            out.append(f"node {nid}: group {sorted(n1.cells or [])}, expected {sorted(n2.cells or [])}")
            continue
        m1, m2 = n1.memory_map or {}, n2.memory_map or {}
        if set(m1) != set(m2):
            out.append(f"node {nid}: resources {sorted(m1)}, expected {sorted(m2)}")
            continue
        for res in sorted(m1):
            t1, t2 = m1[res], m2[res]
            for attr in ("total", "system_reserved", "allocatable"):
                if getattr(t1, attr) != getattr(t2, attr):
                    out.append(f"node {nid} {res}: {attr} {getattr(t1, attr)}, expected {getattr(t2, attr)}")
            for attr in ("free", "reserved"):
                s1 = sum(_table_attr(ms1, c, res, attr) for c in (n1.cells or []))
                s2 = sum(_table_attr(ms2, c, res, attr) for c in (n1.cells or []))
                if s1 != s2:
                    out.append(f"node {nid} {res}: {attr} over group {sorted(n1.cells or [])} {s1}, expected {s2}")
    return out


def _table_attr(ms: NUMANodeMap, nid: int, res: str, attr: str) -> int:
    node = ms.get(nid)
    table = (node.memory_map or {}).get(res) if node else None
    return getattr(table, attr) if table else 0


def machine_states_equal(ms1: Optional[NUMANodeMap], ms2: Optional[NUMANodeMap]) -> bool:
    """Whether the kubelet would call the two machine states equal."""
    return not machine_state_differences(ms1, ms2)


def blocks_equal(b1: List[Block], b2: List[Block]) -> bool:
    """Same blocks in any order (the kubelet builds them from a map, so order is not part of the contract)."""
    key = lambda b: (b.type, b.numa_affinity or (), b.size)  # noqa: E731
    return sorted(b1, key=key) == sorted(b2, key=key)


def assignments_equal(a1: Optional[Assignments], a2: Optional[Assignments]) -> bool:
    a1, a2 = a1 or {}, a2 or {}
    if set(a1) != set(a2):
        return False
    for uid in a1:
        if set(a1[uid]) != set(a2[uid]):
            return False
        if not all(blocks_equal(a1[uid][c], a2[uid][c]) for c in a1[uid]):
            return False
    return True
