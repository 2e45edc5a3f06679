"""Which NUMA nodes a set of CPUs belongs to.

Node CPU sets come from :func:`pynuma.discover`.  Discovery reports only
the CPUs pynuma's own cpuset allows, but another process may run anywhere:
a CPU no reported node holds is looked up in the full
``/sys/devices/system/node/nodeN/cpulist`` files (read once, when first
needed).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ..cpuset import CPUSet
from ..fsroot import FsRoot
from ..model import Topology
from ..parse import ascii_uint

NODE_DIR = "/sys/devices/system/node"


class NodeCpus:
    """Maps CPU sets to the set of nodes holding them (memoized: processes share a few affinities)."""

    def __init__(self, topology: Topology, fs: FsRoot) -> None:
        self._nodes: List[Tuple[int, int]] = [(n.id, n.cpus.bits) for n in topology.numa_nodes if n.cpus]
        self._covered = 0
        for _, bits in self._nodes:
            self._covered |= bits
        self._fs = fs
        self._full: Optional[List[Tuple[int, int]]] = None
        self._memo: Dict[int, CPUSet] = {}
        self.node_ids = CPUSet(n.id for n in topology.numa_nodes)

    def _sysfs_nodes(self) -> List[Tuple[int, int]]:
        if self._full is None:
            names = [n for n in self._fs.listdir(NODE_DIR) if n.startswith("node") and ascii_uint(n[4:], 9) is not None]
            texts = self._fs.read_many(f"{NODE_DIR}/{n}/cpulist" for n in names)
            full = []
            for name, text in zip(names, texts):
                try:
                    full.append((int(name[4:]), CPUSet.parse(text or "").bits))
                except ValueError:
                    continue
            self._full = full
        return self._full

    def of(self, cpus: CPUSet) -> CPUSet:
        """The nodes holding any CPU of ``cpus``."""
        bits = cpus.bits
        found = self._memo.get(bits)
        if found is None:
            nodes = self._nodes if not bits & ~self._covered else self._nodes + self._sysfs_nodes()
            out = 0
            for node, node_bits in nodes:
                if node_bits & bits:
                    out |= 1 << node
            found = self._memo[bits] = CPUSet.from_bits(out)
        return found
