"""The frozen value types of a discovered machine: CPUs, caches, NUMA nodes, distances.

``pynuma.discover()`` builds a :class:`Topology` once; every later API takes
it as plain data.  ``Topology.to_dict()`` is the JSON form that
``pynuma topology --json`` prints and ``--save`` writes, and
``Topology.from_dict()`` reads it back into an equal value::

    topo = pynuma.discover()
    same = Topology.from_dict(json.loads(json.dumps(topo.to_dict())))
    assert same == topo
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

    from .model_devices import NetInterface, PciDevice

from ._record import Record
from .cpuset import CPUSet

#: ``types.MappingProxyType`` (a read-only view of a dict), without importing ``types``
MappingProxyType = type(type.__dict__)

FORMAT = "pynuma.topology/1"


class CPU(Record):
    """One logical CPU.

    ``package`` is the raw ``physical_package_id`` (may be -1 or repeat across
    packages), ``core_id`` the raw sysfs ``core_id``, ``core`` a machine-wide
    unique core index (cores numbered from 0 in order of their lowest CPU),
    ``node`` the NUMA node id (``None`` when no reported node holds the CPU),
    ``uncore_cache`` the id of the CPU's last-level (L3) cache group or ``None``.
    ``die``/``cluster`` are ``None`` when the kernel does not report them.
    """

    id: int
    online: bool
    package: "Optional[int]"
    die: "Optional[int]"
    cluster: "Optional[int]"
    core_id: "Optional[int]"
    core: int
    node: "Optional[int]"
    thread_siblings: "CPUSet"
    uncore_cache: "Optional[int]"


class Cache(Record):
    """One cache instance: level, ``Data``/``Instruction``/``Unified``, size, id and the CPUs sharing it."""

    level: int
    type: str
    size_bytes: "Optional[int]"
    id: "Optional[int]"
    cpus: "CPUSet"


class HugepagePool(Record):
    """Hugepages of one size (in kB) on one node or machine-wide.

    ``reserved`` is only known for the machine-wide pools (``resv_hugepages``); ``None`` per node.
    """

    size_kb: int
    total: int
    free: int
    surplus: int
    reserved: "Optional[int]" = None


class NumaNode(Record):
    """A NUMA node; CPU-less (CXL, HBM, GPU memory) and memory-less nodes are ordinary nodes.

    ``memory_total``/``memory_free`` are bytes; ``hugepages`` maps size in kB to
    a :class:`HugepagePool` (read-only mapping).
    """

    id: int
    cpus: "CPUSet"
    memory_total: int
    memory_free: int
    hugepages: "Mapping[int, HugepagePool]"
    has_cpu: bool
    has_memory: bool


class Package(Record):
    """A physical package (socket): its raw id (may be -1 or shared) and its reported CPUs."""

    id: int
    cpus: "CPUSet"


class Distances(Record):
    """NUMA distances: ``matrix[i][j]`` from ``nodes[i]`` to ``nodes[j]``; ``source`` is ``"slit"`` or ``"sysfs"``."""

    nodes: "Tuple[int, ...]"
    matrix: "Tuple[Tuple[int, ...], ...]"
    source: str

    def between(self, a: int, b: int) -> int:
        """Distance from node ``a`` to node ``b``."""
        return self.matrix[self.nodes.index(a)][self.nodes.index(b)]




class Topology(Record):
    """Everything discovery found about one machine (live host or dump), frozen."""

    arch: str
    possible_cpus: "CPUSet"
    present_cpus: "CPUSet"
    online_cpus: "CPUSet"
    offline_cpus: "CPUSet"
    isolated_cpus: "CPUSet"
    cpus: "Tuple[CPU, ...]"
    packages: "Tuple[Package, ...]"
    cores: int
    caches: "Tuple[Cache, ...]"
    numa_nodes: "Tuple[NumaNode, ...]"
    distances: "Optional[Distances]"
    devices: "Tuple[PciDevice, ...]" = ()
    net_interfaces: "Tuple[NetInterface, ...]" = ()
    warnings: "Tuple[str, ...]" = ()

    # lookup tables, built on first use
    __slots__ = ("_by_cpu", "_by_node")

    # -- lookups ---------------------------------------------------------
    def _index(self) -> None:
        object.__setattr__(self, "_by_cpu", {c.id: c for c in self.cpus})
        object.__setattr__(self, "_by_node", {n.id: n for n in self.numa_nodes})

    def cpu(self, cpu_id: int) -> "CPU":
        """The reported CPU ``cpu_id``; ``KeyError`` when it is not reported."""
        try:
            table = self._by_cpu
        except AttributeError:
            self._index()
            table = self._by_cpu
        return table[cpu_id]

    def node(self, node_id: int) -> "NumaNode":
        """The reported NUMA node ``node_id``; ``KeyError`` when it is not reported."""
        try:
            table = self._by_node
        except AttributeError:
            self._index()
            table = self._by_node
        return table[node_id]

    def node_of_cpu(self, cpu_id: int) -> "Optional[int]":
        """The NUMA node id holding CPU ``cpu_id`` (``None`` when in no reported node)."""
        return self.cpu(cpu_id).node

    @property
    def node_ids(self) -> "Tuple[int, ...]":
        return tuple(n.id for n in self.numa_nodes)

    # -- JSON form -------------------------------------------------------
    def to_dict(self) -> "Dict[str, Any]":
        """The JSON-ready form (the keys the shared checker reads, plus everything else)."""
        d = self.distances
        return {
            "format": FORMAT,
            "arch": self.arch,
            "possible_cpus": self.possible_cpus.to_cpulist(),
            "present_cpus": self.present_cpus.to_cpulist(),
            "online_cpus": self.online_cpus.to_cpulist(),
            "offline_cpus": self.offline_cpus.to_cpulist(),
            "isolated_cpus": self.isolated_cpus.to_cpulist(),
            "packages": [{"id": p.id, "cpus": p.cpus.to_cpulist()} for p in self.packages],
            "cores": self.cores,
            "numa_nodes": [_node_to_dict(n) for n in self.numa_nodes],
            "distances": None if d is None else {
                "nodes": list(d.nodes), "matrix": [list(r) for r in d.matrix], "source": d.source},
            "cpus": [_cpu_to_dict(c) for c in self.cpus],
            "caches": [{"level": c.level, "type": c.type, "size_bytes": c.size_bytes, "id": c.id,
                        "cpus": c.cpus.to_cpulist()} for c in self.caches],
            "devices": [_extra_to_dict(x) for x in self.devices],
            "net_interfaces": [_extra_to_dict(x) for x in self.net_interfaces],
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_dict(cls, data: "Mapping[str, Any]") -> "Topology":
        """Rebuild a topology from :meth:`to_dict` output; ``ValueError`` naming the bad field.

        The document is checked as discovery guarantees a machine: ids within what Linux can
        have, every CPU's node one of the NUMA nodes, distances square over exactly those nodes,
        counts and sizes non-negative integers.
        """
        try:
            return _from_dict(cls, data)
        except ValueError as err:
            raise ValueError(f"not a pynuma topology: {err}") from None
        except (TypeError, KeyError, AttributeError, OverflowError) as err:  # a check this reader lacks
            raise ValueError(f"not a pynuma topology: {type(err).__name__}: {err}") from None


def node_of_cpus(nodes: "Sequence[NumaNode]") -> "Dict[int, int]":
    """``{cpu: node id}``; a CPU claimed by several nodes goes to the first one listed (nodes go by id)."""
    out: Dict[int, int] = {}
    for node in nodes:
        for cpu in node.cpus:
            out.setdefault(cpu, node.id)
    return out


def uncore_of_cpus(caches: "Sequence[Cache]") -> "Dict[int, Optional[int]]":
    """``{cpu: id of its L3 cache group}``; the group's lowest CPU stands in for a missing ``id``."""
    out: Dict[int, Optional[int]] = {}
    for cache in caches:
        if cache.level != 3 or cache.type == "Instruction":
            continue
        gid = cache.id if cache.id is not None else cache.cpus.min()
        for cpu in cache.cpus:
            out.setdefault(cpu, gid)
    return out


def _node_to_dict(n: "NumaNode") -> "Dict[str, Any]":
    return {
        "id": n.id, "cpus": n.cpus.to_cpulist(), "memory_bytes": n.memory_total,
        "memory_free_bytes": n.memory_free, "has_cpu": n.has_cpu, "has_memory": n.has_memory,
        "hugepages": {str(size): {"total": p.total, "free": p.free, "surplus": p.surplus, "reserved": p.reserved}
                      for size, p in sorted(n.hugepages.items())},
    }


def _cpu_to_dict(c: "CPU") -> "Dict[str, Any]":
    return {"id": c.id, "online": c.online, "package": c.package, "die": c.die, "cluster": c.cluster,
            "core_id": c.core_id, "core": c.core, "node": c.node,
            "thread_siblings": c.thread_siblings.to_cpulist(), "uncore_cache": c.uncore_cache}


def _extra_to_dict(x):
    return x.to_dict() if hasattr(x, "to_dict") else x


def _load_devices(data: "Mapping[str, Any]") -> "Tuple[tuple, tuple]":
    """``(devices, net_interfaces)`` of a saved topology (their types are imported only when there are some)."""
    from ._docfields import items

    devices, links = items(data, "devices"), items(data, "net_interfaces")
    if not devices and not links:
        return (), ()
    from .model_devices import NetInterface, PciDevice

    return (tuple(PciDevice.from_dict(d, f"devices[{i}]") for i, d in enumerate(devices)),
            tuple(NetInterface.from_dict(n, f"net_interfaces[{i}]") for i, n in enumerate(links)))


# -- reading a saved document back -------------------------------------------------------------
# Every value is checked against what discovery can produce, and every error is a ValueError
# naming the field (``cpus[3].node: 5 is not one of the NUMA nodes``): a document is input, and
# nothing is sized or looked up by a value it holds before the value is known to be sane.

_INT32 = (-(1 << 31), (1 << 31) - 1)  # package, die, cluster and core ids: sysfs prints them as C ints
_UINT32 = (-(1 << 31), (1 << 32) - 1)  # cache ids (unsigned in sysfs) and the uncore group (a cache id)
_U64 = (0, (1 << 64) - 1)  # hugepage counts: unsigned long
_BYTES = (0, 1 << 74)  # memory and cache sizes: a meminfo kB count (u64) in bytes
_DISTANCE = (0, (1 << 31) - 1)
_CACHE_TYPES = ("Data", "Instruction", "Unified")
_DISTANCE_SOURCES = ("slit", "sysfs")
#: a CPU sits in at most this many cache instances (x86 has 4 or 5; ARM at most 7 levels, L1 split):
#: the caches' CPU sets together hold no more than this many times the CPUs
_CACHES_PER_CPU = 32


def _from_dict(cls, data: "Mapping[str, Any]") -> "Topology":
    from ._docfields import boolean, cpulist, hugepage_size_kb, integer, items, mapping, shown_json, string
    from .limits import MAX_CPUS, MAX_NUMA_NODES

    mapping(data, "the document")
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        raise ValueError(f"format: {shown_json(fmt)}, expected {FORMAT!r}")
    cpu_bound, node_bound = (0, MAX_CPUS - 1), (0, MAX_NUMA_NODES - 1)
    cpu_why = f"not below {MAX_CPUS}, the most CPUs Linux can have"
    node_why = f"not below {MAX_NUMA_NODES}, the most NUMA nodes Linux can have"
    online = cpulist(data, "online_cpus", "")
    possible = cpulist(data, "possible_cpus", "", data.get("online_cpus"))
    present = cpulist(data, "present_cpus", "", data.get("online_cpus"))
    offline = cpulist(data, "offline_cpus", "", "")
    isolated = cpulist(data, "isolated_cpus", "", "")

    raw_nodes = items(data, "numa_nodes", required=True)
    if not raw_nodes:
        raise ValueError("numa_nodes: empty (every machine has at least one NUMA node)")
    nodes = []
    for where, n, nid in _identified(raw_nodes, "numa_nodes", "node", node_bound, node_why):
        cpus = cpulist(n, "cpus", where)
        memory = integer(n, "memory_bytes", where, _BYTES)
        pools = {}
        raw_pools = n.get("hugepages")
        if raw_pools is not None:
            mapping(raw_pools, f"{where}.hugepages")
            for size_text, p in raw_pools.items():
                pools_where = f"{where}.hugepages[{shown_json(size_text)}]"
                size = hugepage_size_kb(size_text, pools_where)
                if size in pools:
                    raise ValueError(f"{pools_where}: {size} kB listed twice")
                mapping(p, pools_where)
                pools[size] = HugepagePool(size, integer(p, "total", pools_where, _U64),
                                           integer(p, "free", pools_where, _U64),
                                           integer(p, "surplus", pools_where, _U64, default=0),
                                           integer(p, "reserved", pools_where, _U64, none=True))
        nodes.append(NumaNode(nid, cpus, memory, integer(n, "memory_free_bytes", where, _BYTES, default=0),
                              MappingProxyType(pools), boolean(n, "has_cpu", where, bool(cpus)),
                              boolean(n, "has_memory", where, memory > 0)))

    node_ids = {n.id for n in nodes}
    distances = _distances(data, [n.id for n in nodes])

    cpus_out = []
    for where, c, cid in _identified(items(data, "cpus"), "cpus", "CPU", cpu_bound, cpu_why):
        node = integer(c, "node", where, node_bound, none=True, why=node_why)
        if node is not None and node not in node_ids:
            raise ValueError(f"{where}.node: {node} is not one of the NUMA nodes{_listed(node_ids)}")
        cpus_out.append(CPU(cid, boolean(c, "online", where, True), integer(c, "package", where, _INT32, none=True),
                            integer(c, "die", where, _INT32, none=True), integer(c, "cluster", where, _INT32, none=True),
                            integer(c, "core_id", where, _INT32, none=True),
                            integer(c, "core", where, cpu_bound, why=f"not below {MAX_CPUS}, the most cores Linux can have"), node,
                            cpulist(c, "thread_siblings", where, str(cid)),
                            integer(c, "uncore_cache", where, _UINT32, none=True)))

    # discovery reports the online CPUs (and nothing else) in every node, core, package and cache
    reported = online.bits
    for cpu in cpus_out:
        reported |= 1 << cpu.id
    for i, node in enumerate(nodes):
        _within(node.cpus, reported, f"numa_nodes[{i}].cpus")
    for i, cpu in enumerate(cpus_out):
        _within(cpu.thread_siblings, reported, f"cpus[{i}].thread_siblings")

    packages, in_packages = [], 0
    for i, p in enumerate(items(data, "packages", required=True)):
        where = f"packages[{i}]"
        mapping(p, where)
        pcpus = _within(cpulist(p, "cpus", where), reported, f"{where}.cpus")
        if pcpus.bits & in_packages:  # discovery places each CPU in one package
            both = CPUSet.from_bits(pcpus.bits & in_packages)
            raise ValueError(f"{where}.cpus: CPU(s) {both} are in an earlier package too")
        in_packages |= pcpus.bits
        packages.append(Package(integer(p, "id", where, _INT32), pcpus))

    caches, members = [], 0
    most = _CACHES_PER_CPU * max(len(cpus_out), len(online), 1)
    for i, c in enumerate(items(data, "caches")):
        where = f"caches[{i}]"
        mapping(c, where)
        ccpus = _within(cpulist(c, "cpus", where), reported, f"{where}.cpus")
        members += ccpus.bits.bit_count()
        if members > most:
            raise ValueError(f"{where}: the caches hold more than {_CACHES_PER_CPU} per CPU")
        caches.append(Cache(integer(c, "level", where, _DISTANCE), string(c, "type", where, choices=_CACHE_TYPES),
                            integer(c, "size_bytes", where, _BYTES, none=True), integer(c, "id", where, _UINT32, none=True),
                            ccpus))

    warnings = items(data, "warnings")
    for i, w in enumerate(warnings):
        if not isinstance(w, str):
            raise ValueError(f"warnings[{i}]: expected a string, got {shown_json(w)}")
    devices, net_interfaces = _load_devices(data)
    return cls(
        string(data, "arch", "", "unknown"),
        possible,
        present,
        online,
        offline,
        isolated,
        tuple(cpus_out),
        tuple(packages),
        integer(data, "cores", "", (0, MAX_CPUS), why=f"above {MAX_CPUS}, the most cores Linux can have"),
        tuple(caches),
        tuple(nodes),
        distances,
        devices,
        net_interfaces,
        tuple(warnings),
    )


def _identified(entries: list, name: str, what: str, bounds, why: str):
    """``(where, entry, id)`` of each object of ``entries``, whose ``id`` fields are in ``bounds`` and unique."""
    from ._docfields import integer, mapping

    seen = set()
    for i, entry in enumerate(entries):
        where = f"{name}[{i}]"
        mapping(entry, where)
        eid = integer(entry, "id", where, bounds, why=why)
        if eid in seen:
            raise ValueError(f"{where}.id: {what} {eid} listed twice")
        seen.add(eid)
        yield where, entry, eid


def _within(cpus: "CPUSet", reported: int, where: str) -> "CPUSet":
    """``cpus`` when they are all reported CPUs (online or listed); ``ValueError`` naming ``where``."""
    extra = cpus.bits & ~reported
    if extra:
        raise ValueError(f"{where}: CPU(s) {CPUSet.from_bits(extra)} are neither online nor listed in cpus")
    return cpus


def _listed(ids) -> str:
    """`` (0,1,4)``: the ids, when few enough to name in a one-line message."""
    return f" ({','.join(map(str, sorted(ids)))})" if len(ids) <= 16 else ""


def _distances(data, node_ids: "Sequence[int]") -> "Optional[Distances]":
    """The ``distances`` object: a square matrix over exactly the listed NUMA nodes, or null."""
    from ._docfields import check_int, items, mapping, shown_json, string

    d = data.get("distances")
    if d is None:
        return None
    mapping(d, "distances")
    raw_nodes = items(d, "nodes", "distances", required=True)
    nodes = []
    for i, n in enumerate(raw_nodes):
        nid = check_int(n, f"distances.nodes[{i}]", (0, (1 << 31) - 1))
        if nid in nodes:
            raise ValueError(f"distances.nodes[{i}]: node {nid} listed twice")
        if nid not in node_ids:
            raise ValueError(f"distances.nodes[{i}]: {nid} is not one of the NUMA nodes{_listed(node_ids)}")
        nodes.append(nid)
    if len(nodes) != len(node_ids):
        missing = sorted(set(node_ids) - set(nodes))
        raise ValueError(f"distances.nodes: no distances for NUMA node(s) {','.join(map(str, missing))}")
    rows = items(d, "matrix", "distances", required=True)
    if len(rows) != len(nodes):
        raise ValueError(f"distances.matrix: {len(rows)} rows, expected {len(nodes)} (one per node)")
    matrix, hi = [], _DISTANCE[1]
    for r, row in enumerate(rows):
        where = f"distances.matrix[{r}]"
        if not isinstance(row, (list, tuple)):
            raise ValueError(f"{where}: expected a list, got {shown_json(row)}")
        if len(row) != len(nodes):
            raise ValueError(f"{where}: {len(row)} values, expected {len(nodes)} (one per node)")
        if not all(type(v) is int and 0 <= v <= hi for v in row):
            for c, v in enumerate(row):
                check_int(v, f"{where}[{c}]", _DISTANCE)
        matrix.append(tuple(row))
    return Distances(tuple(nodes), tuple(matrix), string(d, "source", "distances", "sysfs", _DISTANCE_SOURCES))
