"""Every vector of kubelet/admission_fit.json: the kubelet's admission predicate and in-place resize."""
from __future__ import annotations

import pytest

from pynuma.ledger import fit as f
from pynuma.ledger import predicates as pr
from pynuma.ledger.node import NodeState
from pynuma.ledger.resize import retry_pending_resize
from pynuma.pod import PodCondition
from tests.conformance._ledger_pods import pod, same_resources
from tests.conformance.vectors import vectors


def _node(v, existing):
    n = v.get("node") or {}
    return NodeState.build(v["node_allocatable"], existing, name=n.get("name", ""), labels=n.get("labels") or {},
                           taints=n.get("taints") or [])


def _existing(v):
    return [pod(p, f"existing-{i}") for i, p in enumerate(v.get("existing_pods") or [])]


def _failure_json(records, failures):
    out = [{"type": "insufficient_resource", "resource_name": r.resource_name, "requested": r.requested,
            "used": r.used, "capacity": r.capacity} for r in records]
    return out + [{"type": "predicate", "predicate_name": p.name, "reason": p.reason} for p in failures]


def _check_admit(v):
    p = pod(v["pod"])
    node = _node(v, _existing(v))
    records, failures = f.general_predicates(f.remove_missing_extended_resources(p, node), node)
    assert _failure_json(records, failures) == v["expect"]["failure_reasons"]
    got = f.kubelet_admit(p, node)
    assert got.fits is v["expect"]["admit"]
    derived = v.get("expect_derived")
    if derived:
        assert (got.reason, got.message) == (derived["reason"], derived["message"])


def _check_admission_check(v):
    opts = f.FitOptions(include_all_failures=bool((v.get("options") or {}).get("include_all_failures", True)))
    records, failures = f.admission_check(pod(v["pod"]), _node(v, _existing(v)), opts)
    got = [{"insufficient_resource": r.to_json()} for r in records] + [p.to_json() for p in failures]
    assert got == v["expect"]["results"]


def _check_remove_missing(v):
    node = NodeState.build(v["node_allocatable"])
    got = f.remove_missing_extended_resources(pod(v["pod"]), node)
    want = pod(v["expect"]["pod"])
    for a, b in zip(got.all_containers(), want.all_containers(), strict=True):
        assert same_resources(a.requests, {k: str(q) for k, q in b.requests.items()})
        assert same_resources(a.limits, {k: str(q) for k, q in b.limits.items()})


def _check_sequence(v):
    updates = v.get("plugin_resource_update")
    node = _node(v, _existing(v))
    admitted = _existing(v)
    phases = {}
    for raw in sorted(v["pods"], key=lambda p: p.get("creation_order", 0)):
        p = pod(raw)

        def update(candidate, state):
            # the device manager's view: it sets allocatable of the plugin resources the pod asks for,
            # and fails (as the test's fake does) for a negative amount
            if updates is None:
                return state
            new = {}
            for c in candidate.containers:
                for name in c.requests:
                    if name in updates:
                        amount = int(updates[name])
                        if amount < 0:
                            raise RuntimeError("Allocation failed")
                        new[name] = amount
            return state.with_allocatable(new)

        current = NodeState.build(v["node_allocatable"], admitted, name=node.name, labels=node.labels,
                                  taints=node.taints)
        got = f.kubelet_admit(p, current, update_plugin_resources=update)
        phases[p.name] = "Pending" if got.fits else "Failed"
        if got.fits:
            admitted.append(p)
        derived = (v.get("expect_derived") or {}).get(p.name)
        if derived:
            assert (got.reason, got.message) == (derived["reason"], derived["message"])
    assert phases == v["expect"]["phases"]


def _check_resize(v):
    opts = v.get("options") or {}
    pod_level = bool(opts.get("InPlacePodLevelResourcesVerticalScaling"))
    current = pod(v["pod"])
    desired = pod(v["resized_pod"])
    allocated = desired if v.get("new_resources_already_allocated") else current
    prior = [PodCondition(c["type"], c.get("status", "True"), c.get("reason", ""), c.get("message", ""))
             for c in v.get("prior_conditions") or []]
    out = retry_pending_resize(v["node_allocatable"], _existing(v), allocated, desired, prior, pod_level)
    exp = v["expect"]
    c = out.allocated.container(v["resize_container"])
    assert same_resources(c.requests, exp["allocated_requests"]), c.requests
    assert same_resources(c.limits, exp["allocated_limits"]), c.limits
    if "allocated_pod_requests" in exp:
        assert same_resources(out.allocated.pod_requests or {}, exp["allocated_pod_requests"])
    assert len(out.conditions) == len(exp["conditions"]), out.conditions
    for got, want in zip(out.conditions, exp["conditions"]):
        assert (got.type, got.status) == (want["type"], want["status"])
        if "reason" in want:
            assert got.reason == want["reason"]
        if want.get("message_match") == "empty":
            assert got.message == ""
        elif want.get("message_match") == "contains":
            assert want["message"] in got.message, got.message
        else:
            assert got.message == want["message"]
    assert out.changed is exp["pod_sync_triggered"]


def _check_os(v):
    if v["kind"] == "os_label_check":
        assert pr.reject_by_os_label(v.get("pod_labels") or {}, v["host_os"]) is v["expect"]["reject"]
    else:
        assert pr.reject_by_os_field(v.get("pod_os"), v["host_os"]) is v["expect"]["reject"]


CHECKS = {"admit": _check_admit, "admission_check": _check_admission_check,
          "remove_missing_extended_resources": _check_remove_missing, "admit_sequence": _check_sequence,
          "resize": _check_resize, "os_label_check": _check_os, "os_field_check": _check_os}


@pytest.mark.parametrize("v", vectors("admission_fit.json"))
def test_admission_fit(v):
    check = CHECKS.get(v["kind"])
    assert check is not None, f"unknown kind {v['kind']!r}: the schema grew; implement it"
    check(v)
