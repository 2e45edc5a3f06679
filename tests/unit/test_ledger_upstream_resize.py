"""In-place resize decisions checked against upstream kubernetes beyond the shipped vectors.

Inputs are built as tests/conformance/test_admission_fit.py ``_check_resize`` builds them (the
TestRetryPendingResizes node: allocatable cpu 4, memory 4Gi, 40 pods; two other pods of 1 cpu / 1Gi).
Expected outputs are upstream's ``canResizePod`` (pkg/kubelet/allocation/allocation_manager.go):

* Infeasible: ``resource.GetResourceRequest`` (pkg/api/v1/resource/helpers.go) of the desired pod
  against allocatable, **memory named first**; with pod-level resources set the containers are skipped
  (``SkipContainerLevelResources``), and overhead is added only to a non-zero total;
* Deferred: ``canAdmitPod`` runs the predicate admit handler, which removes missing extended resources
  and runs the general predicates (NodeAffinity, NodeName, NodePorts, NoExecute taints).
"""
from __future__ import annotations

from pynuma.ledger.resize import retry_pending_resize
from tests.conformance._ledger_pods import pod

ALLOC = {"cpu": "4", "memory": "4Gi", "pods": "40"}
OTHER = {"containers": [{"name": "c1", "requests": {"cpu": "1", "memory": "1Gi"}, "limits": {}}]}


def _others(*extra):
    return [pod(OTHER, "pod1"), pod(OTHER, "pod3")] + [pod(e, f"extra-{i}") for i, e in enumerate(extra)]


def _pod(requests, **extra):
    raw = {"containers": [{"name": "c1", "requests": requests, "limits": {}, **extra.pop("container", {})}],
           "initContainers": []}
    raw.update(extra)
    return pod(raw, "pod2")


CURRENT = _pod({"cpu": "1", "memory": "1Gi"})


def _pending(out):
    assert len(out.conditions) >= 1 and out.conditions[0].type == "PodResizePending"
    assert out.allocated is CURRENT
    return out.conditions[0].reason, out.conditions[0].message


def test_infeasible_names_memory_when_both_exceed_allocatable():
    out = retry_pending_resize(ALLOC, _others(), CURRENT, _pod({"cpu": "5", "memory": "4500Mi"}))
    assert out.decision == "infeasible"
    assert _pending(out) == ("Infeasible", "Node didn't have enough capacity: memory, requested: 4718592000, "
                                           "capacity: 4294967296")
    # cpu alone still names cpu
    out = retry_pending_resize(ALLOC, _others(), CURRENT, _pod({"cpu": "5", "memory": "1Gi"}))
    assert _pending(out) == ("Infeasible", "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000")


def test_infeasible_request_skips_containers_under_pod_level_resources_and_zero_totals_get_no_overhead():
    # pod-level requests name cpu only: GetResourceRequest ignores the containers, so memory is 0 and
    # the resize is not infeasible; the admission check (which does count the container's memory) defers it
    pod_level = _pod({"memory": "5Gi"}, resources={"requests": {"cpu": "1"}})
    out = retry_pending_resize(ALLOC, _others(), CURRENT, pod_level)
    assert out.decision == "deferred"
    assert _pending(out)[0] == "Deferred"
    assert "Node didn't have enough resource: memory" in _pending(out)[1]

    # overhead is added only to a non-zero request: 0 cpu plus 5 cpu of overhead is not infeasible
    overhead_only = _pod({"memory": "1Gi"}, overhead={"cpu": "5", "memory": "100Mi"})
    out = retry_pending_resize(ALLOC, _others(), CURRENT, overhead_only)
    assert out.decision == "deferred"
    assert "Node didn't have enough resource: cpu, requested: 5000" in _pending(out)[1]

    from pynuma.ledger.resize import resource_request

    assert resource_request(pod_level, "memory") == 0 and resource_request(pod_level, "cpu") == 1000
    # without the PodLevelResources gate the containers count
    assert resource_request(pod_level, "memory", pod_level_resources=False) == 5 << 30
    assert resource_request(overhead_only, "cpu") == 0
    assert resource_request(overhead_only, "memory") == (1 << 30) + (100 << 20)


def test_deferred_check_is_the_kubelet_admission():
    # a cluster-level extended resource the node does not list is removed before the check: accepted
    extended = _pod({"cpu": "1500m", "memory": "1Gi", "example.com/quota": "1"})
    out = retry_pending_resize(ALLOC, _others(), CURRENT, extended)
    assert out.decision == "accepted" and out.allocated is extended
    assert [(c.type, c.message) for c in out.conditions] == [("PodResizeInProgress", "")]

    # the general predicates run too: a host port another pod holds defers the resize
    port = {"ports": [{"containerPort": 80, "hostPort": 8080}]}
    holder = {"containers": [{"name": "web", "requests": {}, "limits": {}, **port}]}
    wants_port = _pod({"cpu": "1500m", "memory": "1Gi"}, container=port)
    out = retry_pending_resize(ALLOC, _others(holder), CURRENT, wants_port)
    assert _pending(out) == ("Deferred", "Predicate NodePorts failed: node(s) didn't have free ports for the "
                                         "requested pod ports")

    # and so do the node's NoExecute taints (static pods excepted) when the node is described
    taint = {"key": "maintenance", "effect": "NoExecute"}
    grow = _pod({"cpu": "1500m", "memory": "1Gi"})
    out = retry_pending_resize(ALLOC, _others(), CURRENT, grow, node_name="n1", node_taints=[taint])
    assert _pending(out) == ("Deferred", "Predicate TaintToleration failed: node(s) had taints that the pod "
                                         "didn't tolerate")
    static = _pod({"cpu": "1500m", "memory": "1Gi"}, annotations={"kubernetes.io/config.source": "file"})
    out = retry_pending_resize(ALLOC, _others(), CURRENT, static, node_name="n1", node_taints=[taint])
    assert out.decision == "accepted"
