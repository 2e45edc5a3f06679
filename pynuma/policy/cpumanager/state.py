"""The CPU Manager's in-memory state: the shared (default) pool and exclusive assignments.

This is what ``cpu_manager_state`` stores (see :mod:`pynuma.state.cpu_checkpoint`);
policies read and update it, nothing here does I/O.

>>> s = CPUState(CPUSet.parse("0-3"), {"pod": {"c": CPUSet([4, 5])}})
>>> str(s.assigned()), str(s.get("pod", "c"))
('4-5', '4-5')
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional

from ...cpuset import CPUSet

Assignments = Dict[str, Dict[str, CPUSet]]


class CPUState:
    """Shared pool and exclusive assignments (what ``cpu_manager_state`` stores)."""

    __slots__ = ("default", "assignments")

    def __init__(self, default: Optional[CPUSet] = None,
                 assignments: Optional[Mapping[str, Mapping[str, CPUSet]]] = None) -> None:
        self.default = default if default is not None else CPUSet()
        self.assignments: Assignments = {p: dict(cs) for p, cs in (assignments or {}).items()}

    def get(self, pod_uid: str, container: str) -> Optional[CPUSet]:
        return self.assignments.get(pod_uid, {}).get(container)

    def set(self, pod_uid: str, container: str, cpus: CPUSet) -> None:
        self.assignments.setdefault(pod_uid, {})[container] = cpus

    def delete(self, pod_uid: str, container: str) -> None:
        pod = self.assignments.get(pod_uid)
        if pod is not None:
            pod.pop(container, None)
            if not pod:
                del self.assignments[pod_uid]

    def assigned(self) -> CPUSet:
        """Union of every exclusive assignment."""
        bits = 0
        for cs in self.assignments.values():
            for s in cs.values():
                bits |= s.bits
        return CPUSet.from_bits(bits)

    def copy(self) -> "CPUState":
        return CPUState(self.default, self.assignments)

    def __repr__(self) -> str:
        return f"CPUState(default={self.default}, assignments={self.assignments})"
