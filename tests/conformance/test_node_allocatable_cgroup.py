"""Every vector of kubelet/node_allocatable_cgroup.json: the kubepods cgroup's settings."""
from __future__ import annotations

import pytest

from pynuma.policy.cgroupconfig.node import node_allocatable_cgroup_config
from pynuma.quantity import Quantity
from tests.conformance.vectors import vectors

FLAGS = {"cpu_shares_set": "cpu_shares", "memory_set": "memory", "pids_limit_set": "pids_limit",
         "hugepage_limits_set": "hugepage_limits"}


@pytest.mark.parametrize("v", vectors("node_allocatable_cgroup.json"))
def test_node_allocatable_cgroup_config(v):
    raw = v["resources"]
    resources = None if raw is None else {k: Quantity.parse(q) for k, q in raw.items()}
    cfg = node_allocatable_cgroup_config(resources, v["compressible_resources_only"])
    expect = v["expect"]
    if "config" in expect:
        assert expect["config"] is None and cfg is None
        return
    assert cfg is not None
    for flag, want in expect.items():
        assert (getattr(cfg, FLAGS[flag]) is not None) == want, (flag, cfg)
