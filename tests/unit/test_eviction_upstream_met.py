"""thresholdsMet with min-reclaim as upstream adds it, and NaN percentages.

Upstream (pkg/kubelet/eviction/helpers.go ``thresholdsMet``):
``quantity := GetThresholdQuantity(value, capacity)``; with min-reclaim enforced
``quantity.Add(*GetThresholdQuantity(*minReclaim, capacity))``; met iff
``quantity.Cmp(available) > 0``.  ``GetThresholdQuantity`` (eviction/api/types.go)
deep-copies a quantity (exact, ``500m`` stays a half) and turns a percentage into
``int64(float64(capacity.Value()) * float64(p))`` (truncated per term).
``strconv.ParseFloat`` accepts ``NaN``, so ``NaN%`` parses; ``int64(NaN)`` is
-2**63 on amd64 and the threshold is never met.
"""
from __future__ import annotations

import pytest

from pynuma.policy.eviction import met
from pynuma.policy.eviction.manager import EvictionConfig, EvictionState, NodeStats, synchronize
from pynuma.policy.eviction.observations import Observation
from pynuma.policy.eviction.thresholds import (
    GO_MIN_INT64, ThresholdValue, go_int64, parse_threshold_config,
)
from pynuma.quantity import Quantity
from tests.conformance import test_thresholds_met as harness


def _vec(thresholds, observations, enforce, expect):
    return {"kind": "thresholds_met", "thresholds": thresholds, "observations": observations,
            "enforce_min_reclaim": enforce, "expect_met": expect}


def _thr(signal, value, min_reclaim=None):
    return {"signal": signal, "operator": "LessThan", "value": value, "grace_period_s": 0, "min_reclaim": min_reclaim}


def test_fractional_min_reclaim_is_added_exactly():
    # 500m + 500m = 1, not > available 1: not met (rounding each term up gave 2 > 1)
    v = _vec([_thr("pid.available", {"quantity": "500m"}, {"quantity": "500m"})],
             {"pid.available": {"available": "1", "capacity": "10"}}, True, [])
    harness.test_thresholds_met(v)


def test_fractional_sum_above_available_is_met():
    v = _vec([_thr("pid.available", {"quantity": "600m"}, {"quantity": "500m"})],
             {"pid.available": {"available": "1", "capacity": "10"}}, True, [0])
    harness.test_thresholds_met(v)


def test_fractional_threshold_without_min_reclaim_unchanged():
    v = _vec([_thr("pid.available", {"quantity": "500m"}, {"quantity": "500m"})],
             {"pid.available": {"available": "0", "capacity": "10"}}, False, [0])
    harness.test_thresholds_met(v)


@pytest.mark.parametrize("available,expect", [(1, [0]), (2, [])])
def test_percentages_truncated_per_term(available, expect):
    # 10% of 15 = int64(1.5000000223...) = 1 for each term: 1 + 1 = 2 (truncating the sum would give 3)
    v = _vec([_thr("nodefs.inodesFree", {"percentage": 0.1}, {"percentage": 0.1})],
             {"nodefs.inodesFree": {"available": str(available), "capacity": "15"}}, True, expect)
    harness.test_thresholds_met(v)


def test_percentage_plus_fractional_quantity():
    # 10% of 15 -> 1, plus 500m = 1.5 > 1: met; > 2: not
    t = _thr("nodefs.inodesFree", {"percentage": 0.1}, {"quantity": "500m"})
    harness.test_thresholds_met(_vec([t], {"nodefs.inodesFree": {"available": "1", "capacity": "15"}}, True, [0]))
    harness.test_thresholds_met(_vec([t], {"nodefs.inodesFree": {"available": "2", "capacity": "15"}}, True, []))


def test_threshold_quantity_is_the_rounded_up_exact_sum():
    t = harness._t(_thr("pid.available", {"quantity": "500m"}, {"quantity": "500m"}))
    assert met.threshold_amount(t, Observation(1, 10), True) == 1
    assert met.threshold_quantity(t, Observation(1, 10), True) == 1
    assert met.threshold_quantity(t, Observation(1, 10), False) == 1
    assert met.threshold_amount(t, Observation(1, 10), False) == Quantity.parse("500m").amount


def test_go_int64_conversion():
    assert go_int64(1.9) == 1 and go_int64(-1.9) == -1
    assert go_int64(float("nan")) == GO_MIN_INT64
    assert go_int64(float("inf")) == GO_MIN_INT64 and go_int64(9.3e18) == GO_MIN_INT64


def test_nan_percent_threshold_never_met_and_no_traceback():
    hard = parse_threshold_config([], {"memory.available": "NaN%"}, None, None, None)
    assert len(hard) == 1
    obs = {"memory.available": Observation(0, 100)}
    assert hard[0].value.resolve(100) == GO_MIN_INT64
    assert met.thresholds_met(hard, obs, False) == []
    assert met.thresholds_met(hard, obs, True) == []


def test_nan_percent_min_reclaim_never_met():
    ts = parse_threshold_config([], {"memory.available": "100Mi"}, None, None, {"memory.available": "NaN%"})
    obs = {"memory.available": Observation(0, 1 << 30)}
    assert met.thresholds_met(ts, obs, False) == ts          # the threshold alone is met
    assert met.thresholds_met(ts, obs, True) == []           # 100Mi + int64(NaN) is far below 0
    assert ThresholdValue(percentage=float("nan")).amount(1 << 30) == GO_MIN_INT64


def test_nan_percent_through_synchronize():
    ts = parse_threshold_config(["pods"], {"memory.available": "NaN%"}, None, None, None)
    stats = NodeStats({"memory.available": Observation(0, 1 << 30)})
    state, d = synchronize(EvictionConfig(thresholds=tuple(ts)), EvictionState(), stats, [], 0.0)
    assert d.met == () and d.conditions == ()
