"""The CPU Manager's view of a machine: CPU id -> socket, NUMA node, core, uncore cache.

This is the kubelet's ``CPUTopology``/``CPUDetails``: a frozen value the
allocation, hint and policy code read.  Every unit (socket, node, core,
uncore cache) is kept as a bitmap of its CPUs so the allocator works with
integer masks, never with per-CPU loops.

The *declared* counts (``num_cpus``, ``num_cores``, ...) are kept apart from
the CPU map because the kubelet's rules use them (CPUs per core =
``num_cpus // num_cores``...), and hand-written topologies can declare
counts that disagree with the map.

>>> t = CPUTopology.from_cpus([(0, 0, 0, 0, 0), (1, 0, 0, 0, 0)])
>>> t.cpus_per_core(), str(t.cpus())
(2, '0-1')
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ...cpuset import CPUSet

# (id, socket, node, core, uncore)
CPUInfoTuple = Tuple[int, int, int, int, int]


def popcount(bits: int) -> int:
    """Number of 1-bits of a non-negative int."""
    return bits.bit_count()


def bit_ids(bits: int) -> List[int]:
    """Positions of the 1-bits of ``bits``, ascending."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


class CPUInfo:
    """Where one logical CPU sits: socket (package), NUMA node, core id, uncore-cache id."""

    __slots__ = ("id", "socket", "node", "core", "uncore")

    def __init__(self, id: int, socket: int, node: int, core: int, uncore: int) -> None:
        self.id, self.socket, self.node, self.core, self.uncore = id, socket, node, core, uncore

    def __repr__(self) -> str:
        return (f"CPUInfo(id={self.id}, socket={self.socket}, node={self.node}, "
                f"core={self.core}, uncore={self.uncore})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CPUInfo) and self._t() == other._t()

    def __hash__(self) -> int:
        return hash(self._t())

    def _t(self) -> CPUInfoTuple:
        return (self.id, self.socket, self.node, self.core, self.uncore)


UNKNOWN_PACKAGE = -1  # what sysfs itself writes in physical_package_id when the platform does not say


def cpu_info(cpu: int, package: Optional[int], node: Optional[int], core: int,
             uncore: Optional[int]) -> CPUInfo:
    """A discovered CPU as the CPU Manager sees it; ``None`` stands for "not reported".

    The one place the fallbacks live, so a discovered machine and the same
    machine loaded from its saved JSON give the same topology: an unknown
    package is sysfs's own ``-1`` (POWER, s390 and PS3 report no socket), a
    CPU in no NUMA node belongs to node 0 (cAdvisor's single fake node), and
    an unknown uncore cache falls back to the package, as cAdvisor does.
    """
    sock = UNKNOWN_PACKAGE if package is None else package
    return CPUInfo(cpu, sock, 0 if node is None else node, core, sock if uncore is None else uncore)


def _group(details: Mapping[int, CPUInfo], attr: str) -> Dict[int, int]:
    out: Dict[int, int] = {}
    for cpu, info in details.items():
        key = getattr(info, attr)
        out[key] = out.get(key, 0) | (1 << cpu)
    return out


class CPUTopology:
    """CPU map plus declared counts, with per-unit CPU bitmaps precomputed.

    ``machine_numa_nodes`` lists every NUMA node of the machine (memory-only
    ones too), which the Topology Manager needs; ``distances`` is a matrix
    aligned with it, or ``None`` when the machine reports none.
    """

    __slots__ = ("details", "num_cpus", "num_cores", "num_sockets", "num_numa_nodes",
                 "num_uncore_caches", "machine_numa_nodes", "distances", "all_bits",
                 "node_bits", "socket_bits", "core_bits", "uncore_bits", "socket_node_pairs",
                 "node_socket_pairs", "socket_cores", "node_cores", "node_uncores", "_frozen")

    def __init__(self, details: Mapping[int, CPUInfo], *, num_cpus: Optional[int] = None,
                 num_cores: Optional[int] = None, num_sockets: Optional[int] = None,
                 num_numa_nodes: Optional[int] = None, num_uncore_caches: Optional[int] = None,
                 machine_numa_nodes: Optional[Sequence[int]] = None,
                 distances: Optional[Sequence[Sequence[int]]] = None) -> None:
        s = object.__setattr__
        details = dict(sorted(details.items()))
        s(self, "details", details)
        s(self, "node_bits", _group(details, "node"))
        s(self, "socket_bits", _group(details, "socket"))
        s(self, "core_bits", _group(details, "core"))
        s(self, "uncore_bits", _group(details, "uncore"))
        all_bits = 0
        for cpu in details:
            all_bits |= 1 << cpu
        s(self, "all_bits", all_bits)
        derived = {"num_cpus": len(details), "num_cores": len(self.core_bits),
                   "num_sockets": len(self.socket_bits), "num_numa_nodes": len(self.node_bits),
                   "num_uncore_caches": len(self.uncore_bits)}
        given = {"num_cpus": num_cpus, "num_cores": num_cores, "num_sockets": num_sockets,
                 "num_numa_nodes": num_numa_nodes, "num_uncore_caches": num_uncore_caches}
        for key, value in derived.items():
            s(self, key, value if given[key] is None else int(given[key]))
        nodes = sorted(set(machine_numa_nodes or ()) | set(self.node_bits))
        s(self, "machine_numa_nodes", tuple(nodes))
        s(self, "distances", None if distances is None else tuple(tuple(r) for r in distances))
        # Pairwise intersections, sorted by id, so orderings never rescan CPUs.
        s(self, "node_socket_pairs", self._pairs(self.node_bits, self.socket_bits))
        s(self, "socket_node_pairs", self._pairs(self.socket_bits, self.node_bits))
        s(self, "socket_cores", self._pairs(self.socket_bits, self.core_bits))
        s(self, "node_cores", self._pairs(self.node_bits, self.core_bits))
        s(self, "node_uncores", self._pairs(self.node_bits, self.uncore_bits))
        s(self, "_frozen", True)

    @staticmethod
    def _pairs(outer: Dict[int, int], inner: Dict[int, int]) -> Dict[int, Tuple[Tuple[int, int], ...]]:
        """For each outer unit, the inner units meeting it: ``((inner_id, cpus_in_both), ...)``."""
        out = {}
        for oid, obits in outer.items():
            out[oid] = tuple((iid, ibits & obits) for iid, ibits in sorted(inner.items()) if ibits & obits)
        return out

    def __setattr__(self, name, value):
        raise AttributeError("CPUTopology is immutable")

    # -- construction -------------------------------------------------
    @classmethod
    def from_cpus(cls, cpus: Iterable[Sequence[int]], **declared) -> "CPUTopology":
        """From ``(id, socket, node, core, uncore)`` tuples; keyword counts override derived ones."""
        details = {}
        for c in cpus:
            cid, sock, node, core, unc = (int(x) for x in c)
            if cid in details:
                raise ValueError(f"CPU {cid} listed twice")
            details[cid] = CPUInfo(cid, sock, node, core, unc)
        return cls(details, **declared)

    @classmethod
    def from_topology(cls, topo) -> "CPUTopology":
        """From a discovered :class:`pynuma.model.Topology` (online CPUs only, true counts).

        As cAdvisor: the core is the machine-wide core index, the uncore id the
        CPU's last-level cache id, falling back to its socket id when unknown.
        """
        details = {}
        for c in topo.cpus:
            if not getattr(c, "online", True):
                continue
            details[c.id] = cpu_info(c.id, c.package, c.node, c.core, c.uncore_cache)
        nodes = [n.id for n in getattr(topo, "numa_nodes", ())]
        dist = getattr(topo, "distances", None)
        matrix = None
        if dist is not None and getattr(dist, "matrix", None):
            matrix = _align(list(dist.nodes), dist.matrix, sorted(set(nodes) | {i.node for i in details.values()}))
        return cls(details, machine_numa_nodes=nodes, distances=matrix)

    # -- declared ratios (the kubelet's CPUsPerCore & co) ---------------
    def cpus_per_core(self) -> int:
        return self.num_cpus // self.num_cores if self.num_cores else 0

    def cpus_per_socket(self) -> int:
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    def cpus_per_uncore(self) -> int:
        return self.num_cpus // self.num_uncore_caches if self.num_uncore_caches else 0

    def numa_first(self) -> bool:
        """NUMA nodes are the outer level (a node holds whole sockets) when sockets >= nodes."""
        return self.num_sockets >= self.num_numa_nodes

    # -- queries --------------------------------------------------------
    def cpus(self) -> CPUSet:
        return CPUSet.from_bits(self.all_bits)

    def numa_nodes(self) -> List[int]:
        """NUMA nodes that hold CPUs, ascending."""
        return sorted(self.node_bits)

    def sockets(self) -> List[int]:
        return sorted(self.socket_bits)

    def cpus_in_numa_nodes(self, *ids: int) -> CPUSet:
        return CPUSet.from_bits(self._union(self.node_bits, ids))

    def cpus_in_sockets(self, *ids: int) -> CPUSet:
        return CPUSet.from_bits(self._union(self.socket_bits, ids))

    def cpus_in_cores(self, *ids: int) -> CPUSet:
        return CPUSet.from_bits(self._union(self.core_bits, ids))

    def sockets_in_numa_nodes(self, *ids: int) -> List[int]:
        return sorted({sid for n in ids for sid, _ in self.node_socket_pairs.get(n, ())})

    def numa_nodes_in_sockets(self, *ids: int) -> List[int]:
        return sorted({nid for s in ids for nid, _ in self.socket_node_pairs.get(s, ())})

    def core_of(self, cpu: int) -> int:
        """Core id of ``cpu``; ``KeyError`` when the CPU is not in the topology."""
        return self.details[cpu].core

    def node_of(self, cpu: int) -> int:
        return self.details[cpu].node

    def siblings_bits(self, cpus_bits: int) -> int:
        """All hardware threads of the cores touched by ``cpus_bits`` (as a bitmap)."""
        out = 0
        for cpu in bit_ids(cpus_bits & self.all_bits):
            out |= self.core_bits[self.details[cpu].core]
        return out

    @staticmethod
    def _union(table: Dict[int, int], ids: Iterable[int]) -> int:
        bits = 0
        for i in ids:
            bits |= table.get(i, 0)
        return bits

    def distance(self, a: int, b: int) -> Optional[int]:
        """NUMA distance between nodes ``a`` and ``b`` (``None`` without a matrix)."""
        if self.distances is None:
            return None
        idx = {n: i for i, n in enumerate(self.machine_numa_nodes)}
        return self.distances[idx[a]][idx[b]]

    def distance_map(self) -> Optional[Dict[int, Dict[int, int]]]:
        """``{i: {j: distance}}`` over ``machine_numa_nodes`` (``None`` without a matrix)."""
        if self.distances is None:
            return None
        nodes = self.machine_numa_nodes
        return {a: {b: self.distances[i][j] for j, b in enumerate(nodes)} for i, a in enumerate(nodes)}

    def declared(self) -> Dict[str, int]:
        return {"num_cpus": self.num_cpus, "num_cores": self.num_cores, "num_sockets": self.num_sockets,
                "num_numa_nodes": self.num_numa_nodes, "num_uncore_caches": self.num_uncore_caches}

    def to_dict(self) -> Dict[str, object]:
        """The minimal ``topologies.json`` form (loadable by ``load_cpu_topology``)."""
        return {
            "declared": self.declared(),
            "cpus": [{"id": i.id, "package": i.socket, "node": i.node, "core": i.core, "uncore_cache": i.uncore}
                     for i in self.details.values()],
            "numa_nodes": list(self.machine_numa_nodes),
            "distances": None if self.distances is None else [list(r) for r in self.distances],
        }

    def __repr__(self) -> str:
        return (f"CPUTopology(cpus={self.cpus()}, sockets={self.num_sockets}, "
                f"numa_nodes={self.num_numa_nodes}, cores={self.num_cores})")


def _align(src_nodes: List[int], matrix, nodes: List[int]) -> Optional[List[List[int]]]:
    """Reorder a distance matrix given for ``src_nodes`` onto ``nodes``; None when it does not cover them."""
    pos = {n: i for i, n in enumerate(src_nodes)}
    if any(n not in pos for n in nodes):
        return None
    try:
        return [[int(matrix[pos[a]][pos[b]]) for b in nodes] for a in nodes]
    except (IndexError, TypeError, ValueError):
        return None
