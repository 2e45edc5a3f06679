"""Every vector of kubelet/pod_requests.json: pod requests and limits as the scheduler computes them."""
from __future__ import annotations

import pytest

from pynuma.policy import podrequests as rq
from pynuma.quantity import Quantity
from tests.conformance._ledger_pods import pod, same_resources
from tests.conformance.vectors import vectors


def _options(v) -> rq.RequestOptions:
    o = v.get("options") or {}
    return rq.RequestOptions(
        exclude_overhead=bool(o.get("exclude_overhead")),
        skip_pod_level_resources=bool(o.get("skip_pod_level_resources")),
        use_status_resources=bool(o.get("use_status_resources")),
        non_missing_container_requests={k: Quantity.parse(q) for k, q in
                                        (o.get("non_missing_container_requests") or {}).items()},
    )


def _show(res):
    return {k: str(q) for k, q in res.items()}


@pytest.mark.parametrize("v", vectors("pod_requests.json"))
def test_pod_requests(v):
    kind = v["kind"]
    if kind == "is_supported_pod_level_resource":
        assert rq.is_supported_pod_level_resource(v["resource_name"]) is v["expect"]
        return
    p = pod(v["pod"])
    if kind == "is_pod_level_resources_set":
        assert rq.is_pod_level_resources_set(p) is v["expect"]
        return
    if kind == "is_pod_level_limits_set":
        assert rq.is_pod_level_limits_set(p) is v["expect"]
        return
    opts = _options(v)
    if kind == "pod_requests":
        got = rq.pod_requests(p, opts)
        assert same_resources(got, v["expect"]), _show(got)
        if "expect_limits" in v:
            lim = rq.pod_limits(p, opts)
            assert same_resources(lim, v["expect_limits"]), _show(lim)
    elif kind == "pod_limits":
        got = rq.pod_limits(p, opts)
        assert same_resources(got, v["expect"]), _show(got)
    elif kind == "aggregate_container_resources":
        got = rq.container_requests(p, opts)
        assert same_resources(got, v["expect"]), _show(got)
        lim = rq.container_limits(p, opts)
        assert same_resources(lim, v.get("expect_limits") or {}), _show(lim)
    else:
        pytest.fail(f"unknown kind {kind!r}: the schema grew; implement it")
