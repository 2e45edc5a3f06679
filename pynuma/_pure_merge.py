"""Pure-Python twin of the native hint-merge core (``native/pn_merge.c``).

``merge(default, lists, closest, dist, budget)`` returns exactly what the
kubelet's exhaustive merge (fold of ``compare`` over the cross product of
the lists) returns, without walking the cross product:

1. The fold is a minimum over a total order.  A *preferred* merged hint
   beats every non-preferred one; preferred ones are ranked by the mask
   order T (narrowest: (count, value); closest: (count, distance sum,
   value)).  Non-preferred ones are ranked by "count equal to B first, then
   counts below B from high to low, then counts above B from low to high",
   ties by T — the case analysis of the kubelet's ``compare`` (B = the
   largest of the lists' narrowest hint counts) is exactly that order.
2. A permutation is preferred iff all its hints are preferred and all its
   non-nil masks are equal, so the preferred candidates are read off the
   lists in linear time: a mask M qualifies when every list holds a
   preferred M or a preferred nil hint.
3. Only when no preferred candidate exists do we need the set of
   achievable ANDs.  It is built list by list with duplicates removed
   (sparse), or, on machines of at most ``DENSE_MAX`` nodes when that
   would exceed ``budget`` operations or cost more than the transforms,
   by superset-sum transforms over all 2**n masks (dense: counts of pairs
   whose AND is exactly R via zeta/Moebius, exact in 64 bits).  Above both
   limits a deterministic beam (at most ~``budget`` ANDs per list) keeps
   the states closest to B and the answer is flagged inexact.

Masks are ints (bit i = node i); a nil affinity is ``-1``.  ``lists`` is a
sequence of ``(masks, prefs)`` pairs (``prefs`` a bytes/list of 0/1).
``dist`` is a square matrix indexed by bit position (or ``None``).
Returns ``(mask, preferred, exact)``.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

from ._bitset import iter_bits
from ._bitset import popcount as _popcount

DENSE_MAX = 20  # 2**20 masks of uint64 counts: 8 MiB per array
BEAM_WIDTH = 4096
BEAM_MIN = 16


def _distsum(mask: int, dist) -> int:
    ids = []
    m = mask
    while m:
        low = m & -m
        ids.append(low.bit_length() - 1)
        m ^= low
    total = 0
    for i in ids:
        row = dist[i]
        for j in ids:
            total += row[j]
    return total


def _tkey(mask: int, closest: bool, dist) -> tuple:
    return (_popcount(mask), _distsum(mask, dist) if closest else 0, mask)


def _npkey(mask: int, best_np: int, closest: bool, dist) -> tuple:
    k = _popcount(mask)
    if k == best_np:
        rank = 0
    elif k < best_np:
        rank = best_np - k
    else:
        rank = k
    return (rank, _distsum(mask, dist) if closest else 0, mask)


def best_non_preferred_count(lists) -> int:
    """Largest, over the lists, of the node count of the list's narrowest non-nil hint (0 if none)."""
    best = 0
    for masks, _prefs in lists:
        mn = -1
        for mk in masks:
            if mk >= 0:
                c = _popcount(mk)
                if mn < 0 or c < mn:
                    mn = c
        if mn > best:
            best = mn
    return best


def _preferred_candidates(default: int, lists) -> List[int]:
    pref_nil = []
    pref_sets = []
    for masks, prefs in lists:
        s = set()
        nil = False
        for mk, p in zip(masks, prefs):
            if p:
                if mk < 0:
                    nil = True
                else:
                    s.add(mk)
        pref_nil.append(nil)
        pref_sets.append(s)
    out = []
    if all(pref_nil):  # every list can say "anywhere": the all-nil permutation merges to default
        if default:
            out.append(default)
    seen = set()
    for s in pref_sets:
        for mk in s:
            if mk in seen:
                continue
            seen.add(mk)
            if all(nil or mk in ps for nil, ps in zip(pref_nil, pref_sets)):
                merged = mk & default
                if merged:
                    out.append(merged)
    return out


def _trimmed(default: int, masks) -> List[int]:
    seen = set()
    out = []
    for mk in masks:
        t = default if mk < 0 else mk & default
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def _sparse_bound_exceeds(ndef: int, lengths, budget: int, strategy: str = "auto") -> bool:
    """Go dense: an upper bound of the sparse work (states x hints per step) exceeds ``budget``,
    or the transforms are cheaper than that bound."""
    bound, cap = 1, 1 << ndef
    sparse_cost = dense_cost = 0
    for n in lengths:
        if bound * n > budget:
            return strategy != "sparse"
        sparse_cost += bound * n
        dense_cost += n + 3 * ndef * cap
        bound = min(bound * n, cap)
    return strategy == "dense" or (strategy == "auto" and dense_cost < sparse_cost)


def _sparse(default: int, tlists, budget: int):
    """Achievable non-empty ANDs by deduplicated list-by-list expansion, or None over budget."""
    states = [default]
    for masks in tlists:
        if len(states) * len(masks) > budget:
            return None
        nxt = set()
        for s in states:
            for mk in masks:
                r = s & mk
                if r:
                    nxt.add(r)
        states = sorted(nxt)
    return states


def _to_compact(mask: int, bits: Sequence[int]) -> int:
    c = 0
    for pos, b in enumerate(bits):
        if (mask >> b) & 1:
            c |= 1 << pos
    return c


def _from_compact(c: int, bits: Sequence[int]) -> int:
    m = 0
    for pos, b in enumerate(bits):
        if (c >> pos) & 1:
            m |= 1 << b
    return m


def _zeta_sup(f: list, n: int) -> None:
    size = 1 << n
    for i in range(n):
        bit = 1 << i
        for m in range(size):
            if not m & bit:
                f[m] += f[m | bit]


def _moebius_sup(f: list, n: int) -> None:
    size = 1 << n
    for i in range(n):
        bit = 1 << i
        for m in range(size):
            if not m & bit:
                f[m] -= f[m | bit]


def _dense(default: int, tlists) -> List[int]:
    """Achievable non-empty ANDs via superset transforms over the 2**n masks of ``default``."""
    bits = list(iter_bits(default))
    n = len(bits)
    size = 1 << n
    reach = [0] * size
    reach[size - 1] = 1  # the AND of nothing is all nodes
    for masks in tlists:
        ind = [0] * size
        for mk in masks:
            ind[_to_compact(mk, bits)] = 1
        _zeta_sup(reach, n)
        _zeta_sup(ind, n)
        prod = [a * b for a, b in zip(reach, ind)]
        _moebius_sup(prod, n)
        reach = [1 if v else 0 for v in prod]
    return [_from_compact(c, bits) for c in range(1, size) if reach[c]]


def _beam(default: int, tlists, best_np: int, closest: bool, dist, width: int) -> List[int]:
    states = [default]
    for masks in tlists:
        nxt = set()
        for s in states:
            for mk in masks:
                r = s & mk
                if r:
                    nxt.add(r)
        ordered = sorted(nxt, key=lambda r: (abs(_popcount(r) - best_np), r))
        states = ordered[:width]
    return states


def merge(default: int, lists, closest: bool, dist, budget: int, strategy: str = "auto") -> Tuple[int, bool, bool]:
    """The kubelet's merged best hint as ``(mask, preferred, exact)`` (see the module doc).

    ``strategy`` ``"sparse"`` / ``"dense"`` only forces the choice between the two
    exact searches (tests compare them); the answer never depends on it.
    """
    if strategy not in ("auto", "sparse", "dense"):
        raise KeyError(strategy)
    if closest and dist is None:
        raise ValueError("closest comparison needs a distance matrix")
    lists = [(list(masks), list(prefs)) for masks, prefs in lists]
    if any(len(masks) == 0 for masks, _ in lists):  # empty cross product: nothing to compare
        return default, False, True
    cands = _preferred_candidates(default, lists)
    if cands:
        return min(cands, key=lambda r: _tkey(r, closest, dist)), True, True
    best_np = best_non_preferred_count(lists)
    exact = True
    ndef = _popcount(default)
    if ndef <= DENSE_MAX and _sparse_bound_exceeds(ndef, [len(m) for m, _ in lists], budget, strategy):
        states = _dense(default, [_trimmed(default, masks) for masks, _ in lists])
        if not states:
            return default, False, True
        return min(states, key=lambda r: _npkey(r, best_np, closest, dist)), False, True
    tlists = [_trimmed(default, masks) for masks, _ in lists]
    states = _sparse(default, tlists, budget)
    if states is None:
        if _popcount(default) <= DENSE_MAX:
            states = _dense(default, tlists)
        else:
            # bounded: at most ~budget ANDs per list, so the beam narrows as the lists grow
            longest = max([1] + [len(t) for t in tlists])
            width = max(BEAM_MIN, min(BEAM_WIDTH, budget // longest))
            states = _beam(default, tlists, best_np, closest, dist, width)
            exact = False
    if not states:
        return default, False, exact
    return min(states, key=lambda r: _npkey(r, best_np, closest, dist)), False, exact


def merge_hints(default: int, hint_lists, closest: bool, dist, budget: int,
                strategy: str = "auto") -> Tuple[int, bool, bool]:
    """:func:`merge` straight from lists of hints (``.numa_affinity`` None = nil, ``.preferred``)."""
    lists = [([-1 if (a := h.numa_affinity) is None else a._bits for h in lst],
              bytes([1 if h.preferred else 0 for h in lst])) for lst in hint_lists]
    return merge(default, lists, closest, dist, budget, strategy)
