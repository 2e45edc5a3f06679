"""thresholds_met.json: evaluation, grace periods, first-observed times, node conditions, observations."""
from __future__ import annotations

from datetime import datetime

import pytest

from pynuma.policy.eviction import conditions as cond
from pynuma.policy.eviction import met
from pynuma.policy.eviction.observations import Observation, make_signal_observations
from pynuma.policy.eviction.signals import conditions_for_signals, resource_for
from pynuma.policy.eviction.thresholds import Threshold, ThresholdValue
from pynuma.quantity import Quantity

from .vectors import vectors

NOW = 1_000_000.0


def kind(k):
    return lambda v: v["kind"] == k


def _obs(raw):
    out = {}
    for sig, o in raw.items():
        avail = Quantity.parse(o["available"]).value()
        cap = Quantity.parse(o["capacity"]).value() if o.get("capacity") is not None else 0
        out[sig] = Observation(avail, cap)
    return out


def _t(raw):
    if "value" not in raw:
        return Threshold(raw["signal"], ThresholdValue(Quantity(1)))
    return Threshold.from_dict(raw)


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("thresholds_met")))
def test_thresholds_met(v):
    ts = [_t(t) for t in v["thresholds"]]
    got = met.thresholds_met(ts, _obs(v["observations"]), v["enforce_min_reclaim"])
    assert sorted(ts.index(t) for t in got) == sorted(v["expect_met"])


def _time(text):
    if text is None:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("thresholds_updated_stats")))
def test_thresholds_updated_stats(v):
    ts = [_t(t) for t in v["thresholds"]]
    obs = {t.signal: Observation(1, 1, _time(v["observation_time"])) for t in ts} if v["has_observation"] else {}
    last = ({t.signal: Observation(1, 1, _time(v["last_observation_time"])) for t in ts}
            if v["has_last_observation"] else {})
    kept = met.thresholds_updated_stats(ts, obs, last)
    assert (kept == ts) is v["expect_kept"]


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("thresholds_first_observed_at")))
def test_thresholds_first_observed_at(v):
    ts = [_t(t) for t in v["thresholds"]]
    off = v["last_observed_at_offset_s"]
    last = {t: NOW + off for t in ts} if off is not None else {}
    got = met.thresholds_first_observed_at(ts, last, NOW)
    exp = v["expect_observed_at_offset_s"]
    if exp is None:
        assert got == {}
    else:
        assert got and all(at == NOW + exp for at in got.values())


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("thresholds_met_grace_period")))
def test_thresholds_met_grace_period(v):
    entries = [(_t(e["threshold"]), NOW + e["observed_at_offset_s"]) for e in v["observed_at"]]
    ts = [t for t, _ in entries]
    got = met.thresholds_met_grace_period(dict(entries), NOW)
    assert sorted(ts.index(t) for t in got) == sorted(v["expect_met"])


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("node_conditions")))
def test_node_conditions(v):
    assert conditions_for_signals(v["signals"]) == v["expect"]
    ts = [Threshold(s, ThresholdValue(Quantity(1))) for s in v["signals"]]
    assert cond.node_conditions(ts) == v["expect"]
    if "expect_resource" in v:
        assert {resource_for(s) for s in v["signals"]} == {v["expect_resource"]}


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("node_conditions_last_observed_at")))
def test_node_conditions_last_observed_at(v):
    last = {c: NOW + o for c, o in v["last_observed_at_offset_s"].items()}
    got = cond.node_conditions_last_observed_at(v["conditions"], last, NOW)
    assert got == {c: NOW + o for c, o in v["expect_offset_s"].items()}


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("node_conditions_observed_since")))
def test_node_conditions_observed_since(v):
    at = {c: NOW + o for c, o in v["observed_at_offset_s"].items()}
    got = cond.node_conditions_observed_since(at, v["transition_period_s"], NOW)
    assert sorted(got) == sorted(v["expect"])


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("sort_by_eviction_priority")))
def test_sort_by_eviction_priority(v):
    ts = [Threshold(s, ThresholdValue(Quantity(1))) for s in v["signals"]]
    assert [t.signal for t in met.sort_by_eviction_priority(ts)] == v["expect"]


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("make_signal_observations")))
def test_make_signal_observations(v):
    got = make_signal_observations(v["summary"])
    assert {s: {"available": o.available, "capacity": o.capacity} for s, o in got.items()} == v["expect"]


@pytest.mark.parametrize("v", vectors("thresholds_met.json", select=kind("memcg_notifier_threshold")))
def test_memcg_notifier_threshold(v):
    s = {k: Quantity.parse(x).value() for k, x in v["stats"].items()}
    got = met.memcg_usage_threshold(Threshold.from_dict(v["threshold"]), s["available"], s["usage"], s["working_set"])
    assert got == Quantity.parse(v["expect_usage_threshold"]).value()


KINDS = {"thresholds_met", "thresholds_updated_stats", "thresholds_first_observed_at", "thresholds_met_grace_period",
         "node_conditions", "node_conditions_last_observed_at", "node_conditions_observed_since",
         "sort_by_eviction_priority", "make_signal_observations", "memcg_notifier_threshold"}


@pytest.mark.parametrize("v", vectors("thresholds_met.json"))
def test_every_vector_has_a_handled_kind(v):
    assert v["kind"] in KINDS
