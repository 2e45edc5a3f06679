"""Every vector of kubelet/cgroup_conversions.json: milli-CPU, shares, quota, weight, hugetlb limits."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.cgroupconfig import conversions as cv
from pynuma.quantity import Quantity
from tests.conformance.vectors import vectors


def _config(v):
    return v.get("config")


def _run(v):
    kind = v["kind"]
    cfg = _config(v) or {}
    if kind == "milli_cpu_to_quota":
        return {"quota_us": cv.milli_cpu_to_quota(v["milli_cpu"], v["period_us"])}
    if kind == "milli_cpu_to_shares":
        return {"shares": cv.milli_cpu_to_shares(v["milli_cpu"])}
    if kind == "shares_to_milli_cpu":
        return {"milli_cpu": cv.shares_to_milli_cpu(v["shares"])}
    if kind == "milli_cpu_shares_round_trip":
        return {"milli_cpu": cv.shares_to_milli_cpu(cv.milli_cpu_to_shares(v["milli_cpu"]))}
    if kind == "quota_to_milli_cpu":
        return {"milli_cpu": cv.quota_to_milli_cpu(v["quota_us"], v["period_us"])}
    if kind == "cpu_request_from_config":
        return {"milli_cpu": None if _config(v) is None else cv.cpu_request_from_config(cfg.get("cpu_shares"))}
    if kind == "cpu_limit_from_config":
        return {"milli_cpu": None if _config(v) is None
                else cv.cpu_limit_from_config(cfg.get("cpu_quota"), cfg.get("cpu_period"))}
    if kind == "memory_limit_from_config":
        return {"bytes": None if _config(v) is None else cv.memory_limit_from_config(cfg.get("memory"))}
    if kind == "shares_to_weight":
        return {"weight": cv.shares_to_weight(v["shares"])}
    if kind == "weight_to_shares":
        return {"shares": cv.weight_to_shares(v["weight"])}
    if kind == "shares_equal_after_v2_round_trip":
        return {"equal": cv.shares_equal_after_v2_round_trip(v["allocated_shares"], v["readback_shares"])}
    if kind == "hugepage_limits":
        res = {k: Quantity.parse(q) for k, q in v["resources"].items()}
        return {str(size): limit for size, limit in cv.hugepage_limits(res).items()}
    raise AssertionError(f"unknown kind {kind!r}")


@pytest.mark.parametrize("v", vectors("cgroup_conversions.json"))
def test_cgroup_conversion(v):
    expect = v["expect"]
    if expect.get("error") is True:
        with pytest.raises(InputError):
            _run(v)
        return
    got = _run(v)
    if v["kind"] == "hugepage_limits":
        assert got == {k: int(x) for k, x in expect.items()}
        return
    for key, want in expect.items():
        assert got[key] == want, (key, got)


@pytest.mark.parametrize("v", vectors("cgroup_conversions.json",
                                      lambda v: v.get("kind") == "shares_equal_after_v2_round_trip"))
def test_allocated_shares_come_from_the_stated_millicpu(v):
    # the vector states how its allocated shares were made: hold our conversion to it
    assert cv.milli_cpu_to_shares(v["allocated_shares_from_milli_cpu"]) == v["allocated_shares"]
