"""The synchronize step: soft/hard thresholds over time, min-reclaim hysteresis, node GC, critical pods, admission."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.pod import Pod
from pynuma.policy.eviction.manager import (
    EvictionConfig, EvictionState, FsLayout, NodeStats, node_reclaim_funcs, synchronize,
)
from pynuma.policy.eviction.observations import Observation
from pynuma.policy.eviction.ranking import PodStats
from pynuma.policy.eviction.thresholds import Threshold, ThresholdValue
from pynuma.quantity import Quantity

GI, MI = 1 << 30, 1 << 20


def thr(sig, q, grace=0.0, mr=None):
    return Threshold(sig, ThresholdValue(Quantity.parse(q)), grace, ThresholdValue(Quantity.parse(mr)) if mr else None)


def mem(avail):
    return {"memory.available": Observation(avail, 8 * GI)}


PODS = [Pod.from_dict({"name": "small", "priority": 0, "containers": [{"name": "c"}]}),
        Pod.from_dict({"name": "big", "priority": 0, "containers": [{"name": "c"}]}),
        Pod.from_dict({"metadata": {"name": "crit", "annotations": {"kubernetes.io/config.mirror": "x"}},
                       "spec": {"priority": 0, "containers": [{"name": "c"}]}})]
STATS = {PODS[0].uid: PodStats(memory_working_set=10 * MI), PODS[1].uid: PodStats(memory_working_set=900 * MI),
         PODS[2].uid: PodStats(memory_working_set=5 * GI)}


def test_soft_threshold_waits_for_grace_then_uses_max_pod_grace():
    cfg = EvictionConfig((thr("memory.available", "2Gi", 60),), max_pod_grace_period_s=30,
                         local_storage_capacity_isolation=False)
    s, d = synchronize(cfg, EvictionState(), NodeStats(mem(GI), STATS), PODS, 0.0)
    assert d.conditions == ("MemoryPressure",) and d.evicted == ()
    s, d = synchronize(cfg, s, NodeStats(mem(GI), STATS), PODS, 59.0)
    assert d.evicted == ()
    s, d = synchronize(cfg, s, NodeStats(mem(GI), STATS), PODS, 60.0)
    assert [e.pod for e in d.evicted] == ["big"]  # the critical pod ranks first but is skipped
    assert d.ranked[0] == "crit"
    assert d.evicted[0].grace_period_override_s == 30
    assert d.evicted[0].status["phase"] == "Failed" and d.evicted[0].status["conditions"][0]["type"] == "DisruptionTarget"


def test_min_reclaim_keeps_threshold_active_until_reclaimed():
    cfg = EvictionConfig((thr("memory.available", "1Gi", mr="1Gi"),), local_storage_capacity_isolation=False)
    s, d = synchronize(cfg, EvictionState(), NodeStats(mem(GI // 2), STATS), PODS, 0.0)
    assert d.evicted and d.evicted[0].grace_period_override_s == 1
    s, d = synchronize(cfg, s, NodeStats(mem(GI + GI // 2), STATS), PODS, 10.0)
    assert d.evicted, "1.5Gi is above 1Gi but below 1Gi + min-reclaim"
    s, d = synchronize(cfg, s, NodeStats(mem(3 * GI), STATS), PODS, 20.0)
    assert d.evicted == () and d.conditions == ("MemoryPressure",)
    s, d = synchronize(cfg, s, NodeStats(mem(3 * GI), STATS), PODS, 20.0 + 300)
    assert d.conditions == ()


def test_node_gc_that_frees_enough_spares_pods():
    cfg = EvictionConfig((thr("nodefs.available", "1Gi"),), local_storage_capacity_isolation=False)
    low = {"nodefs.available": Observation(GI // 2, 10 * GI)}
    calls = []

    def gc(funcs):
        calls.append(funcs)
        return NodeStats({"nodefs.available": Observation(5 * GI, 10 * GI)}, STATS)
    _, d = synchronize(cfg, EvictionState(), NodeStats(low, STATS), PODS, 0.0, reclaim=gc)
    assert calls == [("containers", "images")] and d.reclaimed_by_gc and d.evicted == ()
    _, d = synchronize(cfg, EvictionState(), NodeStats(low, STATS), PODS, 0.0, reclaim=lambda f: None)
    assert len(d.evicted) == 1


def test_reclaim_tables():
    assert node_reclaim_funcs(FsLayout(True, False))["nodefs.available"] == ()
    assert node_reclaim_funcs(FsLayout(True, True))["imagefs.inodesFree"] == ("images",)
    assert node_reclaim_funcs(FsLayout(True, True))["containerfs.available"] == ("containers",)


def test_split_fs_without_gate_is_refused():
    cfg = EvictionConfig((thr("nodefs.available", "1Gi"),), layout=FsLayout(True, True), separate_disk_gc=False)
    with pytest.raises(InputError, match="KubeletSeparateDiskGC is turned off"):
        synchronize(cfg, EvictionState(), NodeStats(), PODS, 0.0)


def test_nothing_configured_is_a_no_op():
    cfg = EvictionConfig((), local_storage_capacity_isolation=False)
    s, d = synchronize(cfg, EvictionState(), NodeStats(mem(1)), PODS, 0.0)
    assert s == EvictionState() and d.evicted == ()


def test_skip_marks_terminating_pods():
    cfg = EvictionConfig((thr("memory.available", "1Gi"),), local_storage_capacity_isolation=False)
    _, d = synchronize(cfg, EvictionState(), NodeStats(mem(1), STATS), PODS, 0.0, skip=lambda p: p.name == "big")
    assert [e.pod for e in d.evicted] == ["small"]


def test_hard_wins_over_soft_of_the_same_signal():
    cfg = EvictionConfig((thr("memory.available", "2Gi", 10), thr("memory.available", "1Gi")),
                         max_pod_grace_period_s=30, local_storage_capacity_isolation=False)
    s, d = synchronize(cfg, EvictionState(), NodeStats(mem(GI // 2), STATS), PODS, 0.0)
    assert d.evicted[0].grace_period_override_s == 1  # soft not yet due
    s, d = synchronize(cfg, s, NodeStats(mem(GI // 2), STATS), PODS, 20.0)
    assert d.evicted[0].grace_period_override_s == 1 and "Threshold quantity: 1Gi" in d.evicted[0].message


def test_soft_grace_respects_the_pods_termination_grace():
    cfg = EvictionConfig((thr("memory.available", "2Gi", 0.5),), max_pod_grace_period_s=30,
                         local_storage_capacity_isolation=False)
    s, _ = synchronize(cfg, EvictionState(), NodeStats(mem(GI), STATS), PODS, 0.0)
    _, d = synchronize(cfg, s, NodeStats(mem(GI), STATS), PODS, 1.0, termination_grace_s={PODS[1].uid: 10})
    assert d.evicted[0].pod == "big" and d.evicted[0].grace_period_override_s == 10
    from dataclasses import replace
    _, d = synchronize(replace(cfg, allow_overwrite_termination_grace=True), s, NodeStats(mem(GI), STATS), PODS, 1.0,
                       termination_grace_s={PODS[1].uid: 10})
    assert d.evicted[0].grace_period_override_s == 30
