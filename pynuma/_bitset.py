"""Immutable sets of non-negative ids kept as one arbitrary-precision int.

The shared core of :class:`pynuma.cpuset.CPUSet` and
:class:`pynuma.policy.topologymanager.bitmask.NUMAMask`: construction, iteration, size,
equality and hashing, immutability and pickling.  Each subclass adds its
own vocabulary (set algebra for CPUs, kubelet ordering for NUMA masks).

>>> list(iter_bits(0b10110))
[1, 2, 4]
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import Iterable, Iterator, Optional, Type, TypeVar

    _S = TypeVar("_S", bound="IntBitSet")


def iter_bits(bits: int) -> "Iterator[int]":
    """Positions of the 1-bits of ``bits`` (>= 0), ascending."""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


def popcount(bits: int) -> int:
    """Number of 1-bits of ``bits`` (>= 0)."""
    return bin(bits).count("1")


class IntBitSet:
    """Base of the int-backed id sets; a direct subclass names its *kind*.

    ``_KIND`` tags the hash and the immutability error; sets of different
    kinds never compare equal (a CPU set is not a NUMA mask), while
    subclasses of one kind do.  ``_NEGATIVE`` is the message for a negative id.
    """

    __slots__ = ("_bits",)
    _KIND = "IntBitSet"
    _NEGATIVE = "negative id {}"
    _FAMILY: type  # the direct subclass a set belongs to; equality stays inside it

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if IntBitSet in cls.__bases__:
            cls._FAMILY = cls

    def __init__(self, ids: "Optional[Iterable[int]]" = None) -> None:
        bits = 0
        if isinstance(ids, IntBitSet):
            bits = ids._bits
        elif ids is not None:
            for i in ids:
                i = int(i)
                if i < 0:
                    raise ValueError(self._NEGATIVE.format(i))
                bits |= 1 << i
        object.__setattr__(self, "_bits", bits)

    @classmethod
    def from_bits(cls: "Type[_S]", bits: int) -> "_S":
        """The set whose members are the 1-bits of ``bits``."""
        if bits < 0:
            raise ValueError("negative bitmap")
        new = _object_new(cls)
        _set_bits(new, bits)
        return new

    @property
    def bits(self) -> int:
        """The bitmap as an int (bit i set means id i is a member)."""
        return self._bits

    def __len__(self) -> int:
        return bin(self._bits).count("1")  # popcount() inlined: len() is on hot paths

    def __bool__(self) -> bool:
        return self._bits != 0

    def __iter__(self) -> "Iterator[int]":
        return iter_bits(self._bits)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, self._FAMILY):
            return self._bits == other._bits
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._KIND, self._bits))

    def __setattr__(self, name, value):
        raise AttributeError(f"{self._KIND} is immutable")

    def __reduce__(self):
        return (type(self).from_bits, (self._bits,))


_object_new = object.__new__
_set_bits = IntBitSet.__dict__["_bits"].__set__  # the slot itself: __setattr__ refuses every write
