"""Admission under node conditions; critical pods."""
from __future__ import annotations

from pynuma.pod import Pod
from pynuma.policy.eviction.admission import admit, is_critical_pod

PODS = [Pod.from_dict({"name": "small", "priority": 0, "containers": [{"name": "c"}]}),
        Pod.from_dict({"metadata": {"name": "crit", "annotations": {"kubernetes.io/config.mirror": "x"}},
                       "spec": {"priority": 0, "containers": [{"name": "c"}]}})]


def test_critical_pods_and_admission():
    static = Pod.from_dict({"metadata": {"name": "s", "annotations": {"kubernetes.io/config.source": "file"}},
                            "spec": {"containers": [{"name": "c"}]}})
    assert is_critical_pod(static) and is_critical_pod(PODS[1]) and not is_critical_pod(PODS[0])
    assert is_critical_pod(Pod.from_dict({"name": "sys", "priority": 2000000000, "containers": []}))
    be = PODS[0]
    assert admit(be, ["MemoryPressure"]).admit is False
    tol = [{"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}]
    assert admit(be, ["MemoryPressure"], tol).admit is True
    assert admit(be, ["MemoryPressure", "DiskPressure"], tol).admit is False
    assert admit(static, ["DiskPressure"]).admit is True
    res = admit(be, ["PIDPressure"])
    assert res.reason == "Evicted" and res.message == "The node had condition: [PIDPressure]. "


import pytest  # noqa: E402


@pytest.mark.parametrize("tol,ok", [
    ({"operator": "Exists"}, True),
    ({"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "node.kubernetes.io/memory-pressure", "value": ""}, True),
    ({"key": "node.kubernetes.io/memory-pressure", "value": "x"}, False),
    ({"key": "node.kubernetes.io/disk-pressure", "operator": "Exists"}, False),
])
def test_best_effort_toleration_under_memory_pressure(tol, ok):
    assert admit(PODS[0], ["MemoryPressure"], [tol]).admit is ok
