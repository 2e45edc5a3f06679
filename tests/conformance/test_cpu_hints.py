"""cpu_hints.json: CPU Manager topology hints (container and pod scope) through the static policy."""
from __future__ import annotations

import pytest

from pynuma.policy.cpumanager.static_policy import CPUState, StaticPolicy
from pynuma.pod import Pod

from ._cpu_common import cpus, topology
from ._cpu_pods import container
from .vectors import vectors

POD = "pod"
NAME = "c0"


def _key(h):
    return (tuple(h["numa"]) if h["numa"] is not None else None, h["preferred"])


@pytest.mark.parametrize("v", vectors("cpu_hints.json"))
def test_cpu_hints(v):
    topo = topology(v["topology"])
    policy = StaticPolicy(topo, options={k: b for k, b in (v.get("options") or {}).items() if isinstance(b, bool)})
    state = CPUState(cpus(v.get("available") or ""))
    if v.get("allocated") is not None:
        state.set(POD, NAME, cpus(v["allocated"]))
    reusable = cpus(v.get("reusable") or "")
    if reusable:
        policy.cpus_to_reuse[POD] = reusable
    req = str(v["count"])
    c = container({"name": NAME, "request": req, "limit": req})
    pod = Pod(name=POD, uid=POD, containers=(c,))
    if v["scope"] == "pod":
        got = policy.pod_hints(state, pod)
    else:
        got = policy.container_hints(state, pod, c)
    # README: an expected [] also covers "no hints at all" (None).
    hints = [] if got is None else got["cpu"]
    assert got is None or set(got) == {"cpu"}
    assert sorted(_key(h.to_json()) for h in hints) == sorted(_key(h) for h in v["expect"])
