"""Thresholds met, min-reclaim, grace periods, updated stats, priority sort, memcg notifier level."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from pynuma.policy.eviction import met
from pynuma.policy.eviction.observations import Observation
from pynuma.policy.eviction.thresholds import Threshold, ThresholdValue
from pynuma.quantity import Quantity

GI = 1 << 30


def _t(sig="memory.available", q="1Gi", grace=0.0, mr=None):
    return Threshold(sig, ThresholdValue(Quantity.parse(q)), grace,
                     ThresholdValue(Quantity.parse(mr)) if mr else None)


def test_met_is_strict_and_min_reclaim_only_when_enforced():
    t = _t(mr="512Mi")
    at = {"memory.available": Observation(GI, 4 * GI)}
    assert met.thresholds_met([t], at, False) == []  # 1Gi > 1Gi is false
    assert met.thresholds_met([t], at, True) == [t]
    assert met.thresholds_met([t], {}, True) == []  # no observation: skipped


def test_merge_ignores_min_reclaim_identity():
    a, b = _t(mr="1Mi"), _t(mr="2Mi")
    assert met.merge_thresholds([a], [b]) == [a]
    assert met.merge_thresholds([a], [_t(q="2Gi")]) == [a, _t(q="2Gi")]


def test_updated_stats():
    t = _t()
    new, old = Observation(1, 2, 10.0), Observation(1, 2, 9.0)
    assert met.thresholds_updated_stats([t], {t.signal: new}, {t.signal: old}) == [t]
    assert met.thresholds_updated_stats([t], {t.signal: old}, {t.signal: new}) == []
    assert met.thresholds_updated_stats([t], {t.signal: old}, {t.signal: old}) == []
    assert met.thresholds_updated_stats([t], {t.signal: Observation(1, 2)}, {t.signal: new}) == [t]


def test_grace_period_boundary():
    soft = _t(grace=60.0)
    assert met.thresholds_met_grace_period({soft: 40.0}, 100.0) == [soft]
    assert met.thresholds_met_grace_period({soft: 40.5}, 100.0) == []


def test_first_observed_keeps_old_times():
    a, b = _t(), _t(q="2Gi")
    got = met.thresholds_first_observed_at([a, b], {a: 5.0, _t(q="3Gi"): 1.0}, 50.0)
    assert got == {a: 5.0, b: 50.0}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["memory.available", "allocatableMemory.available", "nodefs.available",
                                 "pid.available", "imagefs.inodesFree", "bogus"]), max_size=20))
def test_priority_sort_puts_memory_first_and_keeps_everything(signals):
    ts = [Threshold(s, ThresholdValue(Quantity(1))) for s in signals]
    out = met.sort_by_eviction_priority(ts)
    assert sorted(t.signal for t in out) == sorted(signals)
    kinds = [0 if t.signal.endswith("emory.available") else 1 for t in out]
    assert kinds == sorted(kinds)
    found = met.reclaimable_threshold(out)
    assert (found is None) == all(s == "bogus" for s in signals)


def test_memcg_threshold_formula():
    t = _t(q="1Gi")
    assert met.memcg_usage_threshold(t, available=3 * GI, usage=2 * GI, working_set=GI) == 4 * GI
