"""Memory state values: JSON forms and the kubelet's comparison rules."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.memorymanager.state import (Block, MemoryState, MemoryTable, NUMANodeState, assignments_equal,
                                        assignments_from_dict, assignments_to_dict, machine_state_differences,
                                        machine_state_from_dict, machine_state_to_dict, to_bytes)


def _node(free0, reserved0, cells):
    return NUMANodeState(1, {"memory": MemoryTable(10, 0, 10, reserved0, free0)}, cells)


def test_round_trip_quantities_and_bytes():
    raw = {"0": {"numberOfAssignments": 1, "memoryMap": {"memory": {"total": "2Gi", "systemReserved": "512Mi",
                                                                    "allocatable": "1536Mi", "reserved": "1Gi",
                                                                    "free": "512Mi"}}, "cells": [0]}}
    ms = machine_state_from_dict(raw)
    assert ms[0].memory_map["memory"].free == 512 << 20
    assert machine_state_to_dict(ms, quantities=True) == raw
    assert machine_state_to_dict(ms)["0"]["memoryMap"]["memory"]["total"] == 2 << 30


def test_assignments_round_trip_keeps_nil_apart_from_empty():
    a = assignments_from_dict({"pod": {"c": [{"numaAffinity": None, "type": "memory", "size": 5}]}})
    assert a["pod"]["c"][0].numa_affinity is None
    assert assignments_to_dict(a) == {"pod": {"c": [{"numaAffinity": None, "type": "memory", "size": 5}]}}


def test_group_members_may_split_free_and_reserved_differently():
    # a multi-NUMA block may be charged 3+1 or 2+2: the kubelet compares sums over the group
    a = {0: _node(7, 3, [0, 1]), 1: _node(9, 1, [0, 1])}
    b = {0: _node(8, 2, [0, 1]), 1: _node(8, 2, [0, 1])}
    assert machine_state_differences(a, b) == []
    c = {0: _node(8, 2, [0]), 1: _node(8, 2, [1])}
    assert machine_state_differences(a, c)


def test_blocks_compare_in_any_order():
    x = {"p": {"c": [Block((0,), "memory", 1), Block((0,), "hugepages-1Gi", 2)]}}
    y = {"p": {"c": [Block((0,), "hugepages-1Gi", 2), Block((0,), "memory", 1)]}}
    assert assignments_equal(x, y)
    assert not assignments_equal(x, {"p": {"c": [Block((1,), "memory", 1), Block((0,), "hugepages-1Gi", 2)]}})


@pytest.mark.parametrize("bad", [True, 1.5, "1.5", "lots", None])
def test_sizes_must_be_whole_bytes(bad):
    with pytest.raises(InputError):
        to_bytes(bad)


def test_bad_shapes_are_input_errors():
    with pytest.raises(InputError):
        machine_state_from_dict({"zero": {}})
    with pytest.raises(InputError):
        assignments_from_dict({"p": {"c": "block"}})


def test_delete_drops_empty_pods():
    s = MemoryState({}, {"p": {"c": [Block((0,), "memory", 1)]}})
    s.delete("p", "c")
    assert s.assignments == {}
