"""The kubelet's distributed node choice by full enumeration (test oracle for distribute_search).

A direct transcription of ``takeByTopologyNUMADistributed``'s search at the level of
positions in the NUMA order: every k-combination, and for a remainder every subset of
its candidates, handed out round-robin; strictly lower balance wins, first found kept.
Exponential (3**n per k): only for machines small enough.
"""
from __future__ import annotations

import math
from itertools import combinations

from pynuma.policy.cpumanager.distribute import _std_milli


def _round_robin(after, subset, rem, group):
    """``after`` once ``rem`` CPUs went round-robin over ``subset`` in ``group``s, or None if stuck."""
    trial = list(after)
    while rem > 0:
        moved = False
        for i in subset:
            if rem == 0:
                break
            if trial[i] < group:
                continue
            trial[i] -= group
            rem -= group
            moved = True
        if not moved:
            return None
    return trial


def enumerate_choice(free, k, dist, group, count):
    """(combination, remainder subset or None) as positions, or None: the kubelet's enumeration."""
    n, total = len(free), sum(free)

    def score(values):
        return _std_milli(total - count, sum(v * v for v in values), n)

    best, best_combo, best_rem = math.inf, None, None
    for combo in combinations(range(n), k):
        if best == 0:
            break
        fs = [free[i] for i in combo]
        if sum(fs) < count or sum(f // group for f in fs) * group < count or min(fs) < dist:
            continue
        after = list(free)
        for i in combo:
            after[i] -= dist
        rem = count - dist * k
        local, local_rem = (score(after), None) if rem == 0 else (math.inf, None)
        cand = [i for i in combo if after[i] >= group]
        for size in range(len(cand), 0, -1) if rem else ():
            for subset in combinations(cand, size):
                if sum(after[i] for i in subset) < rem:
                    continue
                trial = _round_robin(after, subset, rem, group)
                if trial is None:
                    continue
                s = score(trial)
                if s < local:
                    local, local_rem = s, subset
        if local < best:
            best, best_combo, best_rem = local, combo, local_rem
    return None if best_combo is None else (best_combo, best_rem, best == 0)


class GoSlice:
    """A Go ``[]int``: a window on a backing list that later appends may share and overwrite.

    ``append`` writes in place while the backing list has room, else copies into a
    new one of twice the capacity (1, 2, 4, 8, ... for small int slices), as Go does.
    """

    def __init__(self, backing: list, length: int) -> None:
        self.backing, self.length = backing, length

    def append(self, value) -> "GoSlice":
        if self.length < len(self.backing):
            self.backing[self.length] = value
            return GoSlice(self.backing, self.length + 1)
        grown = self.backing[:self.length] + [value] + [None] * (max(1, 2 * len(self.backing)) - self.length - 1)
        return GoSlice(grown, self.length + 1)

    def values(self) -> tuple:
        """What the slice holds now."""
        return tuple(self.backing[:self.length])


def go_combinations(items, k):
    """``iterateCombinations``: every k-combination of ``items`` as a :class:`GoSlice`, built the
    kubelet's way (each level appends to its parent's slice), so a slice kept while the walk goes
    on may change under its keeper."""
    def walk(k, start, accum):
        if k == 0:
            yield accum
            return
        for i in range(start, len(items) - k + 1):
            yield from walk(k - 1, i + 1, accum.append(items[i]))

    if k >= 1:
        yield from walk(k, 0, GoSlice([], 0))
