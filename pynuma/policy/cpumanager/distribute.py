"""``distribute-cpus-across-numa``: spread a request evenly over the fewest NUMA nodes.

The kubelet's ``takeByTopologyNUMADistributed``: try k = min..max NUMA nodes;
for each k-combination check it can hold the request in groups of
``group`` CPUs, hand out an even share per node, then the remainder
round-robin over the best subset; the combination leaving the most balanced
machine (lowest standard deviation of free CPUs per node, in thousandths)
wins, the first one found on ties.  Each node's share is then picked with
the packed algorithm.  :mod:`.distribute_search` finds the kubelet's
(combination, subset) without enumerating them.

>>> from pynuma.policy.cpumanager.topology import CPUTopology
>>> t = CPUTopology.from_cpus([(c, 0, c // 4, c, 0) for c in range(8)])
>>> str(take_distributed(t, t.cpus(), 6))  # needs two nodes: 3 + 3
'0-2,4-6'
"""
from __future__ import annotations

import math

from ...cpuset import CPUSet
from ...errors import AllocationError
from .assign import Accumulator, _bits, _not_enough, _pc, take_packed_bits
from .distribute_search import choose
from .topology import CPUTopology


def _std_milli(sum_v: int, sum_sq: int, n: int) -> int:
    """The kubelet's balance score in thousandths, computed exactly from Σv and Σv².

    The kubelet rounds the mean to 3 decimals, takes the population standard
    deviation around it and rounds that to 3 decimals (half away from zero).
    With the mean as M/1000, Σ(v - M/1000)² = (10⁶Σv² - 2000·M·Σv + n·M²)/10⁶, an
    exact integer numerator; integer square roots then round it exactly, so
    equal balances compare equal (the "first found wins" ties stay stable).
    """
    mean_milli = (2000 * sum_v + n) // (2 * n)
    num = 10**6 * sum_sq - 2000 * mean_milli * sum_v + n * mean_milli * mean_milli
    return (math.isqrt(4 * num // n) + 1) // 2


def take_distributed_bits(topo: CPUTopology, available: int, count: int, group: int = 1,
                          spread: bool = False) -> int:
    """:func:`take_distributed` on bitmaps."""
    if group < 1:
        raise ValueError("group size must be at least 1")
    if count % group != 0:
        return take_packed_bits(topo, available, count, spread, False)
    acc = Accumulator(topo, available, count, spread)
    if acc.satisfied():
        return acc.result
    if acc.failed():
        raise _not_enough(count, available)
    node_bits = topo.node_bits
    numas = acc.numa_order()
    free = [_pc(node_bits[n] & acc.free) for n in numas]
    left_free = sum(free) - count

    def score(sum_sq: int) -> int:
        return _std_milli(left_free, sum_sq, len(numas))

    # The kubelet's bounds on how many nodes to try (rangeNUMANodesNeededToSatisfy).
    groups = (_pc(topo.all_bits) - 1) // group + 1
    groups_per_numa = (groups - 1) // max(len(node_bits), 1) + 1
    groups_needed = (count - 1) // group + 1
    min_k = (groups_needed - 1) // groups_per_numa + 1
    max_k = min(groups_needed, len(numas))
    for k in range(min_k, max_k + 1):
        dist = count // k // group * group
        found = choose(free, k, dist, group, count, score)
        if found is None:
            continue
        combo, subset = [numas[p] for p in found[0]], [numas[p] for p in found[1] or ()]
        for n in combo:
            acc.take(take_packed_bits(topo, node_bits[n] & acc.free, dist, spread, False))
        rem = count - dist * k
        while rem > 0:
            progressed = False
            for n in subset:
                if rem == 0:
                    break
                if _pc(node_bits[n] & acc.free) < group:
                    continue
                acc.take(take_packed_bits(topo, node_bits[n] & acc.free, group, spread, False))
                rem -= group
                progressed = True
            if not progressed:
                break
        if acc.need != 0:
            raise AllocationError(f"accounting error, CPUs still needed: {acc.need}")
        return acc.result
    return take_packed_bits(topo, available, count, spread, False)


def take_distributed(topo: CPUTopology, available, count: int, group: int = 1,
                     spread: bool = False) -> CPUSet:
    """``count`` CPUs spread evenly across NUMA nodes in groups of ``group`` (``takeByTopologyNUMADistributed``)."""
    return CPUSet.from_bits(take_distributed_bits(topo, _bits(available), count, group, spread))
