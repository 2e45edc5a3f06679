"""Merging providers' hints into one best hint, as the kubelet's Topology Manager does.

Named steps, each usable on its own:

1. :func:`filter_providers_hints` — providers' answers -> one hint list per
   resource (no preference -> ``[any, preferred]``; no placement ->
   ``[any, not preferred]``).
2. :func:`iterate_permutations` — the cross product of the lists.
3. :func:`merge_permutation` — AND of a permutation's masks; preferred iff
   every hint is preferred and every non-nil mask is the same.
4. :class:`HintMerger` ``.compare`` — pick the best (the kubelet's rules).

:meth:`HintMerger.merge_exhaustive` is that fold, literally (exponential);
:meth:`HintMerger.merge` gives the same answer through the merge core
(``pynuma._native_merge`` / ``pynuma._pure_merge``) without enumerating the
cross product.
"""
from __future__ import annotations

import itertools
from typing import Iterator, List, Optional, Sequence, Tuple

from ... import _impl
from .bitmask import NUMAMask
from .hints import ProviderHints, TopologyHint
from .numa_info import NUMAInfo

HintLists = List[List[TopologyHint]]

# Sparse-expansion budget (AND operations) before the core switches strategy.
MERGE_BUDGET = 8_000_000
NATIVE_BITS = 64  # the native core works on uint64 masks


def filter_providers_hints(providers: Sequence[ProviderHints]) -> HintLists:
    """Step 1: one hint list per (provider, resource), in provider order."""
    out: HintLists = []
    for hints in providers:
        if not hints:  # None or {}: the provider has no preference at all
            out.append([TopologyHint(None, True)])
            continue
        for _res, lst in hints.items():
            if lst is None:
                out.append([TopologyHint(None, True)])
            elif len(lst) == 0:
                out.append([TopologyHint(None, False)])
            else:  # read-only from here on: a list is kept as it is, not copied
                out.append(lst if type(lst) is list else list(lst))
    return out


def filter_single_numa_hints(lists: HintLists) -> HintLists:
    """single-numa-node pre-filter: keep preferred hints that are nil or name one node."""
    return [[h for h in lst if h.preferred and (h.numa_affinity is None or h.numa_affinity.count() == 1)]
            for lst in lists]


def max_of_min_affinity_counts(lists: HintLists) -> int:
    """Largest, over the lists, of the node count of the list's narrowest non-nil hint (0 if none)."""
    best = 0
    for lst in lists:
        counts = [h.numa_affinity.count() for h in lst if h.numa_affinity is not None]
        if counts and min(counts) > best:
            best = min(counts)
    return best


def iterate_permutations(lists: HintLists) -> Iterator[Tuple[TopologyHint, ...]]:
    """Step 2: every permutation, first list outermost (zero lists -> one empty permutation)."""
    return itertools.product(*lists)


def merge_permutation(default: NUMAMask, permutation: Sequence[TopologyHint]) -> TopologyHint:
    """Step 3: AND of the masks (nil = ``default``); preferred iff all preferred and all non-nil masks equal."""
    preferred = True
    bits = default.bits
    first: Optional[NUMAMask] = None
    for h in permutation:
        if h.numa_affinity is not None:
            bits &= h.numa_affinity.bits
            if first is None:
                first = h.numa_affinity
            elif h.numa_affinity != first:
                preferred = False
        if not h.preferred:
            preferred = False
    return TopologyHint(NUMAMask.from_bits(bits), preferred)


class HintMerger:
    """Step 4 and the whole merge for one policy on one machine."""

    def __init__(self, info: NUMAInfo, lists: HintLists, policy_name: str, prefer_closest: bool = False) -> None:
        self.info = info
        self.lists = lists
        self.closest = bool(prefer_closest) and policy_name != "single-numa-node"
        if self.closest and not info.has_distances:
            raise ValueError("prefer-closest-numa-nodes needs NUMA distances")
        self._best_np: Optional[int] = None

    @property
    def best_non_preferred_count(self) -> int:
        """The kubelet's ``maxOfMinAffinityCounts`` of the lists, counted on first use
        (only :meth:`compare` needs it; the merge core counts for itself)."""
        if self._best_np is None:
            self._best_np = max_of_min_affinity_counts(self.lists)
        return self._best_np

    @best_non_preferred_count.setter
    def best_non_preferred_count(self, value: int) -> None:
        self._best_np = value

    def compare_masks(self, current: TopologyHint, candidate: TopologyHint) -> TopologyHint:
        """Equal masks keep ``current``; else the narrowest (or closest) mask wins."""
        cur, cand = current.numa_affinity, candidate.numa_affinity
        if cand == cur:
            return current
        best = self.info.closest(cur, cand) if self.closest else self.info.narrowest(cur, cand)
        return current if best == cur else candidate

    def compare(self, current: Optional[TopologyHint], candidate: TopologyHint) -> Optional[TopologyHint]:
        """The kubelet's ``HintMerger.compare``: which of current best / candidate to keep."""
        if candidate.numa_affinity is None or candidate.numa_affinity.count() == 0:
            return current
        if current is None:
            return candidate
        if not current.preferred and candidate.preferred:
            return candidate
        if current.preferred and not candidate.preferred:
            return current
        if current.preferred and candidate.preferred:
            return self.compare_masks(current, candidate)
        b = self.best_non_preferred_count
        c = current.numa_affinity.count()
        k = candidate.numa_affinity.count()
        if c > b:
            return self.compare_masks(current, candidate)
        if c == b:
            return self.compare_masks(current, candidate) if k == b else current
        if k > b:
            return current
        if k == b:
            return candidate
        if k > c:
            return candidate
        if k < c:
            return current
        return self.compare_masks(current, candidate)

    def merge_exhaustive(self) -> TopologyHint:
        """The kubelet's fold over the whole cross product (exponential: the oracle)."""
        default = self.info.default_mask()
        best: Optional[TopologyHint] = None
        for perm in iterate_permutations(self.lists):
            best = self.compare(best, merge_permutation(default, perm))
        return best if best is not None else TopologyHint(default, False)

    def merge(self) -> TopologyHint:
        """Same answer as :meth:`merge_exhaustive`, through the merge core."""
        return self.merge_ex()[0]

    def merge_ex(self, impl=None) -> Tuple[TopologyHint, bool]:
        """``(best hint, exact)``; ``exact`` is False only when a huge machine forced the bounded search."""
        default = self.info.default_mask()
        core = impl or _impl.select("merge")
        if default.bits.bit_length() <= NATIVE_BITS or not core.__name__.startswith("pynuma._native_"):
            dist = self._dist_matrix(default, None) if self.closest else None
            try:  # one pass over the hints inside the core
                mask, preferred, exact = core.merge_hints(default.bits, self.lists, self.closest, dist,
                                                          MERGE_BUDGET)
                return TopologyHint(NUMAMask.from_bits(mask), bool(preferred)), bool(exact)
            except OverflowError:  # a hint names a node past bit 63: relabel below
                pass
        raw = [[-1 if (a := h.numa_affinity) is None else a._bits for h in lst] for lst in self.lists]
        prefs = [bytes([h.preferred for h in lst]) for lst in self.lists]
        used = default.bits
        for r in raw:
            for v in r:
                if v > 0:
                    used |= v
        ids = list(NUMAMask.from_bits(used))
        if len(ids) > NATIVE_BITS:
            core, bits = _impl.implementations("merge")["pure"], None
        else:
            bits = ids  # order-preserving relabelling keeps counts, equality and value order
        enc = _encoder(bits)
        if bits is not None:
            raw = [[-1 if v < 0 else enc(v) for v in r] for r in raw]
        dist = self._dist_matrix(default, bits) if self.closest else None
        mask, preferred, exact = core.merge(enc(default.bits), list(zip(raw, prefs)), self.closest, dist,
                                            MERGE_BUDGET)
        if bits is not None:
            mask = sum(1 << bits[p] for p in range(len(bits)) if (mask >> p) & 1)
        return TopologyHint(NUMAMask.from_bits(mask), bool(preferred)), bool(exact)

    def _dist_matrix(self, default: NUMAMask, bits: Optional[List[int]]) -> List[List[int]]:
        ids = list(default)
        pos = {i: (i if bits is None else bits.index(i)) for i in ids}
        width = (max(pos.values()) + 1) if pos else 0
        m = [[0] * width for _ in range(width)]
        for i in ids:
            for j in ids:
                m[pos[i]][pos[j]] = self.info.distances[i][j]
        return m


def _encoder(bits: Optional[List[int]]):
    if bits is None:
        return lambda v: v
    where = {b: p for p, b in enumerate(bits)}

    def enc(v: int) -> int:
        out = 0
        while v:
            low = v & -v
            out |= 1 << where[low.bit_length() - 1]
            v ^= low
        return out

    return enc
