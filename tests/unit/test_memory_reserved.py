"""--reserved-memory parsing, Node Allocatable validation and per-NUMA conversion."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.memorymanager.reserved import (MemoryReservation, parse_reserved_memory, system_reserved_memory,
                                           validate_reserved_memory)
from pynuma.quantity import Quantity


def test_parse_kubelet_syntax():
    rs = parse_reserved_memory("0:memory=1Gi;1:memory=2Gi,hugepages-2Mi=64Mi")
    assert [r.numa_node for r in rs] == [0, 1]
    assert rs[0].limits == {"memory": Quantity.parse("1Gi")}
    assert rs[1].limits["hugepages-2Mi"] == Quantity.parse("64Mi")


@pytest.mark.parametrize("text,needle", [
    ("memory=1Gi", "expected NUMA"), ("x:memory=1Gi", "integer"), ("0:cpu=1", "unknown memory type"),
    ("0:memory", "type=quantity"), ("0:memory=lots", "memory"), ("0:memory=-1Gi", "negative"),
    ("-1:memory=1Gi", "negative"),
])
def test_parse_errors_name_the_problem(text, needle):
    with pytest.raises(InputError, match=needle):
        parse_reserved_memory(text)


def test_totals_must_match_node_allocatable():
    rs = parse_reserved_memory("0:memory=1Gi;1:memory=1Gi")
    validate_reserved_memory([0, 1], {"memory": "2Gi", "cpu": "1"}, rs)  # cpu is not a memory type
    with pytest.raises(InputError, match='"2Gi" of type "memory" is not equal to the value "3Gi"'):
        validate_reserved_memory([0, 1], {"memory": "3Gi"}, rs)
    with pytest.raises(InputError, match='"0" of type "hugepages-1Gi"'):
        validate_reserved_memory([0, 1], {"memory": "2Gi", "hugepages-1Gi": "1Gi"}, rs)


def test_unknown_numa_node():
    with pytest.raises(InputError, match="NUMA node 3 that does not exist"):
        validate_reserved_memory([0, 1], {}, parse_reserved_memory("3:memory=1"))


def test_conversion_gives_every_node():
    got = system_reserved_memory([0, 1, 2], {"memory": "3Gi"}, parse_reserved_memory("0:memory=1Gi;2:memory=2Gi"))
    assert got == {0: {"memory": 1 << 30}, 1: {}, 2: {"memory": 2 << 30}}


def test_from_config_form():
    r = MemoryReservation.from_dict({"numaNode": 1, "limits": {"memory": "5"}})
    assert r.numa_node == 1 and r.limits["memory"].value() == 5
    with pytest.raises(InputError):
        MemoryReservation.from_dict({"numaNode": "one"})
