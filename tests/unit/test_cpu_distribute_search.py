"""distribute_search picks the kubelet's (combination, subset): exhaustively on small machines,
by property tests beyond, and the same tables from the native and pure min-plus cores."""
from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pynuma import _impl
from pynuma.cpuset import CPUSet
from pynuma.policy.cpumanager.distribute import _std_milli, take_distributed
from pynuma.policy.cpumanager.distribute_search import choose

from .cpu_fixtures import machine
from .distribute_reference import _round_robin, enumerate_choice
from .test_cpu_distribute import reference_distributed

SCALE = int(os.environ.get("PYNUMA_TEST_SCALE", "1"))


def _choose(free, k, group, count):
    dist = count // k // group * group
    total = sum(free)
    return choose(free, k, dist, group, count, lambda q: _std_milli(total - count, q, len(free)))


def _all_requests(free, groups=(1, 2, 3)):
    """Every (k, group, count) the kubelet can ask of these free counts."""
    for group in groups:
        for count in range(group, sum(free) + 1, group):
            for k in range(1, min(count // group, len(free)) + 1):
                yield k, group, count


@pytest.mark.parametrize("n,top", [(1, 9), (2, 7), (3, 5), (4, 3)])
def test_every_free_vector_of_a_small_machine(n, top):
    checked = 0
    for free in itertools.product(range(top + 1), repeat=n):
        for k, group, count in _all_requests(free):
            dist = count // k // group * group
            assert _choose(free, k, group, count) == enumerate_choice(free, k, dist, group, count), \
                (free, k, group, count)
            checked += 1
    assert checked > 50


@st.composite
def free_vectors(draw, max_nodes=7):
    n = draw(st.integers(1, max_nodes))
    top = draw(st.sampled_from([3, 8, 16, 40]))
    free = draw(st.lists(st.integers(0, top), min_size=n, max_size=n))
    group = draw(st.sampled_from([1, 1, 2, 3, 4]))
    total = sum(free) // group
    if total < 1:
        return free, 1, group, group
    count = draw(st.integers(1, total)) * group
    k = draw(st.integers(1, min(count // group, n)))
    return free, k, group, count


@given(free_vectors())
@settings(max_examples=300 * SCALE, deadline=None)
def test_choice_equals_the_enumeration(case):
    free, k, group, count = case
    dist = count // k // group * group
    assert _choose(free, k, group, count) == enumerate_choice(free, k, dist, group, count)


# Tie-heavy shapes: many equal nodes, so "first found" decides among equal scores.
@pytest.mark.parametrize("free", [[6] * 8, [5, 6] * 4, [4, 4, 7, 7, 4, 4, 7, 7], [9, 1, 9, 1, 9, 1, 9, 2]])
def test_ties_on_many_equal_nodes(free):
    for k, group, count in _all_requests(free, groups=(1, 2)):
        dist = count // k // group * group
        assert _choose(free, k, group, count) == enumerate_choice(free, k, dist, group, count)


def test_every_available_set_of_a_four_node_machine():
    topo = machine(sockets=2, nodes_per_socket=2, cores_per_node=1, threads=2)  # 8 CPUs, 4 nodes
    cpus = topo.cpus().to_list()
    for bits in range(1, 1 << len(cpus)):
        avail = CPUSet(c for i, c in enumerate(cpus) if bits >> i & 1)
        for group in (1, 2):
            for count in range(group, len(avail) + 1, group):
                want = reference_distributed(topo, avail, count, group)
                assert take_distributed(topo, avail, count, group) == want, (avail, count, group)


def _score_of(free, combo, subset, dist, group, count):
    """The kubelet's balance for (combo, subset), or None when the subset gets stuck."""
    after = list(free)
    for i in combo:
        after[i] -= dist
    if subset:
        after = _round_robin(after, subset, count - dist * len(combo), group)
        if after is None:
            return None
    return _std_milli(sum(free) - count, sum(v * v for v in after), len(free))


def _enumeration_rank(combo, subset):
    """Sort key of the kubelet's enumeration: combination lexicographic, then larger subsets first."""
    return tuple(combo), -len(subset or ()), tuple(subset or ())


@given(st.integers(8, 40), st.integers(0, 10**6), st.sampled_from([1, 2]))
@settings(max_examples=40 * SCALE, deadline=None)
def test_no_sampled_rival_beats_the_answer_on_wide_machines(n, seed, group):
    """Beyond enumeration: random rival (combination, subset) pairs never score better, and
    never tie from earlier in the kubelet's order."""
    import random

    rng = random.Random(seed)
    free = [rng.choice([rng.randint(0, 40), 32, 16]) for _ in range(n)]
    if sum(free) < group:
        return
    count = rng.randint(1, sum(free) // group) * group
    for k in range(1, min(count // group, n) + 1):
        got = _choose(free, k, group, count)
        if got is not None:
            break
    else:
        return
    dist = count // k // group * group
    best = _score_of(free, got[0], got[1], dist, group, count)
    assert best is not None and all(free[i] >= dist for i in got[0])
    eligible = [i for i in range(n) if free[i] >= dist]
    for _ in range(300):
        combo = tuple(sorted(rng.sample(eligible, k)))
        cand = [i for i in combo if free[i] - dist >= group]
        subset = tuple(i for i in cand if rng.random() < 0.6) if got[1] is not None else None
        if got[1] is not None and not subset:
            continue
        rival = _score_of(free, combo, subset, dist, group, count)
        if rival is None or sum(free[i] // group for i in combo) * group < count:
            continue
        assert rival >= best
        if rival == best:
            assert _enumeration_rank(combo, subset) >= _enumeration_rank(*got[:2])


def test_wide_machines_against_the_enumeration_where_it_is_cheap():
    """k <= 3 on 16 nodes, and k = n (every subset of every node) on 12, keep the enumeration small."""
    import random

    rng = random.Random(16)
    for _ in range(8 * SCALE):
        for n, ks in ((16, (1, 2, 3)), (12, (12,))):
            free = [rng.randint(0, 32) for _ in range(n)]
            for group in (1, 2):
                for count in {rng.randint(1, sum(free) // group) * group for _ in range(3)}:
                    for k in (k for k in ks if k <= count // group):
                        dist = count // k // group * group
                        assert _choose(free, k, group, count) == enumerate_choice(free, k, dist, group, count)


@st.composite
def programs(draw):
    n = draw(st.integers(0, 7))
    J, X = draw(st.integers(0, 5)), draw(st.integers(0, 6))
    opt = st.tuples(st.integers(0, 1), st.integers(0, 3), st.integers(0, 1000), st.integers(0, 2))
    opts = draw(st.lists(st.lists(opt, max_size=4), min_size=n, max_size=n))
    return opts, J, X, draw(st.sampled_from([-1, 0, 1, J]))


@given(programs())
@settings(max_examples=300, deadline=None)
def test_native_and_pure_min_plus_tables_agree(p):
    opts, J, X, j_least = p
    tables = {name: list(mod.suffix_tables(opts, J, X, j_least))
              for name, mod in _impl.implementations("minplus").items()}
    assert len({tuple(t) for t in tables.values()}) == 1


def test_min_plus_table_by_hand(backend):
    # two positions, each: skip (cost 5) or join taking 1 group (cost 1)
    mod = backend("minplus")
    opts = [[(0, 0, 5, 0), (1, 1, 1, 0)]] * 2
    tab = list(mod.suffix_tables(opts, 2, 2, 0))
    at = lambda i, ph, j, x: tab[((i * 2 + ph) * 3 + j) * 3 + x]  # noqa: E731
    assert at(0, 0, 2, 2) == 2 and at(0, 0, 1, 1) == 6 and at(0, 0, 0, 0) == 10
    assert at(0, 0, 2, 1) == mod.INF and at(2, 0, 0, 0) == 0


def test_min_plus_rejects_bad_options(backend):
    mod = backend("minplus")
    with pytest.raises(ValueError):
        mod.suffix_tables([[(2, 0, 0, 0)]], 1, 1)
    with pytest.raises(ValueError):
        mod.suffix_tables([[(1, 0, -1, 0)]], 1, 1)
