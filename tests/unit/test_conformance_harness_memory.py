"""Hand-made memory_manager-shaped vectors for kinds/shapes no public vector exercises.

They run through the harness functions of tests/conformance/test_memory_manager.py
(kind ``new``; ``topology_hints`` in pod scope, i.e. no ``container``, and with
``expect: null``; error texts marked informative by a note).  Expected values
follow pkg/kubelet/cm/memorymanager/policy_static.go.
"""
from __future__ import annotations

import copy

import pytest

from tests.conformance import test_memory_manager as harness


def _node(total="10Gi", reserved="1Gi", cells=None, n=0):
    free = {"10Gi": "9Gi"}.get(total, total)
    return {"numberOfAssignments": 0, "cells": cells or [n],
            "memoryMap": {"memory": {"total": total, "systemReserved": reserved, "allocatable": free,
                                     "reserved": "0", "free": free}}}


def _container(name, memory, cpu="1"):
    res = {"cpu": cpu, "memory": memory}
    return {"name": name, "requests": dict(res), "limits": dict(res)}


MACHINE = [{"id": 0, "memory": "10Gi", "hugepages": []}, {"id": 1, "memory": "10Gi", "hugepages": []}]


def test_new_policy_needs_system_reserved_memory():
    v = {"name": "no reserved", "kind": "new", "machine_info": MACHINE, "system_reserved": {},
         "expect": {"error": "[memorymanager] you should specify the system reserved memory"}}
    harness.test_new_and_start(v)
    ok = {"name": "reserved", "kind": "new", "machine_info": MACHINE,
          "system_reserved": {"0": {"memory": "1Gi"}}, "expect": {"ok": True}}
    harness.test_new_and_start(ok)


def test_new_policy_error_text_is_checked_unless_the_note_says_otherwise():
    v = {"name": "no reserved", "kind": "new", "machine_info": MACHINE, "system_reserved": {},
         "expect": {"error": "some other wording"}}
    with pytest.raises(AssertionError):
        harness.test_new_and_start(copy.deepcopy(v))
    v["note"] = "the test only asserts that an error is returned"
    harness.test_new_and_start(v)


def _hints_vector(pod, container=None, expect=None):
    v = {"name": "hand-made hints", "kind": "topology_hints", "system_reserved": {"0": {"memory": "1Gi"},
                                                                                   "1": {"memory": "1Gi"}},
         "machine_info": MACHINE, "state": {"0": _node(n=0), "1": _node(n=1)}, "assignments": {},
         "pod": pod, "expect": expect}
    if container:
        v["container"] = container
    return v


def test_pod_scope_hints_sum_the_containers():
    pod = {"uid": "pod1", "containers": [_container("c1", "3Gi"), _container("c2", "4Gi")], "init_containers": []}
    # 7Gi fits in one node (9Gi free each): single nodes preferred, the pair not.
    expect = {"memory": [{"numa": [0], "preferred": True}, {"numa": [1], "preferred": True},
                         {"numa": [0, 1], "preferred": False}]}
    harness.test_topology_hints(_hints_vector(pod, expect=expect))


def test_pod_scope_hints_need_both_nodes_when_too_big_for_one():
    pod = {"uid": "pod1", "containers": [_container("c1", "6Gi"), _container("c2", "6Gi")], "init_containers": []}
    expect = {"memory": [{"numa": [0, 1], "preferred": True}]}
    harness.test_topology_hints(_hints_vector(pod, expect=expect))


def test_container_scope_hints_of_one_container():
    pod = {"uid": "pod1", "containers": [_container("c1", "3Gi"), _container("c2", "8Gi")], "init_containers": []}
    expect = {"memory": [{"numa": [0], "preferred": True}, {"numa": [1], "preferred": True},
                         {"numa": [0, 1], "preferred": False}]}
    harness.test_topology_hints(_hints_vector(pod, "c2", expect))


@pytest.mark.parametrize("container", [None, "c1"])
def test_no_hints_for_a_pod_that_is_not_guaranteed(container):
    burstable = {"name": "c1", "requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}
    pod = {"uid": "pod1", "containers": [burstable], "init_containers": []}
    harness.test_topology_hints(_hints_vector(pod, container, None))


def test_system_reserved_memory_ok_expectation():
    v = {"name": "ok only", "kind": "system_reserved_memory", "numa_nodes": [0, 1],
         "node_allocatable_reservation": {"memory": "1Gi"},
         "reserved_memory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}], "expect": {"ok": True}}
    harness.test_system_reserved_memory(v)
    v["expect"] = {"system_reserved": {"0": {"memory": "1Gi"}}}
    harness.test_system_reserved_memory(v)
    v["expect"] = {"system_reserved": {"1": {"memory": "1Gi"}}}
    with pytest.raises(AssertionError):
        harness.test_system_reserved_memory(v)


@pytest.mark.parametrize("text", ["", " \n"])
def test_blank_checkpoint_means_no_file(text):
    v = {"name": "no file", "kind": "checkpoint", "policy": "static", "checkpoint": text,
         "expect": {"ok": True, "state": {}, "assignments": {}}}
    harness.test_checkpoint(v)
    v["expect"]["assignments"] = {"pod": {"c": [{"numaAffinity": [0], "type": "memory", "size": "1Gi"}]}}
    with pytest.raises(AssertionError):
        harness.test_checkpoint(v)


def test_checkpoint_of_another_policy_is_rejected():
    text = ('{"policyName":"none","machineState":{},"entries":{},"checksum":0}')
    v = {"name": "policy", "kind": "checkpoint", "policy": "static", "checkpoint": text,
         "expect": {"error": "differs from state checkpoint policy"}}
    harness.test_checkpoint(v)
