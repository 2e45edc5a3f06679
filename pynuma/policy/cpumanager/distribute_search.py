"""Which NUMA nodes ``distribute-cpus-across-numa`` picks, without trying every subset.

The kubelet (``takeByTopologyNUMADistributed``) tries, for k nodes, every
k-combination of the NUMA order and, when ``count`` does not divide evenly,
every subset of each combination for the remainder: 3**16 trials on a
16-node machine.  Its answer is the first (combination, subset) in that
enumeration whose balance score equals the best one.  This module finds the
same pair with dynamic programming over the nodes in order:

* The score is a non-decreasing function of Q = the sum of squares of the
  free CPUs left per node (the total left is fixed), so "best score" is
  "Q at most T", T the largest Q with the best score's rounded value.
* A remainder subset S, handed ``r`` groups round-robin, ends with every
  member holding ``min(cap, t)`` groups except the first few members with
  ``cap > t``, which hold ``t + 1``: each node of a combination is *out*,
  *in* (dist only), *saturated* (all its ``cap`` groups, ``cap <= t``),
  *high* (``t + 1``) or *low* (``t``), highs before lows.  Every subset is
  one such assignment for ``t = max groups - 1 < r`` and every assignment is
  exactly one subset's round-robin, so the layered min-plus tables over
  (nodes still to choose, groups still to hand out, low seen) give the exact
  best Q for each ``t``.
* The kubelet's "first found" is a lexicographic order of positions, so the
  winner is rebuilt left to right: take a node whenever some completion
  still reaches T (the suffix tables say so), first for the combination,
  then, with the combination fixed, for the largest subset size that
  reaches T.

A k with no valid combination is skipped after one look at the k fullest
nodes.  The tables are plain arithmetic and come from the min-plus core
(``native/pn_minplus.c``, pure twin ``pynuma._pure_minplus``); what each
option means lives here.  Positions are indexes into the NUMA order.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ... import _impl

INF = 1 << 62

# option kinds: how a node's role interacts with "highs before lows" (see _pure_minplus)
NEUTRAL, HIGH, LOW = 0, 1, 2

Option = Tuple[int, int, int, int]  # (joins: 0/1, groups, cost, kind)


class _Layer:
    """One round-robin level: its options per position and their suffix table (flat)."""

    __slots__ = ("opts", "tab", "J", "W")

    def __init__(self, opts: List[List[Option]], J: int, X: int, j_least: int = -1) -> None:
        self.opts, self.J, self.W = opts, J, X + 1
        self.tab = _impl.select("minplus").suffix_tables(opts, J, X, j_least)

    def at(self, i: int, ph: int, j: int, x: int) -> int:
        return self.tab[((i * 2 + ph) * (self.J + 1) + j) * self.W + x]


def _lex_first(layers: Sequence[_Layer], J: int, X: int, budget: int) -> List[int]:
    """Positions of the lexicographically first choice of ``J`` members whose cost is at most
    ``budget`` in some layer; the layers' tables must admit one."""
    states: Dict[tuple, int] = {(li, 0, J, X): 0 for li in range(len(layers))}
    chosen: List[int] = []
    for i in range(len(layers[0].opts)):
        for want in (1, 0):
            new: Dict[tuple, int] = {}
            for (li, ph, j, x), spent in states.items():
                layer = layers[li]
                for dj, dx, cost, kind in layer.opts[i]:
                    if dj != want or dj > j or dx > x or (kind == HIGH and ph):
                        continue
                    ph2 = 1 if kind == LOW else ph
                    total = spent + cost
                    if total + layer.at(i + 1, ph2, j - dj, x - dx) > budget:
                        continue
                    key = (li, ph2, j - dj, x - dx)
                    if total < new.get(key, INF):
                        new[key] = total
            if new:
                states = new
                if want:
                    chosen.append(i)
                break
        else:  # pragma: no cover - the tables promised a completion
            raise AssertionError("distributed search lost its completion")
    return chosen


def _member_options(f: int, dist: int, group: int, t: int, idle_member: bool) -> List[Option]:
    """A node's remainder roles at level ``t``; cost is the square of the CPUs it keeps free.

    ``idle_member``: at t = 0 a subset member past the first r gets nothing but is
    still in the subset (it matters when choosing the subset, not the combination).
    """
    a = f - dist
    cap = a // group
    out: List[Option] = []
    if cap >= 1 and cap <= t:
        out.append((1, cap, (a - group * cap) ** 2, NEUTRAL))
    if cap > t:
        out.append((1, t + 1, (a - group * (t + 1)) ** 2, HIGH))
        if t >= 1 or idle_member:
            out.append((1, t, (a - group * t) ** 2, LOW))
    return out


def _levels(caps: Sequence[int], r: int) -> range:
    """The round-robin levels worth trying: t = (most groups any member gets) - 1."""
    return range(max(1, min(r, max(caps, default=0))))


def _feasible(free: Sequence[int], caps: Sequence[int], k: int, dist: int, r: int) -> bool:
    """Whether any k-combination works: the k fullest nodes hold ``dist`` each and ``r`` more groups.

    Fuller nodes hold at least as many groups, so if the k fullest fail every combination
    fails; if they pass, handing the remainder round-robin over all of them works.
    """
    top = sorted(range(len(free)), key=lambda i: free[i], reverse=True)[:k]
    return len(top) == k and free[top[-1]] >= dist and sum(caps[i] for i in top) >= r


def threshold(score: Callable[[int], int], q_best: int, q_max: int) -> int:
    """The largest Q in [q_best, q_max] whose score equals ``score(q_best)`` (score non-decreasing)."""
    want = score(q_best)
    lo, hi = q_best, max(q_best, q_max)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if score(mid) == want:
            lo = mid
        else:
            hi = mid - 1
    return lo


def choose(free: Sequence[int], k: int, dist: int, group: int, count: int,
           score: Callable[[int], int]) -> Optional[Tuple[Tuple[int, ...], Optional[Tuple[int, ...]], bool]]:
    """The kubelet's (combination, remainder subset, perfect) for ``k`` nodes, as positions in ``free``.

    ``free`` is the free CPU count per node in NUMA order, ``score(Q)`` the balance
    score of leaving Q as the sum of squares.  None when no k-combination works;
    the subset is None when ``count`` divides evenly; ``perfect`` says the best
    score is 0 (the kubelet then stops at the next combination).
    """
    r = (count - dist * k) // group
    caps = [(f - dist) // group if f >= dist else 0 for f in free]
    if not _feasible(free, caps, k, dist, r):
        return None
    layers = []
    q_best = INF
    for t in _levels(caps, r):
        opts: List[List[Option]] = []
        for f in free:
            o: List[Option] = [(0, 0, f * f, NEUTRAL)]
            if f >= dist:
                o.append((1, 0, (f - dist) ** 2, NEUTRAL))
                o += _member_options(f, dist, group, t, False)
            opts.append(o)
        layer = _Layer(opts, k, r)
        q_best = min(q_best, layer.at(0, 0, k, r))
        layers.append(layer)
    if q_best >= INF:
        return None
    budget = threshold(score, q_best, sum(f * f for f in free))
    combo = _lex_first(layers, k, r, budget)
    perfect = score(q_best) == 0
    if r == 0:
        return tuple(combo), None, perfect
    return tuple(combo), _remainder_subset(free, combo, dist, group, r, budget), perfect


def _remainder_subset(free: Sequence[int], combo: Sequence[int], dist: int, group: int, r: int,
                      budget: int) -> Tuple[int, ...]:
    """First subset (largest size, then lexicographic) of the combination reaching ``budget``."""
    members = set(combo)
    fixed = sum(f * f for i, f in enumerate(free) if i not in members)
    caps = [(free[i] - dist) // group for i in combo]
    cand = sum(1 for c in caps if c >= 1)
    layers = []
    for t in _levels(caps, r):
        opts = []
        for i in combo:
            a = free[i] - dist
            opts.append([(0, 0, a * a, NEUTRAL)] + _member_options(free[i], dist, group, t, True))
        layers.append(_Layer(opts, cand, r, 1))
    for size in range(cand, 0, -1):
        if min(layer.at(0, 0, size, r) for layer in layers) + fixed <= budget:
            picked = _lex_first(layers, size, r, budget - fixed)
            return tuple(combo[p] for p in picked)
    raise AssertionError("distributed search: the combination has no remainder subset")  # pragma: no cover
