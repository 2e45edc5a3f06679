"""Pure-Python twin of ``native/pn_minplus.c``: suffix tables of a layered min-plus program.

``suffix_tables(opts, J, X, j_least)``: ``opts[i]`` lists position i's options as
``(join, groups, cost, kind)`` (join 0/1; kind 0 neutral, 1 high, 2 low).  Returns a
flat sequence where cell ``((i * 2 + phase) * (J + 1) + j) * (X + 1) + x`` is the least
total cost of positions ``i..`` picking exactly ``j`` joining options and ``x`` groups;
a high option is barred in phase 1 and a low one moves to phase 1.  Impossible cells
hold :data:`INF`.  Only cells a walk from position 0 with ``j >= j_least`` can reach are
computed (``j_least < 0`` means ``J``); the rest stay INF.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

INF = 1 << 62
HIGH, LOW = 1, 2


def suffix_tables(opts: Sequence[Sequence[Tuple[int, int, int, int]]], J: int, X: int,
                  j_least: int = -1) -> List[int]:
    """The flat table described in the module docstring."""
    if J < 0 or X < 0 or J > 4096 or X > 4096:
        raise ValueError("table dimensions out of range")
    for o in opts:
        for dj, dx, cost, _kind in o:
            if dj not in (0, 1) or dx < 0 or cost < 0 or cost >= INF // 2:
                raise ValueError(f"bad option {(dj, dx, cost, _kind)}")
    W = X + 1
    n = len(opts)
    blank = [INF] * W
    rows_next = [[[0] + [INF] * X] + [blank] * J for _ in (0, 1)]
    layers = [rows_next]
    joinable = 0
    jl = J if j_least < 0 else j_least
    for i in range(n - 1, -1, -1):
        if any(o[0] for o in opts[i]):
            joinable += 1
        lo, hi = max(0, jl - i), min(J, joinable)
        cur = ([blank] * (J + 1), [blank] * (J + 1))
        for ph in (0, 1):
            rows = cur[ph]
            for j in range(lo, hi + 1):
                cands = []
                for dj, dx, cost, kind in opts[i]:
                    if dj > j or dx > X or (kind == HIGH and ph):
                        continue
                    row = rows_next[1 if kind == LOW else ph][j - dj]
                    if row is blank:
                        continue
                    cands.append(blank[:dx] + [v + cost if v < INF else INF for v in row[:W - dx]])
                if len(cands) == 1:
                    rows[j] = cands[0]
                elif cands:
                    rows[j] = list(map(min, *cands))
        layers.append(cur)
        rows_next = cur
    flat: List[int] = []
    for cur in reversed(layers):
        for rows in cur:
            for row in rows:
                flat += row
    return flat
