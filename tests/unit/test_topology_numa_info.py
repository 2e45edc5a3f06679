"""NUMAInfo: distances by node id, averages, closest and narrowest."""
from __future__ import annotations

import pytest

from pynuma.policy.topologymanager.bitmask import NUMAMask
from pynuma.policy.topologymanager.numa_info import NUMAInfo

D = [[10, 11, 21, 21], [11, 10, 21, 21], [21, 21, 10, 11], [21, 21, 11, 10]]


def test_sparse_node_ids_keep_rows_aligned():
    info = NUMAInfo.from_matrix([0, 2], [[10, 30], [30, 10]])
    assert info.average_distance(NUMAMask([0, 2])) == 20
    assert info.matrix() == [[10, 30], [30, 10]]


def test_bad_matrix_shape():
    with pytest.raises(ValueError):
        NUMAInfo.from_matrix([0, 1], [[10]])


def test_closest_prefers_size_then_distance_then_value():
    info = NUMAInfo.from_matrix(range(4), D)
    assert info.closest(NUMAMask([0, 2]), NUMAMask([2, 3])) == NUMAMask([2, 3])
    assert info.closest(NUMAMask([0, 1, 2]), NUMAMask([3])) == NUMAMask([3])
    assert info.closest(NUMAMask([2, 3]), NUMAMask([0, 1])) == NUMAMask([0, 1])  # equal averages: lower value


def test_without_distances():
    info = NUMAInfo.from_matrix([0, 1], None)
    assert not info.has_distances and info.matrix() is None
    with pytest.raises(ValueError):
        info.average_distance(NUMAMask([0]))
    assert info.average_distance(NUMAMask()) == 0 and info.distance_sum(NUMAMask()) == 0


@pytest.mark.parametrize("a, b, want", [
    ([0], [0, 1], [0]), ([0, 1], [1], [1]), ([0, 1, 2], [3], [3]), ([1], [1], [1]),
])
def test_without_distances_answers_what_needs_none(a, b, want):
    """Different widths (or the same mask) need no distances: the narrower one, as Closest says."""
    info = NUMAInfo.from_matrix([0, 1, 2, 3], None)
    assert info.closest(NUMAMask(a), NUMAMask(b)) == NUMAMask(want)
    assert info.closest(NUMAMask(b), NUMAMask(a)) == NUMAMask(want)


def test_without_distances_same_width_masks_say_distances_are_unknown():
    info = NUMAInfo.from_matrix([0, 1, 2, 3], None)
    with pytest.raises(ValueError, match="distances are not known"):
        info.closest(NUMAMask([0, 1]), NUMAMask([2, 3]))


def test_full_matrix_indexed_by_node_id():
    info = NUMAInfo.from_matrix([1, 3], D)
    assert info.distance_sum(NUMAMask([1, 3])) == 10 + 21 + 21 + 10
