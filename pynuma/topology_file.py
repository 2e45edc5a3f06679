"""Load a CPU topology from a JSON file (``--topology FILE``).

Two forms are accepted:

* a saved ``pynuma topology --json`` / ``--save`` document (``"format":
  "pynuma.topology/1"``): rebuilt as the :class:`pynuma.model.Topology` it
  was saved from, then read exactly as ``--root`` reads the machine, so
  whatever ``--save`` writes loads and gives the same answer (online CPUs,
  true counts, package -1 where the platform names none);
* an older or hand-written pynuma document (``numa_nodes`` or ``online_cpus``
  and a ``cpus`` list of ``{"id","package","core","node","uncore_cache","online"}``);
* the minimal form of the kubelet conformance ``topologies.json`` entries:
  ``{"cpus": [{"id","package","node","core","uncore_cache"?}], "declared"?: {...},
  "distances"?: [[...]] | null}`` (a missing ``uncore_cache`` is 0, the Go zero
  value; ``declared`` counts override the derived ones), or a map holding
  exactly one such entry by name.

>>> load_cpu_topology_data({"cpus": [{"id": 0, "package": 0, "node": 0, "core": 0}]}).num_cpus
1
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from .errors import InputError, ParseError
from .inputfile import load_json
from .limits import INT32_MAX, MAX_CPUS, MAX_NUMA_NODES
from .policy.cpumanager.topology import UNKNOWN_PACKAGE, CPUTopology, cpu_info

DECLARED_KEYS = ("num_cpus", "num_cores", "num_sockets", "num_numa_nodes", "num_uncore_caches")


def load_cpu_topology(path: str) -> CPUTopology:
    """Read ``path`` and build a :class:`CPUTopology`; ``ParseError`` naming the file on bad content."""
    data = load_json(path)
    try:
        return load_cpu_topology_data(data)
    except ValueError as err:
        raise ParseError(path, str(err)) from None


def _int(raw: Any, where: str, allow_none: bool = False, allow_unknown: bool = False, below: int = INT32_MAX + 1):
    """A non-negative int below ``below`` (ids are sized by nothing larger: see pynuma.limits)."""
    if raw is None and allow_none:
        return None
    if allow_unknown and raw == UNKNOWN_PACKAGE and not isinstance(raw, bool):
        return raw
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        expected = "a non-negative integer or -1 (unknown)" if allow_unknown else "a non-negative integer"
        raise ValueError(f"{where}: expected {expected}, got {str(raw)[:40]}")
    if raw >= below:
        raise ValueError(f"{where}: {str(raw)[:40]} is not below {below}, the most Linux can have")
    return raw


def _is_pynuma_document(data: Mapping) -> bool:
    return "numa_nodes" in data or "online_cpus" in data


def load_cpu_topology_data(data: Any) -> CPUTopology:
    """Build a :class:`CPUTopology` from parsed JSON (either form); ``ValueError`` on bad data."""
    if not isinstance(data, Mapping):
        raise ValueError("expected a JSON object with a 'cpus' list")
    if "cpus" not in data:
        entries = [v for v in data.values() if isinstance(v, Mapping) and "cpus" in v]
        if len(data) == 1 and len(entries) == 1:
            data = entries[0]
        elif entries:
            raise ValueError(f"holds {len(data)} topologies ({', '.join(sorted(map(str, data)))}); "
                             "give a file with exactly one")
        else:
            raise ValueError("no 'cpus' list")
    if data.get("format") is not None:
        return _saved_document(data)
    cpus = data.get("cpus")
    if not isinstance(cpus, list) or not cpus:
        raise ValueError("'cpus' must be a non-empty list")
    pynuma_doc = _is_pynuma_document(data)
    details = {}
    for i, raw in enumerate(cpus):
        where = f"cpus[{i}]"
        if not isinstance(raw, Mapping):
            raise ValueError(f"{where}: expected an object")
        if pynuma_doc and raw.get("online") is False:
            continue
        cid = _int(raw.get("id"), f"{where}.id", below=MAX_CPUS)
        sock = _int(raw.get("package", raw.get("socket")), f"{where}.package",
                    allow_none=pynuma_doc, allow_unknown=True)
        node = _int(raw.get("node", 0), f"{where}.node", allow_none=pynuma_doc, below=MAX_NUMA_NODES)
        core = _int(raw.get("core"), f"{where}.core")
        unc = _int(raw.get("uncore_cache"), f"{where}.uncore_cache", allow_none=True, allow_unknown=True)
        if unc is None and not pynuma_doc:
            unc = 0  # the minimal form follows the Go literal: absent means zero
        if cid in details:
            raise ValueError(f"{where}: CPU {cid} listed twice")
        details[cid] = cpu_info(cid, sock, node, core, unc)
    if not details:
        raise ValueError("no online CPUs")
    declared = data.get("declared") or {}
    if not isinstance(declared, Mapping):
        raise ValueError("'declared' must be an object")
    unknown = set(declared) - set(DECLARED_KEYS)
    if unknown:
        raise ValueError(f"declared: unknown key(s) {sorted(unknown)}")
    counts = {k: _int(declared[k], f"declared.{k}") for k in DECLARED_KEYS if k in declared}
    nodes, matrix = _nodes_and_distances(data, pynuma_doc)
    all_nodes = sorted(set(nodes) | {c.node for c in details.values()})
    if matrix is not None:
        matrix = _matrix(matrix, nodes or all_nodes, all_nodes)
    return CPUTopology(details, machine_numa_nodes=all_nodes, distances=matrix, **counts)


def _saved_document(data: Mapping) -> CPUTopology:
    """A ``--save`` document: the topology it was saved from, read as discovery's result is."""
    from .model import Topology

    topo = Topology.from_dict(data)  # ValueError naming the bad key or format
    if not any(c.online for c in topo.cpus):
        raise ValueError("no online CPUs")
    return CPUTopology.from_topology(topo)


def _nodes_and_distances(data: Mapping, pynuma_doc: bool):
    nodes = []
    raw_nodes = data.get("numa_nodes")
    if isinstance(raw_nodes, list):
        for i, n in enumerate(raw_nodes):
            nid = n.get("id") if isinstance(n, Mapping) else n
            nodes.append(_int(nid, f"numa_nodes[{i}].id", below=MAX_NUMA_NODES))
            if isinstance(n, Mapping):
                _node_memory(n, f"numa_nodes[{i}]")
    dist = data.get("distances")
    if dist is None:
        return nodes, None
    if isinstance(dist, Mapping):  # pynuma: {"nodes": [...], "matrix": [[...]], "source": ...}
        if dist.get("matrix") is None:
            return nodes, None
        dnodes = dist.get("nodes") or nodes
        if not isinstance(dnodes, list):
            raise ValueError("distances.nodes: expected a list of NUMA node ids")
        return [_int(n, f"distances.nodes[{i}]", below=MAX_NUMA_NODES) for i, n in enumerate(dnodes)], dist["matrix"]
    if isinstance(dist, list):
        return nodes, dist
    raise ValueError("'distances' must be a matrix, an object with 'matrix', or null")


def _node_memory(node: Mapping, where: str) -> None:
    """A node's memory and hugepage pools, when it has them: non-negative integers (the Memory Manager
    reads them from the same file)."""
    from ._docfields import hugepage_size_kb

    for key in ("memory_bytes", "memory_free_bytes"):
        if node.get(key) is not None:
            _int(node[key], f"{where}.{key}", below=(1 << 74) + 1)
    pools = node.get("hugepages")
    if pools is None:
        return
    if not isinstance(pools, Mapping):
        raise ValueError(f"{where}.hugepages: expected an object")
    for size, pool in pools.items():
        here = f"{where}.hugepages[{str(size)[:20]!r}]"
        hugepage_size_kb(size, here)
        if not isinstance(pool, Mapping):
            raise ValueError(f"{here}: expected an object")
        for key in ("total", "free", "surplus", "reserved"):
            if pool.get(key) is not None:
                _int(pool[key], f"{here}.{key}", below=1 << 64)


def _matrix(matrix: Any, src_nodes, nodes):
    if not isinstance(matrix, list) or len(matrix) != len(src_nodes):
        raise ValueError(f"distances: expected a {len(src_nodes)}x{len(src_nodes)} matrix")
    for r, row in enumerate(matrix):
        if not isinstance(row, list) or len(row) != len(src_nodes):
            raise ValueError(f"distances[{r}]: expected {len(src_nodes)} values")
        for c, v in enumerate(row):
            _int(v, f"distances[{r}][{c}]")
    pos = {n: i for i, n in enumerate(src_nodes)}
    missing = [n for n in nodes if n not in pos]
    if missing:
        raise ValueError(f"distances: no row for NUMA node(s) {missing}")
    return [[matrix[pos[a]][pos[b]] for b in nodes] for a in nodes]


def cpu_topology_for(topology_file: Optional[str] = None, root: str = "/") -> CPUTopology:
    """The CPU topology a command works on: ``--topology FILE`` if given, else discovery of ``root``."""
    if topology_file:
        return load_cpu_topology(topology_file)
    try:
        from .discover import discover
    except ImportError as err:  # discovery not built into this tree
        raise InputError(f"cannot discover the topology ({err}); give --topology FILE") from None
    return CPUTopology.from_topology(discover(root))
