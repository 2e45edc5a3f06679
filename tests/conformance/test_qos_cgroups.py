"""Every vector of kubelet/qos_cgroups.json: the kubepods / burstable / besteffort cgroups."""
from __future__ import annotations

import pytest

from pynuma.policy.cgroupconfig.pod import MEMORY_LOW, MEMORY_MIN
from pynuma.policy.cgroupconfig.qos import qos_cgroup_config
from pynuma.quantity import Quantity
from tests.conformance._cgroup_pods import build_pod
from tests.conformance.vectors import vectors

CLASSES = {"guaranteed": "guaranteed", "burstable": "burstable", "besteffort": "besteffort"}


def _pods(raw, name):
    return [build_pod(p, where=f"vector {name}") for p in raw]


def _config(v):
    gates = v.get("feature_gates") or {}
    plr = gates.get("PodLevelResources", True)
    pods = _pods(v.get("pods") or [], v["name"])
    under = v.get("pods_under_root")
    allocatable = (v.get("allocatable") or {}).get("memory")
    reserved = (v.get("qos_reserved") or {}).get("memory")
    return qos_cgroup_config(
        pods, pods_under_root=None if under is None else _pods(under, v["name"]),
        allocatable_memory=None if allocatable is None else Quantity.parse(allocatable).value(),
        qos_reserved_memory=reserved, memory_qos=gates.get("MemoryQoS", True),
        memory_reservation_policy=v.get("memory_reservation_policy"), pod_level_resources=plr)


def _unified_int(cfg, key):
    text = (cfg.unified or {}).get(key)
    return None if text is None else int(text)


@pytest.mark.parametrize("v", vectors("qos_cgroups.json"))
def test_qos_cgroups(v):
    cfg = _config(v)
    for cls, want in v["expect"].items():
        tier = getattr(cfg, CLASSES[cls])
        for key, value in want.items():
            if key == "cpu_shares":
                got = tier.cpu_shares
            elif key == "memory_min":
                got = _unified_int(tier, MEMORY_MIN)
            elif key == "memory_low":
                got = _unified_int(tier, MEMORY_LOW)
            elif key == "memory_max":
                got = tier.memory
            else:
                raise AssertionError(f"unknown key {key!r}")
            assert got == value, (cls, key, tier)
