"""``distribute-cpus-across-numa``: spread a request evenly over the fewest NUMA nodes.

The kubelet's ``takeByTopologyNUMADistributed``: try k = min..max NUMA nodes;
for each k-combination check it can hold the request in groups of
``group`` CPUs, hand out an even share per node, then the remainder
round-robin over the best subset; the combination leaving the most balanced
machine (lowest standard deviation of free CPUs per node, in thousandths)
wins, the first one found on ties.  Each node's share is then picked with
the packed algorithm.  :mod:`.distribute_search` finds the kubelet's
(combination, subset) without enumerating them.

The kubelet keeps the winning combination and subset as Go slices that its
combination walk (``iterateCombinations``) goes on appending to, and Go's
``append`` writes in place while a slice has room: from 4 members on, the
members after the slice's last reallocation (lengths 1, 2, 4, 8, ...) are
overwritten by every later combination sharing the earlier ones.  What the
kubelet then allocates from is what those slices hold when read
(:func:`as_stored`), and so is what is allocated here.

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

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Optional, Tuple


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


def _last_reallocation(k: int) -> int:
    """The length at which Go's ``append`` last reallocated a slice grown one by one from empty to ``k``
    (capacity 0, 1, 2, 4, 8, ...): the members after it share one array with the slice's siblings."""
    length = 1
    while length * 2 <= k - 1:
        length *= 2
    return length if k - 1 >= 1 else 0


def _successor(chosen: Tuple[int, ...], pool: int) -> Optional[Tuple[int, ...]]:
    """The next k-combination of ``range(pool)`` in lexicographic order (None after the last)."""
    c, k = list(chosen), len(chosen)
    for i in range(k - 1, -1, -1):
        if c[i] < pool - k + i:
            c[i] += 1
            for j in range(i + 1, k):
                c[j] = c[j - 1] + 1
            return tuple(c)
    return None


def as_stored(chosen: Tuple[int, ...], pool: int, stopped_next: bool) -> Tuple[int, ...]:
    """What the kubelet's kept slice holds for combination ``chosen`` of ``range(pool)`` once its walk is over.

    The members after the last reallocation hold those of the last combination
    the walk built under the same leading members: the lexicographically last
    one, or, when the walk stopped (``stopped_next``: a perfect balance was
    found), the one right after ``chosen``.
    """
    shared = _last_reallocation(len(chosen)) + 1  # leading members each slice owns
    if shared >= len(chosen):
        return chosen
    if stopped_next:
        after = _successor(chosen, pool)
        return after if after is not None and after[:shared] == chosen[:shared] else chosen
    return chosen[:shared] + tuple(range(pool - (len(chosen) - shared), pool))


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
        positions, subset_positions, perfect = found
        combo = [numas[p] for p in as_stored(positions, len(numas), perfect)]
        subset = []
        if subset_positions is not None:
            # the subset was walked over the combination's nodes that can take a group after the even share
            pool = [numas[p] for p in positions if free[p] - dist >= group]
            picked = tuple(pool.index(numas[p]) for p in subset_positions)
            subset = [pool[i] for i in as_stored(picked, len(pool), False)]
        for n in combo:
            have = node_bits[n] & acc.free
            if _pc(have) >= dist:  # the kubelet ignores a share it cannot take; the count check below tells
                acc.take(take_packed_bits(topo, have, dist, spread, False))
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
        if acc.need > 0:
            raise AllocationError(f"accounting error, not enough CPUs allocated, remaining: {acc.need}")
        if acc.need < 0:
            raise AllocationError(f"accounting error, too many CPUs allocated, remaining: {acc.need}")
        return acc.result
    return take_packed_bits(topo, available, count, spread, False)


def take_distributed(topo: CPUTopology, available, count: int, group: int = 1,
                     spread: bool = False) -> CPUSet:
    """``count`` CPUs spread evenly across NUMA nodes in groups of ``group`` (``takeByTopologyNUMADistributed``)."""
    return CPUSet.from_bits(take_distributed_bits(topo, _bits(available), count, group, spread))
