"""Every vector of kubelet/qos.json: the pod QoS class."""
from __future__ import annotations

import pytest

from pynuma.pod import Pod
from pynuma.policy.qos import qos_class
from tests.conformance.vectors import vectors


def _pod(v) -> Pod:
    raw = {"name": v.get("name", "pod"), "containers": v["containers"],
           "initContainers": v.get("init_containers") or []}
    spec = {"containers": raw["containers"], "initContainers": raw["initContainers"]}
    if v.get("pod_resources") is not None:
        spec["resources"] = v["pod_resources"]
    status = {"qosClass": v["status_qos_class"]} if v.get("status_qos_class") else {}
    return Pod.from_dict({"metadata": {"name": raw["name"]}, "spec": spec, "status": status})


@pytest.mark.parametrize("v", vectors("qos.json"))
def test_qos_class(v):
    gates = v.get("feature_gates") or {}
    got = qos_class(_pod(v), pod_level_resources=bool(gates.get("PodLevelResources", True)))
    assert got == v["expect"]
