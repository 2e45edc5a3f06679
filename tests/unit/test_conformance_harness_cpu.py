"""Hand-made CPU/topology-manager vectors for ops and optional fields no public vector exercises.

They run through the harness functions of tests/conformance (static_policy
``allocate_pod_then_remove``; cpu_hints ``allocated`` in container scope;
policy_options ``options: null`` and ``distances_available: false``;
hint_merge_internals ``options: null``).  Expected values follow
pkg/kubelet/cm/cpumanager and pkg/kubelet/cm/topologymanager.
"""
from __future__ import annotations

import copy

import pytest

from tests.conformance import test_cpu_hints, test_hint_merge_internals, test_policy_options_topologymanager
from tests.conformance import test_static_policy
from tests.conformance.vectors import topologies

pytestmark = pytest.mark.skipif(not topologies(), reason="conformance topologies not found")


def _pod(*containers):
    return {"uid": "podUID", "containers": list(containers)}


def _c(name, cpus, **more):
    q = f"{cpus}000m"
    return {"name": name, "request": q, "limit": q, **more}


def _static(op, pod, expect, **more):
    v = {"name": "hand-made", "op": op, "topology": "topoSingleSocketHT", "options": {}, "num_reserved": 0,
         "default_cpuset": "0-7", "assignments": {}, "pod": pod, "expect": expect}
    v.update(more)
    return v


def test_regular_init_cpus_are_reused_then_released_minus_siblings():
    # init (regular) takes cores 0,1 = {0,1,4,5}; the app reuses a core of it ({0,4});
    # removing the init container releases only what no sibling still uses ({1,5}).
    pod = _pod(_c("init-0", 4, init=True), _c("app-0", 2))
    v = _static("allocate_pod_then_remove", pod,
                {"default_cpuset_after_allocate": "2-3,6-7", "default_cpuset_after_remove": "1-3,5-7"},
                remove={"pod": "podUID", "container": "init-0"})
    test_static_policy.test_static_policy(v)


def test_remove_target_may_be_a_bare_container_name():
    pod = _pod(_c("init-0", 4, init=True), _c("app-0", 2))
    v = _static("allocate_pod_then_remove", pod, {"default_cpuset": "1-3,5-7"}, remove="init-0")
    test_static_policy.test_static_policy(v)


def test_sidecar_cpus_are_never_reused():
    pod = _pod(_c("sidecar-0", 4, init=True, restart_policy="Always"), _c("app-0", 2))
    v = _static("allocate_pod_then_remove", pod,
                {"default_cpuset_after_allocate": "3,7", "default_cpuset_after_remove": "0-1,3-5,7"},
                remove={"pod": "podUID", "container": "sidecar-0"})
    test_static_policy.test_static_policy(v)


def test_allocate_pod_then_remove_checks_can_fail():
    pod = _pod(_c("init-0", 4, init=True), _c("app-0", 2))
    v = _static("allocate_pod_then_remove", pod, {"default_cpuset_after_remove": "0-7"},
                remove={"pod": "podUID", "container": "init-0"})
    with pytest.raises(AssertionError):
        test_static_policy.test_static_policy(v)


def test_explicit_reserved_list_is_kept_out_of_the_shared_pool_on_start():
    v = _static("start", None, {"default_cpuset": "0-7"}, num_reserved=2, reserved="1,5", default_cpuset="")
    test_static_policy.test_static_policy(v)
    # a reserved list whose size disagrees with num_reserved fails when the policy is built
    bad = _static("start", None, {"error": "unable to reserve the required amount of CPUs", "phase": "new_policy"},
                  num_reserved=3, reserved="1,5", default_cpuset="")
    test_static_policy.test_static_policy(bad)


def _hints(scope, count, allocated, expect):
    return {"name": "hand-made", "scope": scope, "topology": "hintsMachineInfoDualSocketHT", "available": "",
            "count": count, "reusable": "", "options": {}, "allocated": allocated, "expect": expect}


def test_container_scope_hints_regenerated_from_allocated_cpus():
    # 0,6 sit on NUMA node 0 of that machine (see the public pod-scope vector of the same shape)
    test_cpu_hints.test_cpu_hints(_hints("container", 2, "0,6",
                                         [{"numa": [0], "preferred": True}, {"numa": [0, 1], "preferred": False}]))


def test_container_scope_allocated_size_mismatch_gives_no_hints():
    test_cpu_hints.test_cpu_hints(_hints("container", 4, "0,6", []))


def _tm(op, expect, **more):
    v = {"name": "hand-made", "component": "topologymanager", "op": op, "expect": expect}
    v.update(more)
    return v


def test_topology_manager_options_may_be_null():
    test_policy_options_topologymanager.test_topologymanager_options(
        _tm("parse_options", {"prefer_closest_numa": False, "max_allowable_numa_nodes": 8}, options=None,
            feature_gates={}))
    test_policy_options_topologymanager.test_topologymanager_options(
        _tm("new_manager", {"policy": "best-effort"}, policy="best-effort", scope="container", numa_nodes=[0, 1]))


def test_prefer_closest_numa_needs_distances():
    v = _tm("new_manager", {"error": "error getting NUMA distances"}, policy="best-effort", scope="container",
            options={"prefer-closest-numa-nodes": "true"}, numa_nodes=[0, 1], distances_available=False)
    test_policy_options_topologymanager.test_topologymanager_options(v)
    ok = copy.deepcopy(v)
    del ok["distances_available"]
    ok["expect"] = {"policy": "best-effort"}
    test_policy_options_topologymanager.test_topologymanager_options(ok)


def test_none_policy_accepts_more_than_eight_nodes():
    nine = list(range(9))
    test_policy_options_topologymanager.test_topologymanager_options(
        _tm("new_manager", {"policy": "none"}, policy="none", scope="container", options={}, numa_nodes=nine))
    test_policy_options_topologymanager.test_topologymanager_options(
        _tm("new_manager", {"error": True}, policy="single-numa-node", scope="container", options={},
            numa_nodes=nine))
    test_policy_options_topologymanager.test_topologymanager_options(
        _tm("new_manager", {"scope": "pod"}, policy="restricted", scope="pod",
            options={"max-allowable-numa-nodes": "9"}, numa_nodes=nine))


def test_compare_with_null_options():
    v = {"name": "hand-made", "op": "compare", "policy": "best-effort", "options": None,
         "best_non_preferred_affinity_count": 1, "current": {"numa": [0, 1], "preferred": True},
         "candidate": {"numa": [0], "preferred": True}, "expect": "candidate"}
    test_hint_merge_internals.test_internals(v)


D4 = [[10, 20, 20, 20], [20, 10, 20, 20], [20, 20, 10, 20], [20, 20, 20, 10]]
PAIRS = [[10, 11, 30, 30], [11, 10, 30, 30], [30, 30, 10, 11], [30, 30, 11, 10]]


@pytest.mark.parametrize("current,candidate,distances,expect", [
    ([0, 3], [1, 2], D4, "candidate"),        # same count and distance: the numerically smaller mask
    ([0, 1], [0, 1, 2], D4, "current"),       # different counts: the narrower
    ([1, 2], [2, 3], PAIRS, "candidate"),     # same count: the smaller average distance
    ([0], [0, 1], None, "current"),           # no matrix (as upstream's width cases): the narrower
    ([0, 2, 3], [1], None, "candidate"),
])
def test_closest_variants(current, candidate, distances, expect):
    from tests.conformance import test_numa_info
    test_numa_info.test_numa_info({"name": "hand-made", "op": "closest", "distances": distances,
                                   "current": current, "candidate": candidate, "expect": expect})


def _admit_vector(policy, providers, admit):
    # TestAdmit shape: expect null (only admission asserted), qos and scopes given.
    return {"name": "hand-made", "policy": policy, "options": {}, "numa_nodes": [0, 1], "distances": None,
            "providers": providers, "expect": None, "admit": admit, "qos": "Guaranteed",
            "scopes": ["container", "pod"]}


@pytest.mark.parametrize("v", [
    _admit_vector("single-numa-node", [{"cpu": [{"numa": [0, 1], "preferred": True}]}], False),
    _admit_vector("restricted", [{"cpu": [{"numa": [0, 1], "preferred": False}]}], False),
    _admit_vector("best-effort", [{"cpu": []}], True),
    _admit_vector("restricted", [{"cpu": None}, {}], True),
], ids=lambda v: v["policy"])
def test_admit_only_vectors(v, backend, monkeypatch):
    from tests.conformance import test_hint_merge
    test_hint_merge.test_merge(v, backend, monkeypatch)
    test_hint_merge.test_admit_through_manager(v)
