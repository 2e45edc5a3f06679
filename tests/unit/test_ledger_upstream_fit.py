"""Scheduler fit / kubelet admission details checked against upstream kubernetes beyond the shipped vectors.

Inputs are built as tests/conformance/test_admission_fit.py and test_scheduler_fit.py build them
(compact vector pods, ``NodeState.build``); the expected outputs are upstream's:

* ``types.IsStaticPod`` (pkg/kubelet/types): the ``kubernetes.io/config.source`` annotation exists
  and is not ``api``; ``generalFilter`` (pkg/kubelet/lifecycle/predicate.go) skips taints for them;
* ``schedutil.GetHostPorts`` (pkg/scheduler/util/utils.go): ports of app containers and restartable
  init containers only, both for the pod's wanted ports (``nodeports.Fits``) and the node's used
  ports (``NodeInfo.updateUsedPorts``);
* ``nodename.Fits``: ``len(pod.Spec.NodeName) == 0 || pod.Spec.NodeName == node.Name``;
* ``calculateResource`` (pkg/scheduler/framework): pods on the node count with
  ``UseStatusResources`` (InPlacePodVerticalScaling, on by default).
"""
from __future__ import annotations

import pynuma.ledger as ledger
from pynuma.ledger import fit as f
from pynuma.ledger import predicates as pr
from pynuma.ledger.node import NodeState
from pynuma.policy import podrequests
from tests.conformance._ledger_pods import pod

ALLOC = {"cpu": "4", "memory": "8Gi", "pods": "10"}
NO_EXECUTE = {"key": "dedicated", "value": "db", "effect": "NoExecute"}


def _node(existing=(), name="machine1", taints=()):
    return NodeState.build(ALLOC, [pod(p, f"existing-{i}") for i, p in enumerate(existing)], name=name,
                           labels={}, taints=list(taints))


def _names(records, failures):
    return [r.resource_name for r in records] + [p.name for p in failures]


def test_static_pod_is_any_source_but_the_api_server():
    node = _node(taints=[NO_EXECUTE])
    for source, static in (("file", True), ("http", True), ("", True), ("api", False), (None, False)):
        raw = {"containers": [{"name": "c"}]}
        if source is not None:
            raw["annotations"] = {"kubernetes.io/config.source": source}
        p = pod(raw)
        assert pr.is_static_pod(p) is static, source
        records, failures = f.general_predicates(f.remove_missing_extended_resources(p, node), node)
        assert _names(records, failures) == ([] if static else [pr.TAINT_TOLERATION]), source
        assert f.kubelet_admit(p, node).fits is static, source


def _port(n):
    return [{"containerPort": n, "hostPort": n}]


def test_regular_init_container_ports_are_neither_held_nor_wanted():
    # a pod already on the node whose regular init container used hostPort 8080: the port is free again
    holder = {"containers": [{"name": "app"}], "initContainers": [{"name": "init", "ports": _port(8080)}]}
    node = _node([holder])
    assert node.host_ports == ()
    wants = pod({"containers": [{"name": "app", "ports": _port(8080)}]})
    assert pr.node_ports(wants, node) is None
    assert f.kubelet_admit(wants, node).fits

    # a pod whose regular init container names a port in use: only running containers' ports are wanted
    busy = _node([{"containers": [{"name": "app", "ports": _port(9090)}]}])
    init_only = pod({"containers": [{"name": "app"}], "initContainers": [{"name": "init", "ports": _port(9090)}]})
    assert pr.node_ports(init_only, busy) is None
    assert f.kubelet_admit(init_only, busy).fits

    # sidecars (restartPolicy Always) run with the pod: their ports are held and wanted
    sidecar = {"name": "proxy", "restartPolicy": "Always", "ports": _port(7070)}
    held = _node([{"containers": [{"name": "app"}], "initContainers": [sidecar]}])
    assert [hp.port for hp in held.host_ports] == [7070]
    assert pr.node_ports(pod({"containers": [{"name": "app", "ports": _port(7070)}]}), held) == pr.ERR_NODE_PORTS
    wants_sidecar = pod({"containers": [{"name": "app"}], "initContainers": [sidecar]})
    assert pr.node_ports(wants_sidecar, busy) is None
    got = f.kubelet_admit(wants_sidecar, held)
    assert not got.fits and got.reason == pr.NODE_PORTS


def test_node_name_predicate_is_upstream_exact_and_skipped_only_for_an_unknown_name():
    bound = pod({"containers": [{"name": "c"}], "nodeName": "machine2"})
    unbound = pod({"containers": [{"name": "c"}]})
    # the predicate itself: nodeName empty, or equal to the node's name (an empty node name included)
    assert pr.node_name(bound, _node(name="")) == pr.ERR_NODE_NAME
    assert pr.node_name(bound, _node(name="machine1")) == pr.ERR_NODE_NAME
    assert pr.node_name(bound, _node(name="machine2")) is None
    assert pr.node_name(unbound, _node(name="")) is None
    # admission: a known name is checked; a node whose name pynuma was not told ("") skips the predicate
    assert f.kubelet_admit(bound, _node(name="machine1")).reason == pr.NODE_NAME
    assert not pr.node_name_known(_node(name=""))
    assert f.kubelet_admit(bound, _node(name="")).fits


def _status_pod(spec_cpu, allocated_cpu=None, actual_cpu=None, infeasible=False):
    status = {"name": "c"}
    if allocated_cpu is not None:
        status["allocatedResources"] = {"cpu": allocated_cpu}
    if actual_cpu is not None:
        status["resources"] = {"requests": {"cpu": actual_cpu}}
    raw = {"containers": [{"name": "c", "requests": {"cpu": spec_cpu}}],
           "status": {"containerStatuses": [status]}}
    if infeasible:
        raw["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    return raw


def test_pods_on_the_node_count_with_their_status_resources():
    new = pod({"containers": [{"name": "c", "requests": {"cpu": "2"}}]})
    opts = f.FitOptions()
    cases = [
        (_status_pod("1", allocated_cpu="3"), 3000),               # resize allocated, not yet actuated
        (_status_pod("1", allocated_cpu="1", actual_cpu="2500m"), 2500),  # still running bigger
        (_status_pod("3", allocated_cpu="1", infeasible=True), 1000),   # infeasible desired spec ignored
        (_status_pod("1"), 1000),                                   # no status: the spec
    ]
    for raw, used in cases:
        node = NodeState.build(ALLOC, [pod(raw, "existing-0")], pod_level_resources=opts.pod_level_resources)
        assert node.requested["cpu"] == used, raw
        got = f.scheduler_fit(new, node, opts)
        assert got.fits is (used + 2000 <= 4000), raw
        if not got.fits:
            assert [i.to_json() for i in got.insufficient] == [
                {"resource_name": "cpu", "reason": "Insufficient cpu", "requested": 2000, "used": used,
                 "capacity": 4000, "unresolvable": False}]
    # the kubelet's admission builds its node the same way
    node = _node([_status_pod("1", allocated_cpu="3")])
    assert f.kubelet_admit(new, node).message == (
        "Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000")


def test_lazy_request_exports_point_at_policy_podrequests():
    assert ledger.pod_requests is podrequests.pod_requests
    assert ledger.pod_limits is podrequests.pod_limits
    assert ledger.RequestOptions is podrequests.RequestOptions
