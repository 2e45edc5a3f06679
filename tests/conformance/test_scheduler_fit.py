"""Every vector of kubelet/scheduler_fit.json: the scheduler's NodeResourcesFit filter."""
from __future__ import annotations

import pytest

from pynuma.ledger.fit import FitOptions, scheduler_fit
from pynuma.ledger.node import NodeState
from tests.conformance._ledger_pods import pod
from tests.conformance.vectors import vectors


def _options(o) -> FitOptions:
    return FitOptions(
        pod_level_resources=bool(o.get("PodLevelResources", False)),
        sidecar_containers=bool(o.get("SidecarContainers", True)),
        ignored_resources=frozenset(o.get("ignored_resources") or ()),
        ignored_resource_groups=frozenset(o.get("ignored_resource_groups") or ()),
        dra_extended_resource=bool(o.get("DRAExtendedResource", False)),
        device_class_extended_resources=frozenset(o.get("device_class_extended_resources") or ()),
        dra_manager_absent=bool(o.get("dra_manager_absent", False)),
    )


@pytest.mark.parametrize("v", vectors("scheduler_fit.json"))
def test_scheduler_fit(v):
    assert v["kind"] == "fit", f"unknown kind {v['kind']!r}: the schema grew; implement it"
    opts = _options(v.get("options") or {})
    existing = [pod(p, f"existing-{i}") for i, p in enumerate(v["existing_pods"])]
    node = NodeState.build(v["node_allocatable"], existing, pod_level_resources=opts.pod_level_resources)
    got = scheduler_fit(pod(v["pod"]), node, opts)
    exp = v["expect"]
    assert got.fits is exp["fits"], got
    if "status_code" in exp:
        assert got.status_code == exp["status_code"]
    if "reasons" in exp:
        assert list(got.reasons) == exp["reasons"]
    if "insufficient" in exp:
        assert [i.to_json() for i in got.insufficient] == exp["insufficient"]
    if "failed_stage" in exp:
        assert got.failed_stage == exp["failed_stage"]
