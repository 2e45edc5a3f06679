"""``NUMAMask``: the set of NUMA node ids a topology hint asks for.

Same ordering rules as the kubelet's ``bitmask.BitMask`` (*narrower* = fewer
nodes, then the smaller integer value, i.e. more low-numbered nodes;
*less than* = smaller integer value) but backed by an arbitrary-precision
int, so there is no 64-node cap.  The kubelet's 64-bit behaviours
(``Add`` refusing bits outside 0-63, ``Fill`` setting 64 bits, its
``String`` form) are available explicitly for compatibility checks.

>>> m = NUMAMask([0, 2])
>>> m.count(), list(m), m.is_narrower_than(NUMAMask([0, 1, 2]))
(2, [0, 2], True)
"""
from __future__ import annotations

from itertools import combinations
from typing import Iterable, Iterator, Optional, Sequence

from ..._bitset import IntBitSet, popcount

KUBELET_BITS = 64  # width of the kubelet's uint64 bitmask


class NUMAMask(IntBitSet):
    """An immutable set of NUMA node ids with the kubelet's ordering rules."""

    __slots__ = ()
    _KIND = "NUMAMask"
    _NEGATIVE = "negative NUMA node id {}"

    @classmethod
    def kubelet_full(cls) -> "NUMAMask":
        """What the kubelet's ``Fill()`` gives: all 64 bits set."""
        return cls.from_bits((1 << KUBELET_BITS) - 1)

    # -- value ---------------------------------------------------------
    def count(self) -> int:
        """Number of nodes in the mask."""
        return popcount(self._bits)

    def is_empty(self) -> bool:
        return self._bits == 0

    def is_set(self, node: int) -> bool:
        """Whether ``node`` is in the mask (False for negative ids)."""
        return node >= 0 and (self._bits >> node) & 1 == 1

    __contains__ = is_set

    def any_set(self, nodes: Iterable[int]) -> bool:
        return any(self.is_set(n) for n in nodes)

    def get_bits(self) -> list:
        """Member ids ascending (the kubelet's ``GetBits``)."""
        return list(self)

    # -- algebra (new masks; NUMAMask is immutable) --------------------
    def add(self, *nodes: int, limit: Optional[int] = None) -> "NUMAMask":
        """A copy with ``nodes`` added; ``ValueError`` (nothing added) if one is < 0 or >= ``limit``."""
        bits = self._bits
        for n in nodes:
            _check(n, limit)
            bits |= 1 << n
        return NUMAMask.from_bits(bits)

    def remove(self, *nodes: int, limit: Optional[int] = None) -> "NUMAMask":
        """A copy without ``nodes``; same range rule as :meth:`add`."""
        bits = self._bits
        for n in nodes:
            _check(n, limit)
            bits &= ~(1 << n)
        return NUMAMask.from_bits(bits)

    def __and__(self, other: "NUMAMask") -> "NUMAMask":
        return NUMAMask.from_bits(self._bits & other._bits)

    def __or__(self, other: "NUMAMask") -> "NUMAMask":
        return NUMAMask.from_bits(self._bits | other._bits)

    def issubset(self, other: "NUMAMask") -> bool:
        return self._bits & ~other._bits == 0

    # -- ordering --------------------------------------------------------
    def is_equal(self, other: "NUMAMask") -> bool:
        return self._bits == other._bits

    def is_less_than(self, other: "NUMAMask") -> bool:
        """Smaller integer value (the kubelet's ``IsLessThan``)."""
        return self._bits < other._bits

    def is_narrower_than(self, other: "NUMAMask") -> bool:
        """Fewer nodes, or as many and a smaller integer value (more low-numbered nodes)."""
        a, b = self.count(), other.count()
        return a < b or (a == b and self._bits < other._bits)

    def narrow_key(self) -> tuple:
        """Sort key of the narrower-than order (narrowest first)."""
        return (self.count(), self._bits)

    # -- text ------------------------------------------------------------
    def kubelet_string(self) -> str:
        """The kubelet's ``String()``: binary, zero-padded to an even width chosen by magnitude.

        The width is s + 2 for the largest even s below the bit width with
        value > 2**s, else 2; digits are never truncated.  Masks wider than
        64 bits keep the same rule, extended upwards.
        """
        v = self._bits
        top = max(KUBELET_BITS, v.bit_length() + (v.bit_length() & 1))
        for shift in range(top - 2, 0, -2):
            if v > (1 << shift):
                return format(v, f"0{shift + 2}b")
        return format(v, "02b")

    def __str__(self) -> str:
        return "[" + ",".join(str(n) for n in self) + "]"

    def __repr__(self) -> str:
        return f"NUMAMask({list(self)!r})"


def _check(node: int, limit: Optional[int]) -> None:
    if node < 0 or (limit is not None and node >= limit):
        hi = "" if limit is None else f"-{limit - 1}"
        raise ValueError(f"bit number must be in range 0{hi}: {node}")


def mask_and(first: NUMAMask, *masks: NUMAMask) -> NUMAMask:
    """``first`` AND every mask of ``masks`` (the kubelet's package-level ``And``)."""
    bits = first.bits
    for m in masks:
        bits &= m.bits
    return NUMAMask.from_bits(bits)


def mask_or(first: NUMAMask, *masks: NUMAMask) -> NUMAMask:
    """``first`` OR every mask of ``masks``."""
    bits = first.bits
    for m in masks:
        bits |= m.bits
    return NUMAMask.from_bits(bits)


def iterate_masks(nodes: Sequence[int]) -> Iterator[NUMAMask]:
    """Every non-empty subset of ``nodes``: by size 1, 2, ..., each size in lexicographic order of positions.

    The kubelet's ``IterateBitMasks`` order (hint generation depends on it).
    """
    nodes = list(nodes)
    for size in range(1, len(nodes) + 1):
        for combo in combinations(nodes, size):
            yield NUMAMask(combo)


def narrowest(a: NUMAMask, b: NUMAMask) -> NUMAMask:
    """The narrower of two masks (``a`` on equality)."""
    return b if b.is_narrower_than(a) else a
