"""NUMA nodes and distances as the Topology Manager uses them (``prefer-closest-numa-nodes``).

>>> info = NUMAInfo.from_matrix([0, 1], [[10, 11], [11, 10]])
>>> info.average_distance(NUMAMask([0, 1]))
10.5
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .bitmask import NUMAMask, narrowest


@dataclass(frozen=True)
class NUMAInfo:
    """The machine's NUMA node ids and (optionally) their SLIT distances ``distances[i][j]``."""

    nodes: Tuple[int, ...]
    distances: Optional[Mapping[int, Mapping[int, int]]] = field(default=None, compare=False)

    @classmethod
    def from_matrix(cls, nodes: Iterable[int], matrix: Optional[Sequence[Sequence[int]]]) -> "NUMAInfo":
        """Nodes plus a square matrix whose row/column k belongs to the k-th node id (ascending)."""
        ids = tuple(sorted(int(n) for n in nodes))
        if matrix is None:
            return cls(ids, None)
        dist: Dict[int, Dict[int, int]] = {}
        if len(matrix) == len(ids) and all(len(row) == len(ids) for row in matrix):
            for i, row in zip(ids, matrix):
                dist[i] = {j: int(v) for j, v in zip(ids, row)}
        elif ids and len(matrix) > ids[-1] and all(len(matrix[i]) > ids[-1] for i in ids):
            # a full matrix indexed by node id (the kubelet's d[i][j]) with only some nodes in use
            for i in ids:
                dist[i] = {j: int(matrix[i][j]) for j in ids}
        else:
            raise ValueError(f"distance matrix must be {len(ids)}x{len(ids)} for nodes {list(ids)}")
        return cls(ids, dist)

    @property
    def has_distances(self) -> bool:
        """Whether every node has its distances (``NewNUMAInfo``): vacuously so on a machine with none."""
        return self.distances is not None or not self.nodes

    def default_mask(self) -> NUMAMask:
        """All NUMA nodes of the machine (the any-node affinity)."""
        return NUMAMask(self.nodes)

    def distance_sum(self, mask: NUMAMask) -> int:
        """Sum of ``d[i][j]`` over all ordered pairs of the mask's nodes, i = j included.

        ``ValueError`` when a distance it needs is unknown (an empty mask needs none).
        """
        ids = list(mask)
        if not ids:
            return 0
        if self.distances is None:
            raise ValueError("NUMA distances are not known for this machine")
        total = 0
        for i in ids:
            row = self.distances.get(i)
            if row is None:
                raise ValueError(f"no NUMA distances for node {i}")
            for j in ids:
                total += row[j]
        return total

    def average_distance(self, mask: NUMAMask) -> float:
        """Mean distance over all ordered node pairs of ``mask`` (0 for an empty mask)."""
        k = mask.count()
        if k == 0:
            return 0.0
        return self.distance_sum(mask) / float(k * k)

    def closest(self, a: NUMAMask, b: NUMAMask) -> NUMAMask:
        """The kubelet's ``Closest(a, b)``: narrower by count; same count -> lower average
        distance; same average -> the smaller integer mask (``b`` wins exact ties of distinct masks
        only when it is smaller).  Only masks of the same width with different nodes need the
        distances: without them those raise ``ValueError``, everything else is answered."""
        if a.count() != b.count():
            return narrowest(a, b)
        if a == b:
            return a
        # Same count: comparing averages is comparing integer sums (same divisor), and exact.
        da, db = self.distance_sum(a), self.distance_sum(b)
        if da == db:
            return a if a.is_less_than(b) else b
        return a if da < db else b

    def narrowest(self, a: NUMAMask, b: NUMAMask) -> NUMAMask:
        """The kubelet's ``Narrowest(a, b)``."""
        return narrowest(a, b)

    def matrix(self) -> Optional[List[List[int]]]:
        """The distances as a matrix in node-id order (``None`` when unknown)."""
        if self.distances is None:
            return None
        return [[self.distances[i][j] for j in self.nodes] for i in self.nodes]
