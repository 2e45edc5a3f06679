"""IntBitSet: the int-backed core shared by CPUSet and NUMAMask."""
from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pynuma._bitset import IntBitSet, iter_bits, popcount


class _Apples(IntBitSet):
    __slots__ = ()
    _KIND = "Apples"
    _NEGATIVE = "no apple {}"


class _GreenApples(_Apples):
    __slots__ = ()


class _Pears(IntBitSet):
    __slots__ = ()
    _KIND = "Pears"


@settings(max_examples=200)
@given(st.sets(st.integers(0, 300), max_size=20))
def test_bits_round_trip_through_ids(ids):
    s = _Apples(ids)
    assert list(s) == sorted(ids) == list(iter_bits(s.bits))
    assert len(s) == popcount(s.bits) == len(ids)
    assert bool(s) == bool(ids)
    assert _Apples.from_bits(s.bits) == s


def test_negative_id_uses_the_kind_message():
    with pytest.raises(ValueError, match="no apple -3"):
        _Apples([1, -3])
    with pytest.raises(ValueError, match="negative bitmap"):
        _Apples.from_bits(-1)


def test_equality_is_per_kind_and_hash_follows():
    assert _Apples([1, 2]) == _GreenApples([1, 2])
    assert hash(_Apples([1, 2])) == hash(_GreenApples([1, 2]))
    assert _Apples([1, 2]) != _Pears([1, 2])
    assert _Pears(_Apples([5])).bits == 1 << 5  # copying across kinds keeps the members


def test_immutable_and_picklable():
    s = _Apples([0, 70])
    with pytest.raises(AttributeError, match="Apples is immutable"):
        s._bits = 1
    back = pickle.loads(pickle.dumps(s))
    assert back == s and type(back) is _Apples
