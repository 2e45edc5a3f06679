"""CPU hint generation against a CPU-scanning reference (random machines, sparse nodes, reuse, sockets)."""
from __future__ import annotations

from itertools import combinations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pynuma.cpuset import CPUSet
from pynuma.policy.cpumanager.hints import generate_cpu_hint_masks, generate_cpu_hints
from pynuma.policy.cpumanager.topology import CPUTopology

from .cpu_fixtures import QUAD_NODE


def reference(topo, available, reusable, request, align_by_socket=False):
    """Straight from the kubelet's description: scan CPUs for every subset."""
    nodes = sorted({i.node for i in topo.details.values()})
    min_aff = len(nodes)
    hints = []
    for k in range(1, len(nodes) + 1):
        for combo in combinations(nodes, k):
            in_mask = [c for c, i in topo.details.items() if i.node in combo]
            if len(in_mask) >= request and k < min_aff:
                min_aff = k
            if any(topo.details[c].node not in combo for c in reusable):
                continue
            count = len(reusable) + sum(1 for c in available if topo.details[c].node in combo)
            if count >= request:
                hints.append([set(combo), False])
    per = topo.num_numa_nodes // topo.num_sockets if topo.num_sockets else 0
    for h in hints:
        if align_by_socket and per:
            sockets = {i.socket for i in topo.details.values() if i.node in h[0]}
            if len(sockets) == -(-min_aff // per):
                h[1] = True
                continue
        if len(h[0]) == min_aff:
            h[1] = True
    return [(sum(1 << n for n in h[0]), h[1]) for h in hints]


@st.composite
def cases(draw):
    n_nodes = draw(st.integers(1, 5))
    node_ids = sorted(draw(st.lists(st.integers(0, 9), min_size=n_nodes, max_size=n_nodes, unique=True)))
    per_socket = draw(st.integers(1, 2))
    cpus, cid = [], 0
    for node in node_ids:
        for _ in range(draw(st.integers(1, 4))):
            cpus.append((cid, node_ids.index(node) // per_socket, node, cid // 2, 0))
            cid += 1
    topo = CPUTopology.from_cpus(cpus)
    all_cpus = list(range(cid))
    avail = CPUSet(draw(st.lists(st.sampled_from(all_cpus), unique=True)))
    reusable = CPUSet(draw(st.lists(st.sampled_from(all_cpus), unique=True, max_size=2)))
    request = draw(st.integers(1, cid + 1))
    return topo, avail, reusable, request, draw(st.booleans())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_matches_cpu_scanning_reference(case):
    topo, avail, reusable, request, align = case
    got = generate_cpu_hint_masks(topo, avail, reusable, request, align)
    assert got == reference(topo, avail, reusable, request, align)  # same hints, same order


def test_no_fit_gives_empty_list_and_objects_are_topology_hints():
    assert generate_cpu_hints(QUAD_NODE, CPUSet([0]), None, 2) == []
    hints = generate_cpu_hints(QUAD_NODE, QUAD_NODE.cpus(), None, 9)  # a node has 8 CPUs: pairs preferred
    assert hints[0].to_json() == {"numa": [0, 1], "preferred": True}  # no single node can hold 9
    assert {len(list(h.numa_affinity)) for h in hints if h.preferred} == {2}
