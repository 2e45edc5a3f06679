"""CPU Manager topology hints: which NUMA sets can hold a container's (or pod's) exclusive CPUs.

Hints are built from per-node CPU counts (total and free), summed over
every NUMA subset with a doubling table, so a 16-node machine costs a few
list operations per subset instead of a scan of every CPU per subset.
Order is the kubelet's: subsets by size, then lexicographic.

>>> from pynuma.policy.cpumanager.topology import CPUTopology
>>> t = CPUTopology.from_cpus([(c, c // 4, c // 4, c // 2, 0) for c in range(8)])
>>> [h.to_json() for h in generate_cpu_hints(t, t.cpus(), None, 2)]
[{'numa': [0], 'preferred': True}, {'numa': [1], 'preferred': True}, {'numa': [0, 1], 'preferred': False}]
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Optional, Tuple

from ...cpuset import CPUSet
from ..topologymanager.bitmask import NUMAMask
from .topology import CPUTopology
from ..topologymanager.hints import TopologyHint

RESOURCE = "cpu"


@lru_cache(maxsize=4096)
def _subsets(n: int, k: int, start: int = 0) -> tuple:
    """k-subsets of positions ``start..n-1`` as bitmaps, in lexicographic order of positions."""
    if k == 0:
        return (0,)
    out = []
    for first in range(start, n - k + 1):
        bit = 1 << first
        out.extend(bit | m for m in _subsets(n, k - 1, first + 1))
    return tuple(out)


def _subset_sums(values: List[int]) -> List[int]:
    """``sums[m]`` = sum of ``values[p]`` over the 1-bits p of m, for every m < 2**len(values)."""
    sums = [0]
    for v in values:
        sums = sums + [s + v for s in sums]
    return sums


def _subset_ors(values: List[int]) -> List[int]:
    ors = [0]
    for v in values:
        ors = ors + [s | v for s in ors]
    return ors


class _HintCache(dict):
    """Hints are immutable: one shared object per mask (per preference), built on first use."""

    def __init__(self, preferred: bool) -> None:
        super().__init__()
        self.preferred = preferred

    def __missing__(self, bits: int) -> TopologyHint:
        if len(self) > 1 << 18:
            self.clear()
        h = self[bits] = TopologyHint(NUMAMask.from_bits(bits), self.preferred)
        return h


_PREFERRED, _NOT_PREFERRED = _HintCache(True), _HintCache(False)


def _hint(bits: int, preferred: bool) -> TopologyHint:
    return (_PREFERRED if preferred else _NOT_PREFERRED)[bits]


@lru_cache(maxsize=64)
def _all_subsets(nodes: Tuple[int, ...], min_aff: int) -> Tuple[Tuple[int, bool], ...]:
    n = len(nodes)
    out = [(m, k == min_aff) for k in range(1, n + 1) for m in _subsets(n, k)]
    if list(nodes) != list(range(n)):
        out = [(sum(1 << nodes[p] for p in range(n) if m >> p & 1), pref) for m, pref in out]
    return tuple(out)


@lru_cache(maxsize=64)
def _all_hints(nodes: Tuple[int, ...], min_aff: int) -> Tuple[TopologyHint, ...]:
    return tuple(_hint(m, p) for m, p in _all_subsets(nodes, min_aff))


class _AllFit:
    __slots__ = ("nodes", "min_aff")

    def __init__(self, nodes: Tuple[int, ...], min_aff: int) -> None:
        self.nodes, self.min_aff = nodes, min_aff


def generate_cpu_hint_masks(topo: CPUTopology, available: CPUSet, reusable: Optional[CPUSet],
                            request: int, align_by_socket: bool = False) -> List[Tuple[int, bool]]:
    """:func:`generate_cpu_hints` as ``(node bitmap, preferred)`` pairs (for merge code that wants ints)."""
    got = _masks(topo, available, reusable, request, align_by_socket)
    if isinstance(got, _AllFit):
        return list(_all_subsets(got.nodes, got.min_aff))
    return got


def _masks(topo: CPUTopology, available: CPUSet, reusable: Optional[CPUSet], request: int,
           align_by_socket: bool):
    nodes = topo.numa_nodes()
    n = len(nodes)
    avail_bits = available.bits
    totals = [topo.node_bits[x].bit_count() for x in nodes]
    free = [(topo.node_bits[x] & avail_bits).bit_count() for x in nodes]
    # The smallest k whose k largest nodes hold the request (capped at all nodes).
    min_aff, acc = n, 0
    for k, t in enumerate(sorted(totals, reverse=True), 1):
        acc += t
        if acc >= request:
            min_aff = min(min_aff, k)
            break
    reuse_idx, reuse_count = 0, 0
    pos = {x: p for p, x in enumerate(nodes)}
    if reusable:
        for cpu in reusable:
            info = topo.details.get(cpu)
            # A CPU unknown to the topology reads as node 0 in the kubelet (zero value).
            reuse_idx |= 1 << pos.get(info.node if info else 0, 0)
            reuse_count += 1
    need = request - reuse_count
    if not align_by_socket and reuse_idx == 0 and (n == 0 or min(free) >= need):
        # Every subset fits (the common small request): the answer depends on n and min_aff only.
        return _AllFit(tuple(nodes), min_aff)
    # Sizes k where even the k fullest nodes fall short hold no hint; sizes where the k
    # emptiest nodes already suffice hold every subset: only the sizes in between need sums.
    desc, asc = sorted(free, reverse=True), sorted(free)
    most = [sum(desc[:k]) for k in range(n + 1)]
    least = [sum(asc[:k]) for k in range(n + 1)]
    mixed = [k for k in range(1, n + 1) if most[k] >= need > least[k]]
    sums = _subset_sums(free) if mixed else None
    socket_count = None
    min_sockets = 0
    if align_by_socket:
        per_socket = topo.num_numa_nodes // topo.num_sockets if topo.num_sockets else 0
        if per_socket:
            min_sockets = -(-min_aff // per_socket)
            sockets_of = []
            for x in nodes:
                bits = 0
                for sid, _ in topo.node_socket_pairs[x]:
                    bits |= 1 << sid
                sockets_of.append(bits)
            socket_count = _subset_ors(sockets_of)
    out: List[Tuple[int, bool]] = []
    for k in range(1, n + 1):
        if most[k] < need:
            continue
        if least[k] >= need:
            fits = [m for m in _subsets(n, k) if m & reuse_idx == reuse_idx]
        else:
            fits = [m for m in _subsets(n, k) if m & reuse_idx == reuse_idx and sums[m] >= need]
        if socket_count is None or k == min_aff:
            pref = k == min_aff
            out.extend([(m, pref) for m in fits])
        else:
            out.extend([(m, socket_count[m].bit_count() == min_sockets) for m in fits])
    if nodes != list(range(n)):  # sparse node ids: positions -> ids
        out = [(sum(1 << nodes[p] for p in range(n) if m >> p & 1), pref) for m, pref in out]
    return out


def generate_cpu_hints(topo: CPUTopology, available: CPUSet, reusable: Optional[CPUSet],
                       request: int, align_by_socket: bool = False) -> List[TopologyHint]:
    """Every NUMA set whose reusable + available CPUs cover ``request``; minimal-size sets preferred.

    "Minimal" is measured on the whole machine (the smallest set that could
    hold the request when empty), not on what is free now.  With
    ``align_by_socket`` a set spanning the minimal number of sockets is also
    preferred.
    """
    got = _masks(topo, available, reusable, request, align_by_socket)
    if isinstance(got, _AllFit):
        return list(_all_hints(got.nodes, got.min_aff))
    yes, no = _PREFERRED, _NOT_PREFERRED
    return [yes[m] if p else no[m] for m, p in got]


def container_hints(policy, state, pod, container) -> Optional[Dict[str, list]]:
    """The static policy's ``GetTopologyHints``: ``None`` when the container needs no exclusive CPUs."""
    requested = policy.guaranteed_cpus(pod, container)
    if requested == 0:
        return None
    allocated = state.get(pod.uid, container.name)
    if allocated is not None:
        if len(allocated) != requested:
            return {RESOURCE: []}
        return {RESOURCE: generate_cpu_hints(policy.topo, allocated, None, requested,
                                             policy.options.align_by_socket)}
    reusable = policy.cpus_to_reuse.get(pod.uid)
    return {RESOURCE: generate_cpu_hints(policy.topo, policy.available_cpus(state), reusable, requested,
                                         policy.options.align_by_socket)}


def pod_hints(policy, state, pod) -> Optional[Dict[str, list]]:
    """The static policy's ``GetPodTopologyHints`` (pod scope)."""
    requested = policy.pod_guaranteed_cpus(pod)
    if requested == 0:
        return None
    assigned = CPUSet()
    for c in pod.all_containers():
        allocated = state.get(pod.uid, c.name)
        if allocated is None:
            continue
        if len(allocated) != policy.guaranteed_cpus(pod, c):
            return {RESOURCE: []}
        assigned = assigned | allocated
    align = policy.options.align_by_socket
    if len(assigned) == requested:
        return {RESOURCE: generate_cpu_hints(policy.topo, assigned, None, requested, align)}
    reusable = policy.cpus_to_reuse.get(pod.uid, CPUSet()) | assigned
    return {RESOURCE: generate_cpu_hints(policy.topo, policy.available_cpus(state), reusable, requested, align)}


class CPUHintProvider:
    """Adapter: the static policy + a state, speaking the Topology Manager's ``HintProvider`` protocol."""

    name = "cpu"  # its key in admission reports, beside "memory" and "devices"

    def __init__(self, policy, state) -> None:
        self.policy, self.state = policy, state

    def hints(self, pod, container):
        return self.policy.container_hints(self.state, pod, container)

    def pod_hints(self, pod):
        return self.policy.pod_hints(self.state, pod)

    def allocate(self, pod, container, hint=None):
        """Let the provider allocate once the Topology Manager admitted ``container`` with ``hint``."""
        return self.policy.allocate(self.state, pod, container, hint)
