"""The NodeResourceTopology (``topology.node.k8s.io/v1alpha2``) object of a node.

>>> nrt = build_nrt(pynuma.discover(), "node-1", "single-numa-node", "container")   # doctest: +SKIP
>>> [z["name"] for z in nrt["zones"]]                                               # doctest: +SKIP
['node-0', 'node-1']

Conventions of the topology-aware scheduler plugin and NFD's
topology-updater: one zone per NUMA node (``node-<id>``, type ``Node``);
``costs`` = the distance from the zone to every zone; resources ``cpu``,
``memory`` and ``hugepages-<size>`` with ``capacity``, ``allocatable``
(capacity minus what is reserved for the system: reserved CPUs,
``reservedMemory``; memory also minus the node's hugepage pools, as the
Memory Manager counts) and ``available`` (allocatable minus what containers
hold exclusively: CPU Manager assignments, Memory Manager blocks);
object attributes ``topologyManagerPolicy`` and ``topologyManagerScope``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional

from ..cpuset import CPUSet
from ..quantity import Quantity

API_VERSION = "topology.node.k8s.io/v1alpha2"
KIND = "NodeResourceTopology"
ZONE_TYPE = "Node"
# the deprecated ``topologyPolicies`` entry, as node-feature-discovery writes it: policy and scope together
_LEGACY_POLICY = {"single-numa-node": "SingleNUMANode", "best-effort": "BestEffort", "restricted": "Restricted"}


def zone_name(node_id: int) -> str:
    return f"node-{node_id}"


def zone_cpus(topology, node_id: int) -> CPUSet:
    """Online CPUs of a zone: each CPU counts in the one node discovery placed it in (a buggy SLIT or
    overlapping cpulists never count a CPU twice)."""
    online = topology.online_cpus
    return CPUSet([c.id for c in topology.cpus if c.node == node_id and c.id in online])


def legacy_policy(policy: str, scope: str) -> str:
    """The deprecated ``topologyPolicies`` entry: ``RestrictedPodLevel``, ``BestEffortContainerLevel``, ... or ``None``."""
    name = _LEGACY_POLICY.get(policy)
    if name is None:
        return "None"
    return name + ("PodLevel" if scope == "pod" else "ContainerLevel")


@dataclass(frozen=True)
class Holdings:
    """What the system keeps and what containers hold exclusively.

    ``reserved_memory``: NUMA id -> resource -> bytes (``reservedMemory``);
    ``memory_tables``: the Memory Manager's machine state (NUMA id ->
    NUMANodeState), which wins for memory and hugepages when present.
    """

    reserved_cpus: CPUSet = CPUSet()
    exclusive_cpus: CPUSet = CPUSet()
    reserved_memory: Mapping[int, Mapping[str, int]] = field(default_factory=dict)
    memory_tables: Optional[Mapping] = None


def _resource(name: str, capacity: int, allocatable: int, available: int, binary: bool) -> dict:
    fmt = "BinarySI" if binary else "DecimalSI"
    allocatable = max(min(allocatable, capacity), 0)
    available = max(min(available, allocatable), 0)
    return {"name": name, "capacity": str(Quantity(capacity, fmt)), "allocatable": str(Quantity(allocatable, fmt)),
            "available": str(Quantity(available, fmt))}


def _memory_resources(node, holdings: Holdings) -> List[dict]:
    pools = {"memory": int(node.memory_total or 0)}
    for kb, p in sorted((node.hugepages or {}).items()):
        pools["hugepages-" + str(Quantity(kb * 1024, "BinarySI"))] = int(p.total) * kb * 1024
    reserved = holdings.reserved_memory.get(node.id, {})
    tables = None
    if holdings.memory_tables is not None and node.id in holdings.memory_tables:
        tables = holdings.memory_tables[node.id].memory_map or {}
    # the Memory Manager's accounting: a node's hugepage pools are not part of its "memory"
    huge = sum(size for name, size in pools.items() if name != "memory")
    out = []
    for name, capacity in pools.items():
        table = (tables or {}).get(name)
        if table is not None:
            out.append(_resource(name, capacity, table.allocatable, table.free, True))
        else:
            allocatable = capacity - int(reserved.get(name, 0)) - (huge if name == "memory" else 0)
            out.append(_resource(name, capacity, allocatable, allocatable, True))
    return out


def build_nrt(topology, node_name: str, policy: str = "none", scope: str = "container",
              holdings: Optional[Holdings] = None) -> dict:
    """The NodeResourceTopology object of ``topology`` (a discovered :class:`~pynuma.model.Topology`)."""
    holdings = holdings or Holdings()
    d = topology.distances
    zones = []
    for node in topology.numa_nodes:
        cpus = zone_cpus(topology, node.id)
        resources = []
        if len(cpus):
            allocatable = cpus - holdings.reserved_cpus
            available = allocatable - holdings.exclusive_cpus
            resources.append(_resource("cpu", len(cpus), len(allocatable), len(available), False))
        resources += _memory_resources(node, holdings)
        zone: Dict[str, object] = {"name": zone_name(node.id), "type": ZONE_TYPE, "resources": resources}
        if d is not None and node.id in d.nodes:
            zone["costs"] = [{"name": zone_name(other), "value": int(d.between(node.id, other))}
                             for other in d.nodes]
        zones.append(zone)
    return {
        "apiVersion": API_VERSION, "kind": KIND,
        "metadata": {"name": node_name},
        "topologyPolicies": [legacy_policy(policy, scope)],
        "attributes": [{"name": "topologyManagerPolicy", "value": policy},
                       {"name": "topologyManagerScope", "value": scope}],
        "zones": zones,
    }


def reserved_memory_by_node(reservations) -> Dict[int, Dict[str, int]]:
    """``reservedMemory`` entries as NUMA id -> resource -> bytes."""
    out: Dict[int, Dict[str, int]] = {}
    for r in reservations:
        for name, q in r.limits.items():
            out.setdefault(r.numa_node, {})[name] = out.get(r.numa_node, {}).get(name, 0) + q.value()
    return out


def holdings_from_state_dir(state_dir: str, topology, config=None) -> Holdings:
    """Holdings from the kubelet checkpoints in ``state_dir`` and (optionally) a kubelet configuration.

    Exclusive CPUs come from ``cpu_manager_state`` whatever its policy;
    memory from ``memory_manager_state`` when present.  Reserved CPUs and
    memory come from ``config`` (``reservedSystemCPUs`` or the static
    policy's own pick, ``reservedMemory``).
    """
    import os

    from ..state.cpu_checkpoint import read_file
    from ..state.memory_checkpoint import read_checkpoint

    restored = read_file(os.path.join(state_dir, "cpu_manager_state"), missing_ok=True)
    exclusive = CPUSet()
    for containers in restored.assignments.values():
        for cpus in containers.values():
            exclusive = exclusive | cpus
    tables = None
    mem_path = os.path.join(state_dir, "memory_manager_state")
    if os.path.exists(mem_path):
        tables = read_checkpoint(mem_path).state.machine_state or None
    reserved_cpus, reserved_mem = CPUSet(), {}
    if config is not None:
        from ..agent.admission import cpu_policy_for

        reserved_cpus = getattr(cpu_policy_for(topology, config), "reserved", CPUSet())
        reserved_mem = reserved_memory_by_node(config.reserved_memory)
    return Holdings(reserved_cpus, exclusive, reserved_mem, tables)
