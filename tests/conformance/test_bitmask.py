"""bitmask.json: NUMA mask operations, with the kubelet's 64-bit rules where it has them."""
from __future__ import annotations

import pytest

from pynuma.policy.topologymanager.bitmask import KUBELET_BITS, NUMAMask, iterate_masks, mask_and, mask_or

from .vectors import vectors


def _kubelet_new(bits):
    # NewBitMask: the Add rule, so out-of-range bits leave it empty
    return _try(NUMAMask(), "add", bits)


def _try(mask, op, bits):
    try:
        return getattr(mask, op)(*bits, limit=KUBELET_BITS)
    except ValueError:
        return mask  # the kubelet refuses the whole operation and leaves the mask unchanged


def _run(op, a):
    if op == "string":
        return _kubelet_new(a["bits"]).kubelet_string()
    if op == "add_then_string":
        return _try(_kubelet_new(a["initial"]), "add", a["add"]).kubelet_string()
    if op == "remove_then_string":
        return _try(_kubelet_new(a["initial"]), "remove", a["remove"]).kubelet_string()
    if op in ("and_string", "or_string"):
        masks = [_kubelet_new(m) for m in a["masks"]]
        fn = mask_and if op == "and_string" else mask_or
        return fn(masks[0], *masks).kubelet_string()
    if op == "clear_then_string":
        _kubelet_new(a["bits"])
        return NUMAMask().kubelet_string()
    if op == "fill_then_string":
        _kubelet_new(a["bits"])
        return NUMAMask.kubelet_full().kubelet_string()
    m = _kubelet_new(a.get("bits", []))
    if op == "is_empty":
        return m.is_empty()
    if op == "is_set":
        return a["bit"] < KUBELET_BITS and m.is_set(a["bit"])
    if op == "any_set":
        return m.any_set(b for b in a["check"] if b < KUBELET_BITS)
    if op == "is_equal":
        return _kubelet_new(a["first"]).is_equal(_kubelet_new(a["second"]))
    if op == "count":
        return m.count()
    if op == "get_bits":
        return m.get_bits()
    if op == "is_narrower_than":
        return _kubelet_new(a["first"]).is_narrower_than(_kubelet_new(a["second"]))
    if op == "iterate_count":
        return sum(1 for _ in iterate_masks(a["bits"]))
    raise AssertionError(f"unknown op {op!r}")


@pytest.mark.parametrize("v", vectors("bitmask.json"))
def test_bitmask(v):
    assert _run(v["op"], v["args"]) == v["expect"]
