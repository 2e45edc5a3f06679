"""Picking CPUs the way the kubelet's CPU Manager does (``takeByTopology``).

Two algorithms, both pure functions of (topology, available CPUs, count):

* :func:`take_packed` — whole NUMA nodes / sockets first, then (optionally)
  whole uncore caches, whole cores, then single threads, always preferring
  the most-used unit so allocations pack together;
* :func:`take_distributed` — ``distribute-cpus-across-numa``: spread the
  request evenly over the fewest NUMA nodes, in groups of ``group_size``.

The :class:`Accumulator` holds the free CPUs as one integer bitmap and
derives every ordering from the topology's per-unit bitmaps.

>>> from pynuma.policy.cpu_topology import CPUTopology
>>> t = CPUTopology.from_cpus([(c, 0, 0, c % 4, 0) for c in range(8)])
>>> str(take_packed(t, t.cpus(), 2))
'0,4'
"""
from __future__ import annotations

import math
from itertools import combinations
from typing import Iterable, List, Mapping, Optional, Tuple

from ..cpuset import CPUSet
from ..errors import AllocationError
from .cpu_topology import CPUTopology, bit_ids

PACKED, SPREAD = "packed", "spread"


def _pc(bits: int) -> int:
    return bits.bit_count()


class Accumulator:
    """Free CPUs, CPUs taken so far, and how many are still needed."""

    __slots__ = ("topo", "free", "result", "need", "spread")

    def __init__(self, topo: CPUTopology, available: int, need: int, spread: bool = False) -> None:
        self.topo = topo
        self.free = available & topo.all_bits
        self.result = 0
        self.need = need
        self.spread = spread

    # -- state -----------------------------------------------------------
    def take(self, bits: int) -> None:
        self.result |= bits
        self.free &= ~bits
        self.need -= _pc(bits)

    def satisfied(self) -> bool:
        return self.need < 1

    def failed(self) -> bool:
        return self.need > _pc(self.free)

    def needs_at_least(self, n: int) -> bool:
        return self.need >= n

    # -- orderings ---------------------------------------------------------
    def _sorted(self, items: Iterable[Tuple[int, int]], table) -> List[int]:
        """Ids of units meeting the free set, fewest free CPUs first, then by id."""
        free = self.free
        keyed = [((table[i] & free).bit_count(), i) for i, b in items if b & free]
        keyed.sort()
        return [i for _, i in keyed]

    def numa_order(self) -> List[int]:
        t = self.topo
        if t.numa_first():
            return self._sorted(t.node_bits.items(), t.node_bits)
        out: List[int] = []
        for s in self.socket_order():
            out += self._sorted(t.socket_node_pairs[s], t.node_bits)
        return out

    def socket_order(self) -> List[int]:
        t = self.topo
        if not t.numa_first():
            return self._sorted(t.socket_bits.items(), t.socket_bits)
        out: List[int] = []
        for n in self.numa_order():
            out += self._sorted(t.node_socket_pairs[n], t.socket_bits)
        return out

    def core_order(self) -> List[int]:
        t = self.topo
        out: List[int] = []
        if t.numa_first():
            for s in self.socket_order():
                out += self._sorted(t.socket_cores[s], t.core_bits)
        else:
            for n in self.numa_order():
                out += self._sorted(t.node_cores[n], t.core_bits)
        return out

    def uncore_order(self) -> List[int]:
        t = self.topo
        out: List[int] = []
        for n in self.numa_order():
            out += self._sorted(t.node_uncores[n], t.uncore_bits)
        return out

    def free_cpus(self) -> List[int]:
        """Single-CPU pick order: per core (packed) or per socket (spread), ids ascending."""
        t, free = self.topo, self.free
        out: List[int] = []
        if self.spread:
            for s in self.socket_order():
                out += bit_ids(t.socket_bits[s] & free)
        else:
            for c in self.core_order():
                out += bit_ids(t.core_bits[c] & free)
        return out

    def free_sockets(self) -> List[int]:
        t, free, per = self.topo, self.free, self.topo.cpus_per_socket()
        return [s for s in self.socket_order() if _pc(t.socket_bits[s] & free) == per]

    def free_numa_nodes(self) -> List[int]:
        t, free = self.topo, self.free
        return [n for n in self.numa_order() if t.node_bits[n] & free == t.node_bits[n]]

    def free_cores(self) -> List[int]:
        t, free, per = self.topo, self.free, self.topo.cpus_per_core()
        return [c for c in self.core_order() if _pc(t.core_bits[c] & free) == per]

    def free_uncore_caches(self) -> List[int]:
        t, free = self.topo, self.free
        return [u for u in self.uncore_order() if t.uncore_bits[u] & free == t.uncore_bits[u]]

    # -- taking whole units --------------------------------------------------
    def _take_whole(self, ids: List[int], table) -> None:
        for i in ids:
            bits = table[i]
            # A unit listed twice (it spans two parents) or not wholly free is
            # skipped, so the result never double-counts or leaves the free set.
            if bits & ~self.free or not self.needs_at_least(_pc(bits)):
                continue
            self.take(bits)

    def take_full_numa_nodes(self) -> None:
        self._take_whole(self.free_numa_nodes(), self.topo.node_bits)

    def take_full_sockets(self) -> None:
        self._take_whole(self.free_sockets(), self.topo.socket_bits)

    def take_full_cores(self) -> None:
        self._take_whole(self.free_cores(), self.topo.core_bits)

    def take_full_uncore_caches(self) -> None:
        self._take_whole(self.free_uncore_caches(), self.topo.uncore_bits)

    def take_partial_uncore(self, uncore: int) -> None:
        """Take ``need`` CPUs from the lowest free cores of ``uncore`` only if that fits exactly."""
        t = self.topo
        per_core = t.cpus_per_core()
        cores_needed = -(-self.need // per_core) if per_core else self.need
        ubits = t.uncore_bits[uncore] & self.free
        cores = sorted({t.details[c].core for c in bit_ids(ubits)})[:cores_needed]
        cand = 0
        for c in cores:
            cand |= t.core_bits[c] & self.free
        if self.need % 2 != 0 and per_core > 1:
            ids = bit_ids(cand)
            if len(ids) > self.need:
                cand &= ~(1 << ids[-1])
        if _pc(cand) == self.need:
            self.take(cand)

    def take_uncore_caches(self) -> None:
        per_uncore = self.topo.cpus_per_uncore()
        for u in self.uncore_order():
            if self.needs_at_least(per_uncore):
                self.take_full_uncore_caches()
            if self.satisfied():
                return
            self.take_partial_uncore(u)
            if self.satisfied():
                return

    def take_remaining_cpus(self) -> None:
        for cpu in self.free_cpus():
            if not (self.free >> cpu) & 1:
                continue
            self.take(1 << cpu)
            if self.satisfied():
                return


def _not_enough(count: int, available: int) -> AllocationError:
    return AllocationError(
        f"not enough cpus available to satisfy request: requested={count}, available={_pc(available)}")


def _bits(cpus) -> int:
    return cpus.bits if isinstance(cpus, CPUSet) else CPUSet(cpus).bits


def take_packed_bits(topo: CPUTopology, available: int, count: int, spread: bool = False,
                     uncore: bool = False) -> int:
    """:func:`take_packed` on bitmaps."""
    acc = Accumulator(topo, available, count, spread)
    if acc.satisfied():
        return acc.result
    if acc.failed():
        raise _not_enough(count, available)
    if topo.numa_first():
        acc.take_full_numa_nodes()
        if acc.satisfied():
            return acc.result
        acc.take_full_sockets()
    else:
        acc.take_full_sockets()
        if acc.satisfied():
            return acc.result
        acc.take_full_numa_nodes()
    if acc.satisfied():
        return acc.result
    if uncore:
        acc.take_uncore_caches()
        if acc.satisfied():
            return acc.result
    if not spread:
        acc.take_full_cores()
        if acc.satisfied():
            return acc.result
    acc.take_remaining_cpus()
    if acc.satisfied():
        return acc.result
    raise AllocationError("failed to allocate cpus")


def take_packed(topo: CPUTopology, available, count: int, spread: bool = False,
                uncore: bool = False) -> CPUSet:
    """``count`` CPUs out of ``available``, packed (``takeByTopologyNUMAPacked``).

    ``spread`` is the ``distribute-cpus-across-cores`` ordering (no whole-core
    step); ``uncore`` the ``prefer-align-cpus-by-uncorecache`` step.
    Raises :class:`AllocationError` when ``available`` is too small.
    """
    return CPUSet.from_bits(take_packed_bits(topo, _bits(available), count, spread, uncore))


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


def take_by_topology(topo: CPUTopology, available, count: int, options: Optional[Mapping] = None) -> CPUSet:
    """Pick ``count`` CPUs as the static policy does for the given option flags.

    ``options`` keys are the kubelet option names with boolean values
    (absent = off); ``cpu_group_size`` overrides the distributed group size,
    which is otherwise CPUs-per-core with ``full-pcpus-only`` and 1 without.
    """
    opts = options or {}
    if count < 0:
        raise ValueError(f"negative CPU count {count}")
    spread = bool(opts.get("distribute-cpus-across-cores"))
    if opts.get("distribute-cpus-across-numa"):
        group = opts.get("cpu_group_size")
        if group is None:
            group = topo.cpus_per_core() if opts.get("full-pcpus-only") else 1
        return take_distributed(topo, available, count, max(int(group), 1), spread)
    return take_packed(topo, available, count, spread, bool(opts.get("prefer-align-cpus-by-uncorecache")))
