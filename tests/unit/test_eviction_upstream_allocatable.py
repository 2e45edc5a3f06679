"""Hugepages taken out of allocatable memory, as upstream does it even when memory is missing.

pkg/kubelet/cm/node_container_manager_linux.go ``getNodeAllocatableAbsoluteImpl``:
after capacity - system - kube (clamped at 0) per resource, for every hugepages
entry of that *result* ``allocatableMemory := result[memory]`` (a zero quantity
when absent) ``.Sub(pool)``, clamped at 0, stored back: a node with hugepages and
no memory gets ``memory: 0``.  pkg/kubelet/nodestatus/setters.go ``MachineInfo``
does the same on ``node.Status.Allocatable`` with the *capacity* of each pool.
Vectors go through tests/conformance/test_allocatable.py.
"""
from __future__ import annotations

import pytest

from pynuma.policy.allocatable import node_allocatable_enforced, node_status_allocatable
from pynuma.quantity import Quantity
from tests.conformance import test_allocatable as harness


def _vec(kind, capacity, expect, kube=None, system=None, eviction_hard=""):
    return {"kind": kind, "capacity": capacity, "kube_reserved": kube or {}, "system_reserved": system or {},
            "eviction_hard": eviction_hard, "expect": expect}


@pytest.mark.parametrize("kind", ["enforcement", "node_status_allocatable"])
def test_hugepages_without_memory_yield_memory_zero(kind):
    harness.test_allocatable(_vec(kind, {"cpu": "4", "hugepages-2Mi": "1Gi"},
                                  {"cpu": "4", "hugepages-2Mi": "1Gi", "memory": "0"}))


@pytest.mark.parametrize("kind", ["enforcement", "node_status_allocatable"])
def test_no_hugepages_no_memory_adds_nothing(kind):
    harness.test_allocatable(_vec(kind, {"cpu": "4"}, {"cpu": "4"}))


@pytest.mark.parametrize("kind", ["enforcement", "node_status_allocatable"])
def test_several_pools_and_memory(kind):
    harness.test_allocatable(_vec(kind, {"memory": "8Gi", "hugepages-2Mi": "1Gi", "hugepages-1Gi": "2Gi"},
                                  {"memory": "5Gi", "hugepages-2Mi": "1Gi", "hugepages-1Gi": "2Gi"}))


def test_enforcement_subtracts_pools_as_they_stand_after_reservations():
    # the enforced memory leaves out the allocatable hugepages (4Gi - 512Mi), not their capacity
    harness.test_allocatable(_vec("enforcement", {"memory": "4Gi", "hugepages-2Mi": "1Gi"},
                                  {"memory": "3584Mi", "hugepages-2Mi": "512Mi"},
                                  system={"hugepages-2Mi": "512Mi"}))


def test_memory_zero_takes_the_pool_format():
    caps = {"cpu": Quantity.parse("4"), "hugepages-2Mi": Quantity.parse("1Gi")}
    for got in (node_allocatable_enforced(caps, {}, {}), node_status_allocatable(caps, {}, {}, [])):
        assert got["memory"].amount == 0 and str(got["memory"]) == "0"
        assert got["memory"].format == caps["hugepages-2Mi"].format
