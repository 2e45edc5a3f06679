"""Picking CPUs the way the kubelet's CPU Manager does (``takeByTopology``).

Two algorithms, both pure functions of (topology, available CPUs, count):

* :func:`take_packed` — whole NUMA nodes / sockets first, then (optionally)
  whole uncore caches, whole cores, then single threads, always preferring
  the most-used unit so allocations pack together;
* :func:`pynuma.policy.cpumanager.distribute.take_distributed` —
  ``distribute-cpus-across-numa``: spread the request evenly over the fewest
  NUMA nodes, in groups of ``group_size``.

The :class:`Accumulator` holds the free CPUs as one integer bitmap and
derives every ordering from the topology's per-unit bitmaps.

>>> from pynuma.policy.cpumanager.topology import CPUTopology
>>> t = CPUTopology.from_cpus([(c, 0, 0, c % 4, 0) for c in range(8)])
>>> str(take_packed(t, t.cpus(), 2))
'0,4'
"""
from __future__ import annotations

from typing import Iterable, List, Tuple

from ...cpuset import CPUSet
from ...errors import AllocationError
from .topology import CPUTopology, bit_ids

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
