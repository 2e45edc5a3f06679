"""The Memory Manager as a Topology Manager hint provider: static policy + its current state.

>>> mm = MemoryManager.from_machine([NodeInfo(0, 4 << 30), NodeInfo(1, 4 << 30)], "0:memory=1Gi")
>>> pod = Pod.from_dict({"name": "p", "containers": [{"name": "c",
...     "requests": {"cpu": "1", "memory": "5Gi"}, "limits": {"cpu": "1", "memory": "5Gi"}}]})
>>> [h.to_json() for h in mm.hints(pod, pod.containers[0])["memory"]]
[{'numa': [0, 1], 'preferred': True}]
>>> [(b.numa_affinity, b.size >> 30) for b in mm.allocate(pod, pod.containers[0])]
[((0, 1), 5)]

``hints``/``pod_hints`` speak :class:`pynuma.policy.topologymanager.hints.HintProvider`;
``allocate`` takes the merged :class:`TopologyHint` and returns the blocks the
container gets.  No I/O here: :mod:`pynuma.state.memory_checkpoint` saves and restores the
state as the kubelet's ``memory_manager_state``; :mod:`pynuma.state.machine` reads the machine.
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Union

from ...pod import Container, Pod
from ..topologymanager.hints import ProviderHints, TopologyHint
from .requests import Hint, NodeInfo
from .reserved import MemoryReservation, parse_reserved_memory, system_reserved_memory
from .state import Block, MemoryState
from .static_policy import StaticPolicy

RESOURCE_PREFIXES = ("memory", "hugepages-")


def machine_from_topology(topology) -> List[NodeInfo]:
    """Per-NUMA memory and hugepage pools of a discovered :class:`pynuma.model.Topology`."""
    out = []
    for node in topology.numa_nodes:
        pools = tuple((int(kb), int(p.total)) for kb, p in sorted((node.hugepages or {}).items()))
        out.append(NodeInfo(int(node.id), int(node.memory_total or 0), pools))
    return out


def machine_from_topology_json(data: Mapping) -> List[NodeInfo]:
    """Per-NUMA memory of a saved ``pynuma topology --json`` document (``numa_nodes`` with ``memory_bytes``)."""
    from ...errors import InputError

    nodes = data.get("numa_nodes") if isinstance(data, Mapping) else None
    if not isinstance(nodes, list):
        raise InputError("topology JSON has no numa_nodes list")
    out = []
    for i, n in enumerate(nodes):
        try:
            pools = tuple(sorted((int(kb), int(p.get("total") or 0)) for kb, p in (n.get("hugepages") or {}).items()))
            out.append(NodeInfo(int(n["id"]), int(n.get("memory_bytes") or 0), pools))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(f"topology JSON numa_nodes[{i}]: expected id, memory_bytes and hugepages") from None
    return out


def _to_topology_hints(hints: Optional[Dict[str, List[Hint]]]) -> ProviderHints:
    if hints is None:
        return None
    return {res: [TopologyHint.of(list(h.numa), h.preferred) for h in lst] for res, lst in hints.items()}


def _from_topology_hint(hint: Optional[TopologyHint]) -> Optional[Hint]:
    if hint is None:
        return None
    numa = hint.numa_affinity
    return Hint(None if numa is None else tuple(sorted(numa)), bool(hint.preferred))


class MemoryManager:
    """Static Memory Manager bound to one machine and one state (kept across calls)."""

    def __init__(self, policy: StaticPolicy, state: Optional[MemoryState] = None) -> None:
        self.policy = policy
        self.state = policy.start(state or MemoryState())

    @classmethod
    def from_machine(cls, machine: Sequence[NodeInfo],
                     reserved_memory: Union[str, Sequence[MemoryReservation]],
                     node_allocatable_reservation: Optional[Mapping[str, object]] = None,
                     state: Optional[MemoryState] = None) -> "MemoryManager":
        """Build from NUMA nodes and ``--reserved-memory`` (flag text or parsed reservations).

        With ``node_allocatable_reservation`` the reservations must add up to it
        per memory type, as the kubelet checks.
        """
        if isinstance(reserved_memory, str):
            reserved_memory = parse_reserved_memory(reserved_memory)
        reserved = system_reserved_memory([n.id for n in machine], node_allocatable_reservation, reserved_memory)
        return cls(StaticPolicy(machine, reserved), state)

    @property
    def name(self) -> str:
        return self.policy.name

    # -- HintProvider ---------------------------------------------------------------------
    def hints(self, pod: Pod, container: Container) -> ProviderHints:
        """Container-scope hints per memory resource (``None`` = no preference)."""
        return _to_topology_hints(self.policy.topology_hints(self.state, pod, container))

    def pod_hints(self, pod: Pod) -> ProviderHints:
        """Pod-scope hints per memory resource (``None`` = no preference)."""
        return _to_topology_hints(self.policy.pod_topology_hints(self.state, pod))

    # -- allocation -------------------------------------------------------------------------
    def allocate(self, pod: Pod, container: Container, hint: Optional[TopologyHint] = None) -> List[Block]:
        """Reserve the container's memory under ``hint``; its blocks (``[]`` when not Guaranteed)."""
        self.state = self.policy.allocate(self.state, pod, container, _from_topology_hint(hint))
        return list(self.state.blocks(pod.uid, container.name) or [])

    def remove(self, pod_uid: str, container_name: str) -> None:
        self.state = self.policy.remove_container(self.state, pod_uid, container_name)

    def blocks(self, pod_uid: str, container_name: str) -> List[Block]:
        return list(self.state.blocks(pod_uid, container_name) or [])
