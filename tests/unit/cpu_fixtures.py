"""Small synthetic CPU topologies for the CPU Manager unit tests (no conformance data needed)."""
from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from pynuma.cpuset import CPUSet
from pynuma.policy.cpumanager.topology import CPUTopology


def machine(sockets=1, nodes_per_socket=1, cores_per_node=4, threads=2, **declared) -> CPUTopology:
    """``sockets x nodes x cores x threads``; thread t of core c is CPU ``t * cores + c`` (Linux-like numbering).

    The uncore (L3) id is the NUMA node id.
    """
    cores = sockets * nodes_per_socket * cores_per_node
    cpus = []
    for t in range(threads):
        for core in range(cores):
            node = core // cores_per_node
            cpus.append((t * cores + core, node // nodes_per_socket, node, core, node))
    return CPUTopology.from_cpus(cpus, **declared)


SINGLE_HT = machine()                                               # 8 CPUs, siblings i / i+4
DUAL_NODE_HT = machine(sockets=2, cores_per_node=3)                 # 12 CPUs, 2 sockets = 2 nodes
QUAD_NODE = machine(sockets=2, nodes_per_socket=2, cores_per_node=4)  # 32 CPUs, 4 nodes, SMT-2


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def machines_and_sets(draw):
    topo = machine(sockets=draw(st.integers(1, 2)), nodes_per_socket=draw(st.integers(1, 3)),
                   cores_per_node=draw(st.integers(1, 4)), threads=draw(st.sampled_from([1, 2, 4])))
    cpus = topo.cpus().to_list()
    avail = CPUSet(draw(st.lists(st.sampled_from(cpus), unique=True)))
    count = draw(st.integers(0, len(avail) + 1))
    return topo, avail, count
