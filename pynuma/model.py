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
        """Rebuild a topology from :meth:`to_dict` output; ``ValueError`` naming the bad key."""
        try:
            return _from_dict(cls, data)
        except KeyError as err:
            raise ValueError(f"not a pynuma topology: no {err.args[0]!r} field") from None
        except (TypeError, ValueError, AttributeError) as err:
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
    devices, links = data.get("devices") or (), data.get("net_interfaces") or ()
    if not devices and not links:
        return (), ()
    from .model_devices import NetInterface, PciDevice

    return tuple(PciDevice.from_dict(d) for d in devices), tuple(NetInterface.from_dict(n) for n in links)


def _opt_int(v) -> "Optional[int]":
    return None if v is None else int(v)


def _from_dict(cls, data: "Mapping[str, Any]") -> "Topology":
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        raise ValueError(f"format {fmt!r}, expected {FORMAT!r}")
    parse = CPUSet.parse
    nodes = []
    for n in data["numa_nodes"]:
        pools = {}
        for size, p in n.get("hugepages", {}).items():
            pools[int(size)] = HugepagePool(int(size), int(p["total"]), int(p["free"]),
                                            int(p.get("surplus", 0)), _opt_int(p.get("reserved")))
        cpus = parse(n["cpus"])
        nodes.append(NumaNode(int(n["id"]), cpus, int(n["memory_bytes"]), int(n.get("memory_free_bytes", 0)),
                              MappingProxyType(pools), bool(n.get("has_cpu", bool(cpus))),
                              bool(n.get("has_memory", int(n["memory_bytes"]) > 0))))
    d = data.get("distances")
    distances = None if d is None else Distances(
        tuple(int(x) for x in d["nodes"]), tuple(tuple(int(x) for x in row) for row in d["matrix"]),
        str(d.get("source", "sysfs")))
    cpus = tuple(CPU(int(c["id"]), bool(c.get("online", True)), _opt_int(c.get("package")), _opt_int(c.get("die")),
                     _opt_int(c.get("cluster")), _opt_int(c.get("core_id")), int(c["core"]),
                     _opt_int(c.get("node")), parse(c.get("thread_siblings", str(c["id"]))),
                     _opt_int(c.get("uncore_cache")))
                 for c in data.get("cpus", ()))
    online = parse(data["online_cpus"])
    devices, net_interfaces = _load_devices(data)
    return cls(
        str(data.get("arch", "unknown")),
        parse(data.get("possible_cpus", data["online_cpus"])),
        parse(data.get("present_cpus", data["online_cpus"])),
        online,
        parse(data.get("offline_cpus", "")),
        parse(data.get("isolated_cpus", "")),
        cpus,
        tuple(Package(int(p["id"]), parse(p["cpus"])) for p in data["packages"]),
        int(data["cores"]),
        tuple(Cache(int(c["level"]), str(c["type"]), _opt_int(c.get("size_bytes")), _opt_int(c.get("id")),
                    parse(c["cpus"])) for c in data.get("caches", ())),
        tuple(nodes),
        distances,
        devices,
        net_interfaces,
        tuple(str(w) for w in data.get("warnings", ())),
    )
