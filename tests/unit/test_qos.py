"""pynuma.policy.qos: the pod QoS class rules, one at a time, plus properties."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.pod import Pod
from pynuma.policy.qos import BEST_EFFORT, BURSTABLE, GUARANTEED, compute_qos_class, qos_class, uses_pod_level_resources


def pod(containers=(), inits=(), resources=None, status=None):
    spec = {"containers": [dict(name=f"c{i}", **c) for i, c in enumerate(containers)],
            "initContainers": [dict(name=f"i{i}", **c) for i, c in enumerate(inits)]}
    if resources is not None:
        spec["resources"] = resources
    return Pod.from_dict({"metadata": {"name": "p"}, "spec": spec, "status": {"qosClass": status} if status else {}})


G = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}


@pytest.mark.parametrize("containers,inits,expect", [
    ([{}], [], BEST_EFFORT),
    ([G], [], GUARANTEED),
    ([G, G], [G], GUARANTEED),
    ([G, {}], [], BURSTABLE),                                                   # mix of G and BE
    ([G], [{"requests": {"cpu": "1"}}], BURSTABLE),                              # init container counts
    ([{"limits": {"cpu": "2", "memory": "1Gi"}}], [], GUARANTEED),               # defaulting: requests = limits
    ([{"requests": {"cpu": "0", "memory": "0"}, "limits": {"cpu": "1", "memory": "1Gi"}}], [], BURSTABLE),
    ([{"requests": {"cpu": "0", "memory": "0"}, "limits": {"cpu": "0", "memory": "0"}}], [], BEST_EFFORT),
    ([{"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}], [], BEST_EFFORT),
    ([{"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}], [], BURSTABLE),
    ([{"requests": {"cpu": "1000m", "memory": "1024Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}], [], GUARANTEED),
    ([{"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi"}}], [], BURSTABLE),  # cpu limit missing
])
def test_container_rules(containers, inits, expect):
    assert qos_class(pod(containers, inits)) == expect


def test_status_wins_over_spec():
    assert qos_class(pod([{}], status=GUARANTEED)) == GUARANTEED
    assert compute_qos_class(pod([{}], status=GUARANTEED)) == BEST_EFFORT


def test_pod_level_resources_decide_only_with_the_gate():
    p = pod([{}], resources={"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}})
    assert uses_pod_level_resources(p)
    assert qos_class(p) == GUARANTEED
    assert qos_class(p, pod_level_resources=False) == BEST_EFFORT


def test_any_pod_level_resources_decide_the_class_alone():
    # ComputePodQOS looks only at spec.resources once it is there, even when it names no cpu or memory
    # (the memory manager's "pod-level resources set" needs a supported name)
    p = pod([G], resources={"requests": {"example.com/foo": "1"}})
    assert not uses_pod_level_resources(p)
    assert qos_class(p) == BEST_EFFORT
    assert qos_class(pod([G], resources={})) == BEST_EFFORT
    assert qos_class(pod([G], resources={}), pod_level_resources=False) == GUARANTEED


def test_pod_level_requests_default_from_the_containers_then_the_pod_limits():
    # defaultPodRequests: containers requesting cpu and memory give the pod-level requests, not the limits
    burst = {"requests": {"cpu": "100m", "memory": "100Mi"}}
    p = pod([burst], resources={"limits": {"cpu": "200m", "memory": "200Mi"}})
    assert qos_class(p) == BURSTABLE
    assert {n: str(q) for n, q in p.defaulted().pod_requests.items()} == {"cpu": "100m", "memory": "100Mi"}
    # no container requests: the pod-level limits become the requests
    q = pod([{}], resources={"limits": {"cpu": "200m", "memory": "200Mi"}})
    assert qos_class(q) == GUARANTEED
    assert {n: str(v) for n, v in q.defaulted().pod_requests.items()} == {"cpu": "200m", "memory": "200Mi"}


qty = st.sampled_from(["0", "100m", "1", "2", "64Mi", "1Gi"])
res = st.dictionaries(st.sampled_from(["cpu", "memory", "hugepages-2Mi"]), qty, max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.fixed_dictionaries({"requests": res, "limits": res}), min_size=1, max_size=4))
def test_properties(containers):
    got = qos_class(pod(containers))
    nonzero = any(q != "0" for c in containers for part in ("requests", "limits")
                  for name, q in c[part].items() if name in ("cpu", "memory"))
    assert (got == BEST_EFFORT) == (not nonzero)
    if got == GUARANTEED:
        for c in containers:
            assert {"cpu", "memory"} <= {n for n, q in c["limits"].items() if q != "0"}
    # adding a BestEffort container never makes a Guaranteed pod stay Guaranteed
    if got == GUARANTEED:
        assert qos_class(pod(containers + [{"requests": {}, "limits": {}}])) == BURSTABLE
