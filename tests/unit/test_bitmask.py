"""NUMAMask: no 64-node cap, the kubelet's orderings, iteration order, string form."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pynuma.policy.topologymanager.bitmask import KUBELET_BITS, NUMAMask, iterate_masks, mask_and, mask_or, narrowest

ids = st.lists(st.integers(0, 200), max_size=12)


def test_members_beyond_64_nodes():
    m = NUMAMask([0, 64, 130])
    assert list(m) == [0, 64, 130]
    assert m.count() == 3 and m.is_set(130) and not m.is_set(129)


def test_kubelet_range_rule_is_explicit():
    with pytest.raises(ValueError):
        NUMAMask().add(64, limit=KUBELET_BITS)
    with pytest.raises(ValueError):
        NUMAMask().add(-1)
    assert NUMAMask().add(64).get_bits() == [64]


def test_immutable():
    m = NUMAMask([1])
    with pytest.raises(AttributeError):
        m._bits = 3
    assert m.add(2) == NUMAMask([1, 2]) and m == NUMAMask([1])


def test_narrower_prefers_fewer_then_lower_nodes():
    assert NUMAMask([3]).is_narrower_than(NUMAMask([0, 1]))
    assert NUMAMask([0, 1]).is_narrower_than(NUMAMask([0, 2]))
    assert not NUMAMask([0, 2]).is_narrower_than(NUMAMask([0, 2]))
    assert narrowest(NUMAMask([0, 2]), NUMAMask([1, 2])) == NUMAMask([0, 2])


@given(ids, ids)
@settings(max_examples=200)
def test_narrower_is_a_strict_total_order(a, b):
    x, y = NUMAMask(a), NUMAMask(b)
    if x == y:
        assert not x.is_narrower_than(y) and not y.is_narrower_than(x)
    else:
        assert x.is_narrower_than(y) != y.is_narrower_than(x)
    assert x.is_narrower_than(y) == (x.narrow_key() < y.narrow_key())


@given(ids, ids)
@settings(max_examples=200)
def test_and_or_match_set_algebra(a, b):
    x, y = NUMAMask(a), NUMAMask(b)
    assert set(mask_and(x, y)) == set(a) & set(b)
    assert set(mask_or(x, y)) == set(a) | set(b)


def test_iterate_masks_order_by_size_then_lexicographic():
    got = [list(m) for m in iterate_masks([0, 2, 5])]
    assert got == [[0], [2], [5], [0, 2], [0, 5], [2, 5], [0, 2, 5]]
    assert sum(1 for _ in iterate_masks(range(6))) == 63


@pytest.mark.parametrize("bits,text", [([], "00"), ([0], "01"), ([1], "10"), ([2], "100"), ([3], "1000"),
                                       ([0, 2], "0101"), ([5], "100000")])
def test_kubelet_string(bits, text):
    assert NUMAMask(bits).kubelet_string() == text


def test_kubelet_full_and_wide_string():
    assert NUMAMask.kubelet_full().kubelet_string() == "1" * 64
    assert NUMAMask([70]).kubelet_string() == "1" + "0" * 70
