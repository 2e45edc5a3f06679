"""``NodeStatus``: a node's capacity, allocatable, conditions, system info and addresses, kubelet-shaped.

>>> status = build_status(fs, topology, config, "node-1", conditions, now)   # doctest: +SKIP
>>> status.to_node()["status"]["allocatable"]["cpu"]                          # doctest: +SKIP
'2'

``to_node()`` is the ``v1`` Node object with its ``status``; per-NUMA CPUs,
memory and hugepages, which ``v1.NodeStatus`` has no field for, ride in the
``numa.pynuma.io/nodes`` annotation (JSON).  ``content()`` is what a
publisher compares to decide whether the status changed: everything but
heartbeat times, as the kubelet's ``nodeStatusHasChanged``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Sequence, Tuple

from ..fsroot import FsRoot
from ..quantity import Quantity
from .capacity import INTERNAL, discover_capacity
from .conditions import NodeCondition
from .nodeinfo import NodeSystemInfo, node_addresses, read_node_info

NUMA_ANNOTATION = "numa.pynuma.io/nodes"
HUGEPAGES_PREFIX = "hugepages-"


@dataclass(frozen=True)
class NumaNodeStatus:
    """One NUMA node: its CPUs, memory bytes and hugepages (resource name -> bytes)."""

    id: int
    cpus: str
    cpu_count: int
    memory_bytes: int
    hugepages: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"id": self.id, "cpus": self.cpus, "cpuCount": self.cpu_count, "memoryBytes": self.memory_bytes,
                "hugepages": dict(self.hugepages)}


@dataclass(frozen=True)
class NodeStatus:
    """Everything the agent reports about the node at ``time`` (seconds since the epoch)."""

    node_name: str
    capacity: Mapping[str, Quantity]
    allocatable: Mapping[str, Quantity]
    conditions: Tuple[NodeCondition, ...]
    node_info: NodeSystemInfo
    addresses: Tuple[Tuple[str, str], ...]
    numa_nodes: Tuple[NumaNodeStatus, ...]
    time: float

    def condition(self, kind: str) -> Optional[NodeCondition]:
        """The condition of type ``kind`` (``Ready``, ``MemoryPressure`` ...), or ``None``."""
        return next((c for c in self.conditions if c.type == kind), None)

    @property
    def ready(self) -> bool:
        cond = self.condition("Ready")
        return cond is not None and cond.status == "True"

    def content(self) -> tuple:
        """The status without heartbeat times: equal contents mean nothing to republish."""
        return (self.node_name, tuple(sorted((k, str(v)) for k, v in self.capacity.items())),
                tuple(sorted((k, str(v)) for k, v in self.allocatable.items())),
                tuple(c.content() for c in self.conditions), self.node_info, self.addresses, self.numa_nodes)

    def to_node(self) -> dict:
        """The ``v1`` Node object carrying this status."""
        labels = {"kubernetes.io/hostname": self.node_name, "kubernetes.io/os": self.node_info.operating_system}
        if self.node_info.architecture:
            labels["kubernetes.io/arch"] = self.node_info.architecture
        numa = json.dumps([n.to_json() for n in self.numa_nodes], separators=(",", ":"), sort_keys=True)
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": self.node_name, "labels": labels, "annotations": {NUMA_ANNOTATION: numa}},
            "status": {
                "capacity": {k: str(v) for k, v in self.capacity.items()},
                "allocatable": {k: str(v) for k, v in self.allocatable.items()},
                "conditions": [c.to_k8s() for c in self.conditions],
                "addresses": [{"type": t, "address": a} for t, a in self.addresses],
                "nodeInfo": self.node_info.to_k8s(),
            },
        }


def numa_nodes_of(topology) -> Tuple[NumaNodeStatus, ...]:
    """Per-NUMA CPUs, memory and hugepage pools of a discovered topology."""
    out = []
    for n in topology.numa_nodes:
        pages = {HUGEPAGES_PREFIX + str(Quantity(kb * 1024, "BinarySI")): int(p.total) * kb * 1024
                 for kb, p in sorted((n.hugepages or {}).items())}
        out.append(NumaNodeStatus(int(n.id), n.cpus.to_cpulist(), len(n.cpus), int(n.memory_total or 0), pages))
    return tuple(out)


def node_capacity(fs: FsRoot, topology, config) -> Dict[str, Quantity]:
    """What the kubelet reports as capacity; a dump without ``/proc/meminfo`` or hugepage pools adds up its NUMA nodes."""
    cap = discover_capacity(fs, config.kubelet_root, config.max_pods)
    if "cpu" not in cap:
        cap["cpu"] = Quantity(len(topology.online_cpus))
    node_memory = sum(int(n.memory_total or 0) for n in topology.numa_nodes)
    if "memory" not in cap and node_memory:
        cap["memory"] = Quantity(node_memory, "BinarySI")
    if not any(k.startswith(HUGEPAGES_PREFIX) for k in cap):
        for numa in numa_nodes_of(topology):
            for name, size in numa.hugepages.items():
                cap[name] = Quantity((cap[name].amount if name in cap else 0) + size, "BinarySI")
    return cap


def node_allocatable(capacity: Mapping[str, Quantity], config) -> Dict[str, Quantity]:
    """``status.allocatable``: capacity minus kube/system reservations and hard eviction thresholds.

    Raises :class:`~pynuma.errors.InputError` with the kubelet's message when
    a reservation exceeds capacity (the kubelet refuses to start then).
    """
    from ..policy.allocatable import node_status_allocatable, validate_node_allocatable, validate_reserved

    validate_reserved(config.reserved("kube"), "kubeReserved")
    validate_reserved(config.reserved("system"), "systemReserved")
    cpu = capacity.get("cpu")
    kube, system = config.effective_reserved(int(cpu.amount) if cpu is not None else None)
    hard = config.hard_thresholds()
    validate_node_allocatable(capacity, kube, system, hard)
    shown = {k: v for k, v in capacity.items() if k not in INTERNAL}
    return node_status_allocatable(shown, kube, system, hard)


def build_status(fs: FsRoot, topology, config, node_name: str, conditions: Sequence[NodeCondition],
                 now: float, kubelet_version: str = "") -> NodeStatus:
    """Read what changes (capacity, system info, addresses) and assemble the status at ``now``."""
    capacity = node_capacity(fs, topology, config)
    allocatable = node_allocatable(capacity, config)
    shown = {k: v for k, v in capacity.items() if k not in INTERNAL}
    return NodeStatus(node_name, shown, allocatable, tuple(conditions),
                      read_node_info(fs, topology.arch, kubelet_version), tuple(node_addresses(fs)),
                      numa_nodes_of(topology), now)
