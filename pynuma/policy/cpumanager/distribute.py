"""``distribute-cpus-across-numa``: spread a request evenly over the fewest NUMA nodes.

The kubelet's ``takeByTopologyNUMADistributed``: try k = min..max NUMA nodes;
for each k-combination check it can hold the request in groups of
``group`` CPUs, hand out an even share per node, then the remainder
round-robin over the best subset; the combination leaving the most balanced
machine (lowest standard deviation of free CPUs per node, in thousandths)
wins, the first one found on ties.  Each node's share is then picked with
the packed algorithm.

>>> from pynuma.policy.cpumanager.topology import CPUTopology
>>> t = CPUTopology.from_cpus([(c, 0, c // 4, c, 0) for c in range(8)])
>>> str(take_distributed(t, t.cpus(), 6))  # needs two nodes: 3 + 3
'0-2,4-6'
"""
from __future__ import annotations

import math
from itertools import combinations
from typing import List, Tuple

from ...cpuset import CPUSet
from ...errors import AllocationError
from .assign import Accumulator, _bits, _not_enough, _pc, take_packed_bits
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


def _hand_out(after: dict, subset: Tuple[int, ...], rem: int, group: int) -> bool:
    """Give ``group`` CPUs round-robin over ``subset`` until ``rem`` is 0; False if stuck."""
    while rem > 0:
        progressed = False
        for n in subset:
            if rem == 0:
                break
            if after[n] < group:
                continue
            after[n] -= group
            rem -= group
            progressed = True
        if not progressed:
            return False
    return True


def _best_remainder(after: dict, sum_v: int, sum_sq: int, n_numas: int, cand: List[int], rem: int, group: int):
    best, best_subset = math.inf, None
    for r in range(len(cand), 0, -1):
        for subset in combinations(cand, r):
            if sum(after[n] for n in subset) < rem:
                continue
            trial = {n: after[n] for n in subset}
            if not _hand_out(trial, subset, rem, group):
                continue
            sq = sum_sq + sum(trial[n] * trial[n] - after[n] * after[n] for n in subset)
            score = _std_milli(sum_v - rem, sq, n_numas)
            if score < best:
                best, best_subset = score, subset
    return best, best_subset


def _first_balanced(numas, free_in, k, dist, count, group, total_sq, sum_v, n_numas):
    """First k-combination (enumeration order) with the best remainder-free balance, or None."""
    top = sorted((free_in[n] for n in numas), reverse=True)[:k]
    if len(top) < k or top[-1] < dist or sum(top) < count or sum(f // group for f in top) * group < count:
        return None  # the k fullest nodes fail, so every combination fails

    def score(total: int) -> int:
        return _std_milli(sum_v, total_sq + k * dist * dist - 2 * dist * total, n_numas)

    target = score(sum(top))
    for combo in combinations(numas, k):
        fs = [free_in[n] for n in combo]
        total = sum(fs)
        if total < count or min(fs) < dist:
            continue
        if group > 1 and sum(f // group for f in fs) * group < count:
            continue
        if score(total) == target:
            return combo
    return None


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
    free_in = {n: _pc(node_bits[n] & acc.free) for n in numas}
    total_free = sum(free_in.values())
    total_sq = sum(f * f for f in free_in.values())
    n_numas = len(numas)
    # The kubelet's bounds on how many nodes to try (rangeNUMANodesNeededToSatisfy).
    groups = (_pc(topo.all_bits) - 1) // group + 1
    groups_per_numa = (groups - 1) // max(len(node_bits), 1) + 1
    groups_needed = (count - 1) // group + 1
    min_k = (groups_needed - 1) // groups_per_numa + 1
    max_k = min(groups_needed, len(numas))
    for k in range(min_k, max_k + 1):
        best, best_combo, best_rem = math.inf, None, None
        dist = count // k // group * group
        rem = count - dist * k
        sum_v = total_free - dist * k
        if rem == 0:
            # Without a remainder the score depends only on Σfree of the combo (and falls as it
            # grows), so the winner is the first combo, in enumeration order, that reaches the
            # score of the k fullest nodes: stop there instead of scoring every combo.
            found = _first_balanced(numas, free_in, k, dist, count, group, total_sq, sum_v, n_numas)
            if found is None:
                continue
            best_combo, best_rem = found, None
            k_done = True
        else:
            k_done = False
        for combo in (() if k_done else combinations(numas, k)):
            if best == 0:
                break
            fs = [free_in[n] for n in combo]
            if sum(fs) < count or min(fs) < dist:
                continue
            if group > 1 and sum(f // group for f in fs) * group < count:
                continue
            sum_sq = total_sq + sum((f - dist) * (f - dist) - f * f for f in fs)
            if rem == 0:
                local, local_rem = _std_milli(sum_v, sum_sq, n_numas), None
            else:
                after = {n: f - dist for n, f in zip(combo, fs)}
                cand = [n for n in combo if after[n] >= group]
                local, local_rem = _best_remainder(after, sum_v, sum_sq, n_numas, cand, rem, group)
            if local < best:
                best, best_combo, best_rem = local, combo, local_rem
        if best_combo is None:
            continue
        dist = count // len(best_combo) // group * group
        for n in best_combo:
            acc.take(take_packed_bits(topo, node_bits[n] & acc.free, dist, spread, False))
        rem = count - dist * len(best_combo)
        while rem > 0:
            progressed = False
            for n in best_rem or ():
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
