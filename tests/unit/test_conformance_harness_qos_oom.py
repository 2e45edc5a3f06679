"""Hand-made qos.json / oom_score.json-shaped vectors through the conformance harness.

Variants: ``status_qos_class`` winning over the spec, the PodLevelResources
gate off (pod-level resources ignored), pod-level memory shared among
containers for oom_score_adj, sidecar clamping, node-critical pods.
Expected values follow pkg/apis/core/v1/helper/qos and pkg/kubelet/qos/policy.go.
"""
from __future__ import annotations

import pytest

from tests.conformance import test_oom_score, test_qos

G = {"cpu": "1", "memory": "1Gi"}


def _qos(containers, expect, pod_resources=None, gates=None, init=(), status=None):
    v = {"name": "hand-made", "containers": containers, "init_containers": list(init),
         "pod_resources": pod_resources, "feature_gates": gates if gates is not None else {"PodLevelResources": True},
         "expect": expect}
    if status:
        v["status_qos_class"] = status
    return v


@pytest.mark.parametrize("v", [
    _qos([{"name": "g", "requests": G, "limits": G}], "BestEffort", status="BestEffort"),
    # gate off: pod-level resources are ignored, the containers decide
    _qos([{"name": "b", "requests": {}, "limits": {}}], "BestEffort", {"requests": G, "limits": G},
         {"PodLevelResources": False}),
    # gate on: pod-level resources alone decide
    _qos([{"name": "b", "requests": {}, "limits": {}}], "Guaranteed", {"requests": G, "limits": G}),
    _qos([{"name": "g", "requests": G, "limits": G}], "Burstable", {"requests": {"memory": "100Mi"}, "limits": {}}),
    # an init container counts like an app container
    _qos([{"name": "g", "requests": G, "limits": G}], "Burstable", gates={},
         init=[{"name": "i", "requests": {"cpu": "1"}, "limits": {}}]),
    # zero requests count as unset; extended resources never count
    _qos([{"name": "b", "requests": {"cpu": "0", "memory": "0"},
           "limits": {"cpu": "100m", "memory": "200Mi", "nvidia.com/gpu": "2"}}], "Burstable", gates={}),
], ids=lambda v: v["expect"])
def test_qos_variants(v):
    test_qos.test_qos_class(v)


def _oom(pod, container, capacity, expect, qos, gates=None):
    return {"name": "hand-made", "qos": qos, "memory_request": "0", "memory_capacity": capacity,
            "container_kind": "regular", "container": container, "pod": pod,
            "feature_gates": gates or {"PodLevelResources": True, "SidecarContainers": True},
            "expect": expect, "expect_range_in_test": [expect, expect]}


def _pod(containers, init=(), resources=None, priority=None, priority_class=None):
    return {"priorityClassName": priority_class, "priority": priority, "resources": resources,
            "initContainers": list(init), "containers": containers}


def _c(name, memory=None, limit=None, **more):
    req = {"memory": memory} if memory else {}
    lim = {"memory": limit} if limit else {}
    return {"name": name, "requests": req, "limits": lim, **more}


def test_pod_level_memory_is_shared_among_containers():
    # pod requests 4G, containers claim 1G: 3G left, 1.5G each for the two containers
    pod = _pod([_c("c1", "1G"), _c("c2")], resources={"requests": {"memory": "4G"}, "limits": {"memory": "8G"}})
    test_oom_score.test_oom_score_adj(_oom(pod, "c1", 10**10, 1000 - 250, "Burstable"))
    test_oom_score.test_oom_score_adj(_oom(pod, "c2", 10**10, 1000 - 150, "Burstable"))
    test_oom_score.test_oom_score_vector_qos_agrees(_oom(pod, "c2", 10**10, 850, "Burstable"))
    # gate off: no share; the pod is Burstable from its containers (c1 has a request, no limit)
    off = {"PodLevelResources": False, "SidecarContainers": True}
    test_oom_score.test_oom_score_adj(_oom(pod, "c1", 10**10, 900, "Burstable", off))


def test_sidecar_never_scores_above_the_smallest_app_container():
    small_sidecar = _pod([_c("app", "1G", "2G")], init=[_c("side", "500M", "2G", restartPolicy="Always")])
    test_oom_score.test_oom_score_adj(_oom(small_sidecar, "side", 4 * 10**9, 750, "Burstable"))
    big_sidecar = _pod([_c("app", "1G", "2G")], init=[_c("side", "3G", "4G", restartPolicy="Always")])
    test_oom_score.test_oom_score_adj(_oom(big_sidecar, "side", 4 * 10**9, 250, "Burstable"))
    # a regular init container is not clamped
    init = _pod([_c("app", "1G", "2G")], init=[_c("init", "500M", "2G")])
    test_oom_score.test_oom_score_adj(_oom(init, "init", 4 * 10**9, 875, "Burstable"))


def test_node_critical_pod_gets_the_guaranteed_score_even_when_best_effort():
    pod = _pod([_c("c")], priority=2000001000, priority_class="system-node-critical")
    test_oom_score.test_oom_score_adj(_oom(pod, "c", 4 * 10**9, -997, "BestEffort"))


def test_burstable_bounds():
    huge = _pod([_c("c", "8G", "9G")])
    test_oom_score.test_oom_score_adj(_oom(huge, "c", 4 * 10**9, 3, "Burstable"))     # never below 3
    tiny = _pod([_c("c", "1", "9G")])
    test_oom_score.test_oom_score_adj(_oom(tiny, "c", 4 * 10**9, 999, "Burstable"))   # never 1000
