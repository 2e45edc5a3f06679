"""Node allocatable: reservation, enforced kubepods limits, status allocatable, validation, input parsing."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.errors import InputError
from pynuma.policy.allocatable import (
    hard_eviction_reservation, node_allocatable_enforced, node_allocatable_reservation, node_status_allocatable,
    parse_resource_list, reserved_cpus_override, validate_node_allocatable, validate_reserved,
)
from pynuma.policy.eviction.thresholds import parse_threshold_config
from pynuma.quantity import Quantity

GI = 1 << 30


def q(m):
    return {k: Quantity.parse(v) for k, v in m.items()}


def test_only_hard_memory_and_nodefs_reserve():
    ts = parse_threshold_config([], {"memory.available": "1Gi", "nodefs.available": "10%", "pid.available": "10%",
                                     "imagefs.available": "5Gi", "nodefs.inodesFree": "5%"},
                                {"memory.available": "3Gi"}, {"memory.available": "1m"}, None)
    got = hard_eviction_reservation(ts, q({"memory": "8Gi", "ephemeral-storage": "100Gi", "pid": "1000"}))
    assert {k: v.value() for k, v in got.items()} == {"memory": GI, "ephemeral-storage": 10737418400}


def test_hugepages_come_out_of_status_memory_and_kubepods_memory():
    cap = q({"cpu": "4", "memory": "16Gi", "hugepages-2Mi": "1Gi", "hugepages-1Gi": "2Gi", "pods": "110"})
    st_ = node_status_allocatable(cap, q({"memory": "1Gi"}), {}, [])
    assert st_["memory"].value() == 12 * GI and st_["hugepages-2Mi"].value() == GI and st_["pods"].value() == 110
    enf = node_allocatable_enforced(cap, q({"memory": "1Gi"}), {})
    assert enf["memory"].value() == 12 * GI and enf["cpu"].value() == 4


def test_clamped_at_zero_and_validation_message():
    cap = q({"cpu": "1", "memory": "1Gi"})
    kube = q({"memory": "2Gi"})
    assert node_status_allocatable(cap, kube, {}, [])["memory"].value() == 0
    with pytest.raises(InputError) as err:
        validate_node_allocatable(cap, kube, {}, [])
    assert str(err.value) == ('invalid Node Allocatable configuration. Resource "memory" has an allocatable of '
                              '-1Gi, capacity of 1Gi')
    validate_node_allocatable(cap, q({"memory": "1Gi"}), {}, [])  # equal is allowed


def test_reserved_names_and_lists():
    with pytest.raises(InputError, match='cannot reserve "nvidia.com/gpu" resource'):
        validate_reserved(q({"nvidia.com/gpu": "1"}))
    assert set(validate_reserved(q({"pid": "100", "ephemeral-storage": "1Gi"}))) == {"pid", "ephemeral-storage"}
    assert parse_resource_list(" cpu=1 , memory=2Gi", "--kube-reserved") == q({"cpu": "1", "memory": "2Gi"})
    with pytest.raises(InputError, match="--kube-reserved"):
        parse_resource_list("cpu", "--kube-reserved")
    with pytest.raises(InputError, match="memory"):
        parse_resource_list("memory=lots", "--kube-reserved")


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 1 << 40), st.integers(0, 1 << 40), st.integers(0, 1 << 40), st.integers(0, 1 << 38))
def test_status_plus_reservation_is_capacity_when_it_fits(cap, kube, system, hard):
    c, k, s = {"memory": Quantity(cap)}, {"memory": Quantity(kube)}, {"memory": Quantity(system)}
    ts = parse_threshold_config([], {"memory.available": str(hard)}, None, None, None) if hard else []
    res = node_allocatable_reservation(c, k, s, ts).get("memory", Quantity(0)).amount
    alloc = node_status_allocatable(c, k, s, ts)["memory"].amount
    assert alloc == max(cap - res, 0)
    assert node_allocatable_enforced(c, k, s)["memory"].amount == max(cap - kube - system, 0)


def test_reserved_cpus_replace_both_cpu_reservations():
    kube, system = reserved_cpus_override(q({"cpu": "500m", "memory": "1Gi"}), q({"cpu": "300m"}), 2)
    assert {k: str(v) for k, v in kube.items()} == {"memory": "1Gi"}
    assert {k: str(v) for k, v in system.items()} == {"cpu": "2"}
    # no reserved list: the reservations stay as written
    kube, system = reserved_cpus_override(q({"cpu": "500m"}), {}, 0)
    assert {k: str(v) for k, v in kube.items()} == {"cpu": "500m"} and system == {}
