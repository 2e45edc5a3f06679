"""``CPUSet``: the immutable set of CPU (or NUMA node) ids every pynuma API speaks.

Backed by an arbitrary-precision bitmap, so 8192+ CPUs cost nothing
special; parsing and formatting go through the native bitmap core when it
is built.

>>> s = CPUSet.parse("0-3,8")
>>> str(s), len(s), 8 in s
('0-3,8', 5, True)
>>> (s - CPUSet([0, 1])).to_list()
[2, 3, 8]
"""
from . import _impl
from ._bitset import IntBitSet

_bitmap = _impl.select("bitmap")


class CPUSet(IntBitSet):
    """An immutable, ordered set of non-negative integer ids."""

    __slots__ = ()
    _KIND = "CPUSet"
    _NEGATIVE = "negative id {} in CPU set"

    # -- construction -------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> "CPUSet":
        """Parse a Linux cpulist (``"0-3,8"``); raises ``ValueError`` on bad text."""
        return cls.from_bits(_bitmap.parse_cpulist(text))

    @classmethod
    def parse_mask(cls, text: str) -> "CPUSet":
        """Parse a Linux cpumask (``"0000ffff,00000000"``); raises ``ValueError``."""
        return cls.from_bits(_bitmap.parse_cpumask(text))

    @classmethod
    def range(cls, start: int, stop: int) -> "CPUSet":
        """Ids ``start`` .. ``stop - 1``."""
        if start < 0 or stop < start:
            raise ValueError(f"bad range {start}..{stop}")
        return cls.from_bits(((1 << (stop - start)) - 1) << start)

    # -- formatting ---------------------------------------------------
    def to_cpulist(self) -> str:
        """Canonical cpulist text (``"0-3,8"``; ``""`` when empty)."""
        return _bitmap.format_cpulist(self._bits)

    def to_mask(self, min_words: int = 1) -> str:
        """Linux cpumask text, most significant 32-bit word first."""
        return _bitmap.format_cpumask(self._bits, min_words)

    def to_list(self) -> list:
        """Members in ascending order."""
        return list(self)

    def __str__(self) -> str:
        return self.to_cpulist()

    def __repr__(self) -> str:
        return f"CPUSet({self.to_cpulist()!r})"

    # -- set protocol -------------------------------------------------
    def __contains__(self, cpu: object) -> bool:
        return isinstance(cpu, int) and cpu >= 0 and (self._bits >> cpu) & 1 == 1

    @staticmethod
    def _coerce(other) -> int:
        if isinstance(other, CPUSet):
            return other._bits
        return CPUSet(other)._bits

    def union(self, *others) -> "CPUSet":
        bits = self._bits
        for o in others:
            bits |= self._coerce(o)
        return CPUSet.from_bits(bits)

    def intersection(self, *others) -> "CPUSet":
        bits = self._bits
        for o in others:
            bits &= self._coerce(o)
        return CPUSet.from_bits(bits)

    def difference(self, *others) -> "CPUSet":
        bits = self._bits
        for o in others:
            bits &= ~self._coerce(o)
        return CPUSet.from_bits(bits)

    def symmetric_difference(self, other) -> "CPUSet":
        return CPUSet.from_bits(self._bits ^ self._coerce(other))

    __or__ = union
    __and__ = intersection
    __sub__ = difference
    __xor__ = symmetric_difference

    def issubset(self, other) -> bool:
        return self._bits & ~self._coerce(other) == 0

    def issuperset(self, other) -> bool:
        return self._coerce(other) & ~self._bits == 0

    def isdisjoint(self, other) -> bool:
        return self._bits & self._coerce(other) == 0

    __le__ = issubset
    __ge__ = issuperset

    def __lt__(self, other) -> bool:
        return self.issubset(other) and self._bits != self._coerce(other)

    def __gt__(self, other) -> bool:
        return self.issuperset(other) and self._bits != self._coerce(other)

    def min(self) -> int:
        """Smallest member; ``ValueError`` when empty."""
        if not self._bits:
            raise ValueError("min() of an empty CPUSet")
        return (self._bits & -self._bits).bit_length() - 1

    def max(self) -> int:
        """Largest member; ``ValueError`` when empty."""
        if not self._bits:
            raise ValueError("max() of an empty CPUSet")
        return self._bits.bit_length() - 1


EMPTY = CPUSet()
