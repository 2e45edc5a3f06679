"""Named merge steps, and the fast merge against the kubelet's literal exhaustive fold."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pynuma import _impl
from pynuma.policy.topologymanager.bitmask import NUMAMask
from pynuma.policy.topologymanager.hints import TopologyHint
from pynuma.policy.topologymanager.numa_info import NUMAInfo
from pynuma.policy.topologymanager.merge import (HintMerger, filter_providers_hints, iterate_permutations,
                                          max_of_min_affinity_counts, merge_permutation)

IMPLS = _impl.implementations("merge")


def H(nodes, pref=True):
    return TopologyHint.of(nodes, pref)


def test_filter_distinguishes_no_preference_from_no_placement():
    lists = filter_providers_hints([None, {}, {"a": None}, {"b": []}, {"c": [H([0])]}])
    assert lists == [[H(None, True)], [H(None, True)], [H(None, True)], [H(None, False)], [H([0])]]


def test_permutations_first_list_outermost():
    perms = list(iterate_permutations([[H([0]), H([1])], [H([2]), H([3])]]))
    assert [(p[0].numa_affinity.get_bits(), p[1].numa_affinity.get_bits()) for p in perms] == [
        ([0], [2]), ([0], [3]), ([1], [2]), ([1], [3])]
    assert list(iterate_permutations([])) == [()]


def test_merge_permutation_preferred_needs_equal_masks():
    d = NUMAMask([0, 1])
    assert merge_permutation(d, [H([0, 1]), H([0])]) == H([0], False)
    assert merge_permutation(d, [H([0]), H(None), H([0])]) == H([0], True)
    assert merge_permutation(d, [H([0]), H([0], False)]) == H([0], False)
    assert merge_permutation(d, []) == H([0, 1], True)


def test_max_of_min_counts_ignores_nil():
    assert max_of_min_affinity_counts([[H(None)], [H([0, 1]), H([0, 1, 2])], [H([3])]]) == 2


def _merger(n, lists, closest, dist=None, policy="best-effort"):
    dist = dist or [[10 if i == j else 10 + abs(i - j) for j in range(n)] for i in range(n)]
    return HintMerger(NUMAInfo.from_matrix(range(n), dist), lists, policy, closest)


# Every hint a 2-node machine can see (nil, empty, each mask; preferred or not).
_ALL2 = [H(m, p) for m in (None, [], [0], [1], [0, 1]) for p in (True, False)]
_LISTS2 = [list(c) for r in (1, 2) for c in itertools.combinations(_ALL2, r)]


@pytest.mark.parametrize("closest", [False, True])
def test_exhaustive_two_nodes_two_lists(closest):
    for a in _LISTS2:
        for b in _LISTS2:
            m = _merger(2, [a, b], closest)
            want = m.merge_exhaustive()
            for mod in IMPLS.values():
                assert m.merge_ex(mod) == (want, True), (a, b)


@st.composite
def hint_lists(draw, max_nodes=10):
    n = draw(st.integers(1, max_nodes))
    mask = st.one_of(st.none(), st.lists(st.integers(0, n), unique=True, max_size=n))
    hint = st.builds(TopologyHint.of, mask, st.booleans())
    lists = draw(st.lists(st.lists(hint, min_size=1, max_size=5), max_size=4))
    return n, lists, draw(st.booleans())


@given(hint_lists())
@settings(max_examples=200, deadline=None)
def test_fast_merge_equals_exhaustive_fold(p):
    n, lists, closest = p
    m = _merger(n, lists, closest)
    want = m.merge_exhaustive()
    for mod in IMPLS.values():
        assert m.merge_ex(mod) == (want, True)


@given(hint_lists())
@settings(max_examples=100, deadline=None)
def test_merged_hint_is_a_subset_of_each_providers_chosen_hint(p):
    n, lists, closest = p
    m = _merger(n, lists, closest)
    best = m.merge()
    default = NUMAMask(range(n))
    perms = [perm for perm in iterate_permutations(lists) if merge_permutation(default, perm) == best]
    if not perms:  # nothing merged to a non-empty mask: the any-node, not preferred fallback
        assert best == TopologyHint(default, False)
        return
    for perm in perms:
        for h in perm:
            assert best.numa_affinity.issubset(h.numa_affinity or default)


def _upward(n, free, need):
    """CPU-manager-like hints: every node set with enough free units; minimal size preferred."""
    masks = [NUMAMask(c) for r in range(1, n + 1) for c in itertools.combinations(range(n), r)
             if sum(free[i] for i in c) >= need]
    if not masks:
        return []
    low = min(m.count() for m in masks)
    return [TopologyHint(m, m.count() == low) for m in masks]


@pytest.mark.parametrize("n", [8, 10])
def test_structured_hints_agree_across_strategies(n):
    free_cpu = [(i * 7) % 5 for i in range(n)]
    free_mem = [(i * 3) % 4 for i in range(n)]
    devs = [1 if i % 3 == 2 else 0 for i in range(n)]
    lists = [_upward(n, free_cpu, 6), _upward(n, free_mem, 5), _upward(n, devs, 1)]
    assert all(lists)
    m = _merger(n, lists, False)
    import pynuma.policy.topologymanager.merge as tm

    answers = set()
    for budget in (0, 1 << 40):
        old = tm.MERGE_BUDGET
        tm.MERGE_BUDGET = budget
        try:
            for mod in IMPLS.values():
                answers.add(m.merge_ex(mod))
        finally:
            tm.MERGE_BUDGET = old
    enc = [([h.numa_affinity.bits for h in lst], bytes(h.preferred for h in lst)) for lst in lists]
    for mod in IMPLS.values():
        for strategy in ("sparse", "dense"):
            mask, pref, exact = mod.merge((1 << n) - 1, enc, False, None, 1 << 40, strategy)
            answers.add((TopologyHint(NUMAMask.from_bits(mask), pref), exact))
    assert len(answers) == 1
    hint, exact = answers.pop()
    assert exact and hint.numa_affinity


def test_node_ids_beyond_64_are_relabelled_for_the_native_core():
    info = NUMAInfo.from_matrix([0, 70, 130], None)
    lists = [[H([70, 130]), H([130], False)], [H([130]), H([0, 70], True)]]
    m = HintMerger(info, lists, "best-effort")
    want = m.merge_exhaustive()
    for mod in IMPLS.values():
        assert m.merge_ex(mod) == (want, True)


# Every hint of a 3-node machine; every choice of one hint for each of three providers.
_ALL3 = [H(None, p) for p in (True, False)] + [H([i for i in range(3) if m >> i & 1], p)
                                             for m in range(8) for p in (True, False)]


def test_exhaustive_three_nodes_single_hint_lists():
    for a in _ALL3:
        for b in _ALL3:
            for c in _ALL3:
                m = _merger(3, [[a], [b], [c]], False)
                want = m.merge_exhaustive()
                for mod in IMPLS.values():
                    assert m.merge_ex(mod) == (want, True), (a, b, c)


def test_a_hint_past_bit_63_on_a_small_default_takes_the_relabelling_path():
    info = NUMAInfo.from_matrix([0, 1], None)
    lists = [[H([0, 70]), H([1], False)], [H([1, 70], False), H([0])]]
    m = HintMerger(info, lists, "best-effort")
    want = m.merge_exhaustive()
    for mod in IMPLS.values():
        assert m.merge_ex(mod) == (want, True)


def _conflict_lists(n, width):
    """No preferred merge: CPUs fit only away from the device nodes (bench_merge's conflict)."""
    dev = [i for i in range(n) if i % 4 == 3]
    cpu = [NUMAMask(c) for r in (1, 2) for c in itertools.combinations([i for i in range(n) if i not in dev], r)]
    gpu = [NUMAMask([d]) for d in dev] + [NUMAMask([d, d + 1]) for d in dev if d + 1 < n]
    return [[TopologyHint(m, m.count() == 1) for m in cpu[:width]], [TopologyHint(m, True) for m in gpu]]


def test_sixty_four_nodes_report_a_bounded_answer_through_the_policy(monkeypatch):
    import pynuma.policy.topologymanager.merge as tm
    from pynuma.policy.topologymanager.policies import make_policy

    info = NUMAInfo.from_matrix(range(64), None)
    lists = _conflict_lists(64, 400)
    providers = [{"cpu": lists[0]}, {"gpu": lists[1]}]
    pol = make_policy("best-effort", info)
    hint, admit, exact = pol.merge_ex(providers)
    assert exact and not hint.preferred and admit  # within budget: exact
    monkeypatch.setattr(tm, "MERGE_BUDGET", 100)  # too small for the sparse search; 64 nodes: no transforms
    for mod in IMPLS.values():
        got, exact_now = HintMerger(info, lists, "best-effort").merge_ex(mod)
        assert exact_now is False and got.numa_affinity is not None and not got.numa_affinity.is_empty()
    bounded = pol.merge_ex(providers)
    assert bounded[2] is False and pol.merge(providers) == bounded[:2]
