"""Every vector of kubelet/pod_cgroup_config.json: the pod cgroup's settings (``ResourceConfigForPod``)."""
from __future__ import annotations

import pytest

from pynuma.policy.cgroupconfig.pod import resource_config_for_pod
from tests.conformance._cgroup_pods import build_pod
from tests.conformance.vectors import vectors


def _config(v):
    gates = v.get("feature_gates") or {}
    custom = gates.get("CustomCPUCFSQuotaPeriod")
    return resource_config_for_pod(
        build_pod(v["pod"], where=f"vector {v['name']}"),
        enforce_cpu_limits=v["enforce_cpu_limits"], cpu_period_us=v["cpu_period_us"],
        enforce_memory_qos=v["enforce_memory_qos"], memory_reservation_policy=v["memory_reservation_policy"],
        pod_level_resources=gates.get("PodLevelResources", True),
        custom_cpu_cfs_quota_period=custom if custom is False else None)


@pytest.mark.parametrize("v", vectors("pod_cgroup_config.json"))
def test_resource_config_for_pod(v):
    cfg = _config(v)
    for key, want in v["expect"].items():
        got = getattr(cfg, key)
        if key == "hugepage_limits":
            assert got is not None
            assert {str(k): x for k, x in got.items()} == {k: int(x) for k, x in want.items()}
        elif key == "unified" and want is not None:
            assert got == want
        else:
            assert got == want, (key, cfg)
