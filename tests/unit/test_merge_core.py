"""Merge core: native and pure agree, every strategy gives the same exact answer."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pynuma import _impl
from pynuma._pure_merge import DENSE_MAX

PURE = _impl.implementations("merge")["pure"]


@st.composite
def problems(draw, max_nodes=10):
    n = draw(st.integers(1, max_nodes))
    default = (1 << n) - 1
    mask = st.one_of(st.just(-1), st.integers(0, (1 << (n + 1)) - 1))  # sometimes a bit off the machine
    lst = st.tuples(st.lists(mask, min_size=0, max_size=6))
    lists = draw(st.lists(lst, max_size=4))
    out = []
    for (masks,) in lists:
        prefs = draw(st.lists(st.booleans(), min_size=len(masks), max_size=len(masks)))
        out.append((masks, bytes(prefs)))
    seed = draw(st.integers(0, 1000))
    dist = [[10 if i == j else 11 + (seed * (i + 1) * (j + 1)) % 23 for j in range(n)] for i in range(n)]
    closest = draw(st.booleans())
    return default, out, closest, dist


@given(problems())
@settings(max_examples=200, deadline=None)
def test_native_and_pure_agree(p):
    backend_mods = _impl.implementations("merge")
    default, lists, closest, dist = p
    answers = {name: mod.merge(default, lists, closest, dist, 1 << 20) for name, mod in backend_mods.items()}
    assert len(set(answers.values())) == 1, answers


@given(problems())
@settings(max_examples=100, deadline=None)
def test_dense_and_sparse_agree(p):
    backend_mods = _impl.implementations("merge")
    default, lists, closest, dist = p
    for mod in backend_mods.values():
        sparse = mod.merge(default, lists, closest, dist, 1 << 30, "sparse")
        dense = mod.merge(default, lists, closest, dist, 1 << 30, "dense")
        over_budget = mod.merge(default, lists, closest, dist, 0)  # budget 0: straight to the transforms
        assert sparse == dense == over_budget == mod.merge(default, lists, closest, dist, 1 << 30)
        assert sparse[2] is True


@pytest.fixture
def backend_mods():
    return _impl.implementations("merge")


def test_beam_is_flagged_inexact_and_deterministic(backend_mods):
    n = DENSE_MAX + 4
    default = (1 << n) - 1
    lists = [([default ^ (1 << i) for i in range(n)], bytes(n)), ([(1 << i) | (1 << (i + 1)) for i in range(n - 1)],
                                                                 bytes(n - 1))]
    got = {name: mod.merge(default, lists, False, None, 1) for name, mod in backend_mods.items()}
    assert len(set(got.values())) == 1
    mask, preferred, exact = next(iter(got.values()))
    assert exact is False and preferred is False and mask != 0


def test_empty_list_means_no_permutation(backend_mods):
    for mod in backend_mods.values():
        assert mod.merge(0b11, [([0b01], b"\x01"), ([], b"")], False, None, 100) == (0b11, False, True)


def test_zero_lists_merge_to_all_nodes_preferred(backend_mods):
    for mod in backend_mods.values():
        assert mod.merge(0b111, [], False, None, 100) == (0b111, True, True)


def test_closest_without_distances_is_refused(backend_mods):
    for mod in backend_mods.values():
        with pytest.raises(ValueError):
            mod.merge(0b11, [], True, None, 100)


def test_native_refuses_masks_wider_than_64_bits():
    native = _impl.implementations("merge").get("native")
    if native is None:
        pytest.skip("native merge not built")
    with pytest.raises(ValueError):
        native.merge(1 << 70, [], False, None, 10)


def test_unknown_strategy_is_refused(backend_mods):
    for mod in backend_mods.values():
        with pytest.raises(KeyError):
            mod.merge(1, [], False, None, 10, "fastest")


@given(problems())
@settings(max_examples=150, deadline=None)
def test_merge_from_hint_objects_equals_merge_from_encoded_lists(p):
    from pynuma.policy.topologymanager.bitmask import NUMAMask
    from pynuma.policy.topologymanager.hints import TopologyHint

    default, lists, closest, dist = p
    hint_lists = [[TopologyHint(None if m < 0 else NUMAMask.from_bits(m), bool(f)) for m, f in zip(masks, prefs)]
                  for masks, prefs in lists]
    for mod in _impl.implementations("merge").values():
        assert mod.merge_hints(default, hint_lists, closest, dist, 1 << 20) == \
            mod.merge(default, lists, closest, dist, 1 << 20)


def test_native_merge_from_hints_refuses_masks_past_64_bits():
    from pynuma.policy.topologymanager.bitmask import NUMAMask
    from pynuma.policy.topologymanager.hints import TopologyHint

    native = _impl.implementations("merge").get("native")
    if native is None:
        pytest.skip("native merge core not built")
    with pytest.raises(OverflowError):
        native.merge_hints(3, [[TopologyHint(NUMAMask([0, 70]), True)]], False, None, 1 << 20)
