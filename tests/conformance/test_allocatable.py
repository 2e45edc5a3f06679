"""allocatable.json: reservation, enforcement, validation, node status allocatable."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.allocatable import (
    node_allocatable_enforced, node_allocatable_reservation, node_status_allocatable, validate_node_allocatable,
)
from pynuma.policy.eviction.thresholds import parse_flags, parse_threshold_config
from pynuma.quantity import Quantity

from .vectors import vectors


def _q(m):
    return {k: Quantity.parse(v) for k, v in (m or {}).items()}


def _inputs(v):
    hard = parse_threshold_config([], parse_flags(v["eviction_hard"], "<") or {}, None, None, None)
    return _q(v["capacity"]), _q(v["kube_reserved"]), _q(v["system_reserved"]), hard


def _values(m):
    return {k: q.amount for k, q in m.items()}


@pytest.mark.parametrize("v", vectors("allocatable.json"))
def test_allocatable(v):
    cap, kube, system, hard = _inputs(v)
    k = v["kind"]
    if k == "reservation":
        assert _values(node_allocatable_reservation(cap, kube, system, hard)) == _values(_q(v["expect"]))
    elif k == "enforcement":
        assert _values(node_allocatable_enforced(cap, kube, system)) == _values(_q(v["expect"]))
    elif k == "node_status_allocatable":
        assert _values(node_status_allocatable(cap, kube, system, hard)) == _values(_q(v["expect"]))
    elif k == "validation":
        if v["expect"]["valid"]:
            validate_node_allocatable(cap, kube, system, hard)
        else:
            with pytest.raises(InputError, match="invalid Node Allocatable configuration"):
                validate_node_allocatable(cap, kube, system, hard)
    else:
        pytest.fail(f"unknown kind {k}")
