"""Every vector of kubelet/oom_score.json: the container oom_score_adj."""
from __future__ import annotations

import pytest

from pynuma.pod import Pod
from pynuma.policy.oom_score import container_oom_score_adj, oom_score_adjs
from pynuma.policy.qos import qos_class
from tests.conformance.vectors import vectors


def _case(v):
    pod = Pod.from_dict(v["pod"], where=f"vector {v['name']}")
    gates = v.get("feature_gates") or {}
    return pod, bool(gates.get("PodLevelResources", True))


@pytest.mark.parametrize("v", vectors("oom_score.json"))
def test_oom_score_adj(v):
    pod, plr = _case(v)
    got = container_oom_score_adj(pod, v["container"], int(v["memory_capacity"]), pod_level_resources=plr)
    assert got == v["expect"]
    # the whole pod at once (what ``pynuma qos`` prints) gives each container the same answer
    every = oom_score_adjs(pod, int(v["memory_capacity"]), pod_level_resources=plr)
    assert [every[i] for i, c in enumerate(pod.all_containers()) if c.name == v["container"]] == [got]
    low, high = v.get("expect_range_in_test") or (got, got)
    assert low <= got <= high
    # ``legacy_expect`` (what older kubelets returned) is documented as "not the
    # target"; the legacy option has unit tests of its own.


@pytest.mark.parametrize("v", vectors("oom_score.json"))
def test_oom_score_vector_qos_agrees(v):
    # The vector states the pod's QoS "for convenience": it must match ours.
    pod, plr = _case(v)
    assert qos_class(pod, plr) == v["qos"]

