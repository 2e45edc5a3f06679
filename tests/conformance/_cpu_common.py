"""Shared helpers of the CPU Manager conformance tests: named topologies from topologies.json."""
from __future__ import annotations

from functools import lru_cache

from pynuma.cpuset import CPUSet
from pynuma.topology_file import load_cpu_topology_data

from .vectors import topologies


@lru_cache(maxsize=None)
def topology(name: str):
    """The named topology of ``kubelet/topologies.json`` as a CPUTopology."""
    return load_cpu_topology_data(topologies()[name])


def cpus(text: str) -> CPUSet:
    return CPUSet.parse(text)
