"""Every vector of kubelet/memory_manager.json against pynuma's Memory Manager static policy."""
from __future__ import annotations

import re

import pytest

from pynuma.errors import PynumaError
from pynuma.pod import Pod
from pynuma.policy.memorymanager import reserved as mr
from pynuma.policy.memorymanager.state import (MemoryState, assignments_equal, assignments_from_dict,
                                        machine_state_differences, machine_state_from_dict, to_bytes)
from pynuma.policy.memorymanager.static_policy import (Hint, NodeInfo, StaticPolicy, pod_requested_resources)
from pynuma.quantity import Quantity
from tests.conformance.vectors import check_error_text, load_json, vectors

KINDS = {"new", "start", "allocate", "remove", "topology_hints", "pod_requested_resources",
         "validate_reserved_memory", "system_reserved_memory", "checkpoint"}


def _kind(*kinds):
    return vectors("memory_manager.json", select=lambda v: v.get("kind") in kinds)


def _machine(v):
    return [NodeInfo(int(n["id"]), to_bytes(n["memory"]),
                     tuple((int(h["page_size_kb"]), int(h["num_pages"])) for h in n.get("hugepages") or []))
            for n in v.get("machine_info") or []]


def _reserved(v):
    return {int(n): {r: to_bytes(q) for r, q in res.items()} for n, res in (v.get("system_reserved") or {}).items()}


def _state(v):
    return MemoryState(machine_state_from_dict(v.get("state")) or {}, assignments_from_dict(v.get("assignments")) or {})


def _mask(key):
    # Reusable-memory keys are the kubelet's bitmask strings ("01", "11") or lists of ids.
    if isinstance(key, (list, tuple)):
        return tuple(sorted(int(i) for i in key))
    text = str(key).strip()
    if len(text) >= 2 and set(text) <= {"0", "1"}:
        value = int(text, 2)
        return tuple(i for i in range(value.bit_length()) if value >> i & 1)
    return tuple(sorted(int(i) for i in re.findall(r"\d+", text)))


def _policy(v):
    policy = StaticPolicy(_machine(v), _reserved(v))
    for uid, masks in (v.get("init_containers_reusable_memory") or {}).items():
        policy.reusable[uid] = {_mask(k): {r: to_bytes(q) for r, q in res.items()} for k, res in (masks or {}).items()}
    return policy


def _assert_state(got: MemoryState, expect):
    want_ms = machine_state_from_dict(expect.get("state")) or {}
    diffs = machine_state_differences(got.machine_state, want_ms)
    assert not diffs, diffs
    want_a = assignments_from_dict(expect.get("assignments")) or {}
    assert assignments_equal(got.assignments, want_a), (got.assignments, want_a)


def _expect_error(v, fn):
    with pytest.raises(PynumaError) as info:
        fn()
    check_error_text(v, str(info.value))


@pytest.mark.parametrize("v", _kind("new", "start"))
def test_new_and_start(v):
    # "new" builds the policy from --reserved-memory; "start" also validates/initialises the state.
    if v["kind"] == "new":
        if "error" in v["expect"]:
            _expect_error(v, lambda: StaticPolicy(_machine(v), _reserved(v)))
        else:
            assert StaticPolicy(_machine(v), _reserved(v)).name == "Static"
        return
    policy = _policy(v)
    if "error" in v["expect"]:
        _expect_error(v, lambda: policy.start(_state(v)))
        return
    _assert_state(policy.start(_state(v)), v["expect"])


def _hint(raw):
    if raw is None:
        return None
    numa = raw.get("numa")
    return Hint(None if numa is None else tuple(sorted(numa)), bool(raw.get("preferred")))


def _containers_to_allocate(v, pod):
    if v.get("allocate_containers", "first") == "first":
        return [pod.containers[0]]
    return list(pod.init_containers) + list(pod.containers)


@pytest.mark.parametrize("v", _kind("allocate"))
def test_allocate(v):
    policy, state, pod = _policy(v), _state(v), Pod.from_dict(v["pod"])
    hint = _hint(v.get("topology_hint"))

    def run():
        s = state
        for c in _containers_to_allocate(v, pod):
            s = policy.allocate(s, pod, c, hint)
        return s

    if "error" in v["expect"]:
        _expect_error(v, run)
        return
    _assert_state(run(), v["expect"])


@pytest.mark.parametrize("v", _kind("remove"))
def test_remove(v):
    policy, state = _policy(v), _state(v)
    got = policy.remove_container(state, v["remove"]["pod"], v["remove"]["container"])
    _assert_state(got, v["expect"])


def _hint_set(hints):
    return {(h.numa, h.preferred) for h in hints}


@pytest.mark.parametrize("v", _kind("topology_hints"))
def test_topology_hints(v):
    policy, state, pod = _policy(v), _state(v), Pod.from_dict(v["pod"])
    if v.get("container"):
        got = policy.topology_hints(state, pod, pod.container(v["container"]))
    else:
        got = policy.pod_topology_hints(state, pod)
    expect = v["expect"]
    if expect is None:
        assert got is None
        return
    assert got is not None
    assert set(got) == set(expect)
    for res, hints in expect.items():
        assert _hint_set(got[res]) == {(None if h["numa"] is None else tuple(sorted(h["numa"])), h["preferred"])
                                       for h in hints}, res


@pytest.mark.parametrize("v", _kind("pod_requested_resources"))
def test_pod_requested_resources(v):
    got = pod_requested_resources(Pod.from_dict(v["pod"]))
    assert got == {r: Quantity.parse(q).value() for r, q in v["expect"].items()}


def _reservations(v):
    return [mr.MemoryReservation.from_dict(r) for r in v.get("reserved_memory") or []]


@pytest.mark.parametrize("v", _kind("validate_reserved_memory"))
def test_validate_reserved_memory(v):
    call = lambda: mr.validate_reserved_memory(v["numa_nodes"], v.get("node_allocatable_reservation") or {},  # noqa: E731
                                               _reservations(v))
    if "error" in v["expect"]:
        _expect_error(v, call)
    else:
        call()


def _non_empty(reserved):
    return {int(n): {r: int(q) for r, q in res.items()} for n, res in reserved.items() if res}


@pytest.mark.parametrize("v", _kind("system_reserved_memory"))
def test_system_reserved_memory(v):
    call = lambda: mr.system_reserved_memory(v["numa_nodes"], v.get("node_allocatable_reservation"),  # noqa: E731
                                             _reservations(v))
    if "error" in v["expect"]:
        _expect_error(v, call)
        return
    got = call()
    if "system_reserved" not in v["expect"]:  # README: {"ok": true} is also a valid expectation
        return
    want = {int(n): {r: to_bytes(q) for r, q in res.items()} for n, res in v["expect"]["system_reserved"].items()}
    assert _non_empty(got) == _non_empty(want)


@pytest.mark.parametrize("v", _kind("checkpoint"))
def test_checkpoint(v):
    from pynuma.state import memory_checkpoint as mc

    if "checksum_preimage" in v:
        assert mc.checksum_preimage(mc.parse_checkpoint(v["checkpoint"], verify=False)) == v["checksum_preimage"]
    if "error" in v["expect"]:
        with pytest.raises(PynumaError) as info:
            mc.parse_checkpoint(v["checkpoint"], policy=v.get("policy"))
        check_error_text(v, str(info.value), substring=True)
        return
    text = v.get("checkpoint")
    if text is None or not str(text).strip():
        # As upstream's restore test: blank content means no file was written; the state starts empty.
        state = MemoryState({}, {})
    else:
        state = mc.parse_checkpoint(text, policy=v.get("policy")).state
    if "state" in v["expect"] or "assignments" in v["expect"]:
        _assert_state(state, v["expect"])


def test_every_kind_is_covered():
    data = load_json("memory_manager.json")
    if data is None:
        pytest.skip("conformance data not found")
    assert {v["kind"] for v in data} <= KINDS
