"""Node conditions and the pressure transition period."""
from __future__ import annotations

from pynuma.policy.eviction import conditions as c
from pynuma.policy.eviction.signals import conditions_for_signals, resource_for, valid_signal
from pynuma.policy.eviction.thresholds import Threshold, ThresholdValue
from pynuma.quantity import Quantity


def test_conditions_dedupe_in_first_seen_order():
    ts = [Threshold(s, ThresholdValue(Quantity(1))) for s in
          ("pid.available", "nodefs.available", "imagefs.inodesFree", "memory.available")]
    assert c.node_conditions(ts) == ["PIDPressure", "DiskPressure", "MemoryPressure"]
    assert conditions_for_signals(["bogus"]) == []


def test_transition_period_is_strict():
    at = c.node_conditions_last_observed_at(["DiskPressure"], {"MemoryPressure": 0.0}, 100.0)
    assert at == {"DiskPressure": 100.0, "MemoryPressure": 0.0}
    assert sorted(c.node_conditions_observed_since(at, 100.0, 100.0)) == ["DiskPressure"]
    assert sorted(c.node_conditions_observed_since(at, 100.5, 100.0)) == ["DiskPressure", "MemoryPressure"]


def test_signal_tables():
    assert resource_for("nodefs.inodesFree") == "inodes"
    assert resource_for("pid.available") == "pids"
    assert not valid_signal("swap.available")
