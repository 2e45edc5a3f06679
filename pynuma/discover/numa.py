"""NUMA nodes from ``/sys/devices/system/node`` (rule 4 of the conformance README).

CPU-less and memory-less nodes are ordinary nodes; ids may be sparse.  A
node's ``cpus`` is its ``cpulist`` (or ``cpumap``) intersected with the
reported CPUs.  Without any ``nodeN`` directory the machine is one node 0
holding every reported CPU, with ``/proc/meminfo`` memory and the
machine-wide hugepage pools.
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs more than discovery's start-up budget
    from typing import Dict, List, Optional

from .. import _impl
from ..cpuset import CPUSet
from ..errors import ParseError
from ..limits import MAX_NUMA_NODES
from ..model import NumaNode, node_of_cpus as _node_of_cpus
from ..parse import parse_memory_totals, parse_prefixed_id
from .hugepages import global_pools, node_dir, read_pools_many

_bitmap = _impl.select("bitmap")

NODE_DIR = "/sys/devices/system/node"


def list_node_ids(fs) -> "List[int]":
    """Ids of every ``nodeN`` directory, ascending (not in directory order)."""
    ids = (parse_prefixed_id(n, "node", MAX_NUMA_NODES) for n in fs.listdir(NODE_DIR))
    return sorted(i for i in ids if i is not None)


def _memory(fs, path: str, text: "Optional[str]", warnings: "List[str]"):
    """(MemTotal, MemFree) in bytes; (0, 0) with a warning when unknown."""
    if text is None:
        warnings.append(f"{fs.host_path(path)}: missing; memory reported as 0")
        return 0, 0
    try:
        return parse_memory_totals(text)
    except ValueError as err:
        warnings.append(f"{fs.host_path(path)}: {err}; memory reported as 0")
        return 0, 0


def read_nodes(fs, node_ids: "List[int]", reported: int, warnings: "List[str]") -> "List[NumaNode]":
    """The nodes ``node_ids`` (already restricted to the allowed ones), CPUs limited to ``reported``."""
    if not node_ids:
        return []
    paths = []
    for n in node_ids:
        paths.append(f"{NODE_DIR}/node{n}/cpulist")
        paths.append(f"{NODE_DIR}/node{n}/meminfo")
    texts = fs.read_many(paths)
    all_pools = read_pools_many(fs, [node_dir(n) for n in node_ids], warnings)
    nodes = []
    for k, n in enumerate(node_ids):
        cpus = _node_cpus(fs, n, paths[2 * k], texts[2 * k]) & reported
        total, free = _memory(fs, paths[2 * k + 1], texts[2 * k + 1], warnings)
        pools = all_pools[k]
        nodes.append(NumaNode(n, CPUSet.from_bits(cpus), total, free, pools, cpus != 0, total > 0))
    return nodes


def _node_cpus(fs, node: int, list_path: str, text: "Optional[str]") -> int:
    path, parse = list_path, _bitmap.parse_cpulist
    if text is None:
        path, parse = f"{NODE_DIR}/node{node}/cpumap", _bitmap.parse_cpumask
        text = fs.read_optional(path)
        if text is None:
            return 0
    try:
        return parse(text)
    except ValueError as err:
        raise ParseError(fs.host_path(path), str(err)) from None


def single_node(fs, reported: int, warnings: "List[str]") -> "NumaNode":
    """The one node 0 of a machine without ``nodeN`` directories."""
    text = fs.read_optional("/proc/meminfo")
    if text is None:
        total = free = 0  # old dumps have no /proc: memory unknown
    else:
        total, free = _memory(fs, "/proc/meminfo", text, warnings)
    pools = global_pools(fs, warnings)
    return NumaNode(0, CPUSet.from_bits(reported), total, free, pools, reported != 0, total > 0)


def node_of_cpus(nodes: "List[NumaNode]") -> "Dict[int, int]":
    """``{cpu: node id}``; a CPU claimed by several nodes goes to the lowest id (see :mod:`pynuma.model`)."""
    return _node_of_cpus(nodes)
