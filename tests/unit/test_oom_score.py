"""pynuma.policy.oom_score: the kubelet's oom_score_adj formula, rule by rule."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.errors import InputError
from pynuma.pod import Pod
from pynuma.policy.oom_score import (aggregate_memory_request, container_oom_score_adj, is_critical_pod,
                                     pod_oom_score_adjs, remaining_memory_per_container)

CAP = 8 * 10**9


def pod(containers, inits=(), resources=None, **meta):
    spec = {"containers": containers, "initContainers": list(inits)}
    for k in ("priority", "priorityClassName"):
        if k in meta:
            spec[k] = meta.pop(k)
    if resources is not None:
        spec["resources"] = resources
    return Pod.from_dict({"metadata": {"name": "p", **meta}, "spec": spec})


def c(name, mem=None, limit=None, sidecar=False):
    d = {"name": name, "resources": {"requests": {"memory": mem} if mem else {},
                                     "limits": {"memory": limit} if limit else {}}}
    if sidecar:
        d["restartPolicy"] = "Always"
    return d


@pytest.mark.parametrize("request_bytes,expect", [
    (10**9, 875), (4 * 10**9, 500), (CAP - 1, 3), (CAP * 2, 3), (1, 999),
])
def test_burstable_formula_and_clamps(request_bytes, expect):
    p = pod([c("a", str(request_bytes), str(CAP * 4))])
    # the expectation follows from the formula 1000 - 1000*req/cap clamped to [3, 999]
    assert container_oom_score_adj(p, "a", CAP) == max(3, min(999, 1000 - 1000 * request_bytes // CAP))
    assert container_oom_score_adj(p, "a", CAP) == expect


def test_guaranteed_and_besteffort():
    g = pod([{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}])
    assert container_oom_score_adj(g, "a", CAP) == -997
    assert container_oom_score_adj(pod([c("a")]), "a", CAP) == 1000


def test_only_node_critical_pods_are_special_now():
    cluster = pod([c("a")], priority=2 * 10**9, priorityClassName="system-cluster-critical")
    node = pod([c("a")], priority=2 * 10**9 + 1000, priorityClassName="system-node-critical")
    assert is_critical_pod(cluster) and is_critical_pod(node)
    assert container_oom_score_adj(cluster, "a", CAP) == 1000
    assert container_oom_score_adj(node, "a", CAP) == -997
    assert container_oom_score_adj(cluster, "a", CAP, legacy_critical=True) == -997


def test_static_pod_is_critical():
    assert is_critical_pod(pod([c("a")], annotations={"kubernetes.io/config.source": "file"}))
    assert not is_critical_pod(pod([c("a")], annotations={"kubernetes.io/config.source": "api"}))


def test_sidecar_never_more_killable_than_smallest_app_container():
    p = pod([c("big", "4G", "8G"), c("small", "2G", "8G")], inits=[c("side", "100M", "8G", sidecar=True)])
    small = container_oom_score_adj(p, "small", CAP)
    assert container_oom_score_adj(p, "side", CAP) == small
    # a plain init container with the same request gets its own (higher) score
    q = pod([c("big", "4G", "8G"), c("small", "2G", "8G")], inits=[c("init", "100M", "8G")])
    assert container_oom_score_adj(q, "init", CAP) > small


def test_pod_level_share():
    p = pod([c("a", "1G"), c("b")], resources={"requests": {"memory": "3G"}})
    assert aggregate_memory_request(p) == 10**9
    assert remaining_memory_per_container(p) == 10**9
    assert container_oom_score_adj(p, "b", CAP) == 1000 - 1000 * 10**9 // CAP
    assert container_oom_score_adj(p, "b", CAP, pod_level_resources=False) == 999


def test_aggregate_counts_sidecars_and_init_peak():
    p = pod([c("a", "1G")], inits=[c("s", "1G", sidecar=True), c("i", "5G")])
    assert aggregate_memory_request(p) == 6 * 10**9


def test_the_formula_reads_the_request_and_the_api_server_defaults_it_from_the_limit():
    p = pod([c("a", None, "4G"), c("b", "1G")])
    # as upstream's GetContainerOOMScoreAdjust: no memory request is 0 bytes asked, the most killable
    assert container_oom_score_adj(p, "a", CAP) == 999
    # a pod the kubelet sees went through API defaulting: the limit became the request
    assert container_oom_score_adj(p.defaulted(), "a", CAP) == 500


def test_bad_capacity_and_unknown_container():
    p = pod([c("a", "1G")])
    with pytest.raises(InputError):
        container_oom_score_adj(p, "a", 0)
    with pytest.raises(InputError):
        container_oom_score_adj(p, "nope", CAP)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2 * CAP), min_size=1, max_size=4))
def test_burstable_scores_stay_between_guaranteed_and_besteffort(reqs):
    # explicit requests (even "0"): an absent request would default to the limit
    p = pod([{"name": f"c{i}", "resources": {"requests": {"memory": str(r)}, "limits": {"memory": str(4 * CAP)}}}
             for i, r in enumerate(reqs)])
    scores = pod_oom_score_adjs(p, CAP)
    for name, s in scores.items():
        assert 3 <= s <= 999
    # a larger request never gives a higher score
    pairs = sorted(zip(reqs, (scores[f"c{i}"] for i in range(len(reqs)))))
    assert all(a[1] >= b[1] for a, b in zip(pairs, pairs[1:]))
