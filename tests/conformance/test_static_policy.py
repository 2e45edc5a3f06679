"""static_policy.json: static policy Start / Allocate / Remove on a given state."""
from __future__ import annotations

import pytest

from pynuma.cpuset import CPUSet
from pynuma.errors import PynumaError
from pynuma.policy.cpumanager.static_policy import CPUState, StaticPolicy

from ._cpu_common import cpus, topology
from ._cpu_pods import pod as make_pod
from .vectors import vectors


def _policy(v):
    reserved = cpus(v["reserved"]) if v.get("reserved") else None
    return StaticPolicy(topology(v["topology"]), num_reserved=v.get("num_reserved", 0), reserved=reserved,
                        options={k: b for k, b in (v.get("options") or {}).items() if isinstance(b, bool)})


def _state(v):
    assignments = {p: {c: cpus(s) for c, s in cs.items()} for p, cs in (v.get("assignments") or {}).items()}
    return CPUState(cpus(v.get("default_cpuset") or ""), assignments)


def _expect_error(v, fn):
    with pytest.raises(PynumaError) as err:
        fn()
    assert v["expect"]["error"] in str(err.value)
    kind = v["expect"].get("error_kind")
    if kind:
        assert type(err.value).__name__ == kind
    return err.value


def _remove_target(v, pod_uid):
    rm = v["remove"]
    if isinstance(rm, str):
        return pod_uid, rm
    return rm.get("pod", pod_uid), rm["container"]


@pytest.mark.parametrize("v", vectors("static_policy.json"))
def test_static_policy(v):
    expect = v["expect"]
    if expect.get("phase") == "new_policy":
        _expect_error(v, lambda: _policy(v))
        return
    policy = _policy(v)
    state = _state(v)
    op = v["op"]
    if op == "start":
        if "error" in expect:
            _expect_error(v, lambda: policy.start(state))
        else:
            policy.start(state)
            assert state.default == cpus(expect["default_cpuset"])
        return
    if op == "remove":
        pod_uid, name = v["remove"]["pod"], v["remove"]["container"]
        policy.remove(state, pod_uid, name)
        assert state.default == cpus(expect["default_cpuset"])
        assert state.get(pod_uid, name) is None
        return
    pod = make_pod(v["pod"])
    if op == "allocate":
        first = pod.container(v["pod"]["containers"][0]["name"])  # the first container as listed
        before = state.copy()
        if "error" in expect:
            _expect_error(v, lambda: policy.allocate(state, pod, first, v.get("hint") and v["hint"]["numa"]))
            assert state.get(pod.uid, first.name) is None
            assert state.default == before.default
            return
        hint = v.get("hint")
        got = policy.allocate(state, pod, first, None if hint is None else hint["numa"])
        if expect["allocated"]:
            want = cpus(expect["cpuset"])
            assert got == want and state.get(pod.uid, first.name) == want
            assert state.default == before.default - want
        else:
            assert got is None and state.get(pod.uid, first.name) is None
            assert state.default == before.default
        return
    assert op in ("allocate_pod", "allocate_pod_then_remove"), f"unknown op {op}"
    for c in pod.init_containers + pod.containers:
        policy.allocate(state, pod, c)
    if "default_cpuset_after_allocate" in expect:
        assert state.default == cpus(expect["default_cpuset_after_allocate"])
    if op == "allocate_pod_then_remove":
        pod_uid, name = _remove_target(v, pod.uid)
        policy.remove(state, pod_uid, name)
        for key in ("default_cpuset_after_remove", "default_cpuset"):
            if key in expect:
                assert state.default == cpus(expect[key])
    assert isinstance(state.default, CPUSet)
