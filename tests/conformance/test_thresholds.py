"""thresholds.json: flag / config parsing, percentages, allocatable copies, containerfs derivation, defaults."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.eviction.thresholds import (
    DEFAULT_EVICTION_HARD, LEGACY_DEFAULT_EVICTION_HARD, Threshold, add_allocatable_thresholds, parse_flags,
    parse_percentage, parse_threshold_config, thresholds_from_config, update_containerfs_thresholds,
)
from pynuma.quantity import Quantity

from .vectors import check_error_text, vectors


def _norm(t: dict):
    v = t["value"]
    value = ("q", Quantity.parse(v["quantity"]).amount) if "quantity" in v else ("p", round(v["percentage"], 6))
    mr = t.get("min_reclaim")
    if mr is None:
        mrv = None
    elif "quantity" in mr:
        mrv = ("q", Quantity.parse(mr["quantity"]).amount)
    else:
        mrv = ("p", round(mr["percentage"], 6))
    return (t["signal"], t.get("operator", "LessThan"), value, float(t["grace_period_s"]), mrv)


def _same(got, expect, unordered=True):
    g = [_norm(t.to_dict()) for t in got]
    e = [_norm(t) for t in expect]
    if unordered:
        return sorted(g, key=repr) == sorted(e, key=repr)
    return g == e


def _from_flags(flags, enforce):
    def f(name, sep):
        text = flags.get(name, "")
        return parse_flags(text, sep) if text else {}
    return parse_threshold_config(enforce, f("eviction-hard", "<"), f("eviction-soft", "<"),
                                  f("eviction-soft-grace-period", "="), f("eviction-minimum-reclaim", "="))


@pytest.mark.parametrize("v", vectors("thresholds.json", select=lambda v: v["kind"] == "parse"))
def test_parse(v):
    expect = v["expect"]
    enforce = v.get("enforce_node_allocatable") or []
    # Either form may be absent from a vector; every form given must agree.
    forms = []
    if v.get("flags") is not None:
        forms.append(lambda: _from_flags(v["flags"], enforce))
    if v.get("config") is not None:
        forms.append(lambda: thresholds_from_config({**v["config"], "enforceNodeAllocatable": enforce}))
    assert forms, "a parse vector gives flags or config"
    for build in forms:
        if isinstance(expect, dict) and "error" in expect:
            with pytest.raises(InputError) as err:
                build()
            check_error_text(v, str(err.value))
        else:
            assert _same(build(), expect)


@pytest.mark.parametrize("v", vectors("thresholds.json", select=lambda v: v["kind"] == "parse_percentage"))
def test_parse_percentage(v):
    if "error" in v["expect"]:
        with pytest.raises(InputError):
            parse_percentage(v["input"])
    else:
        assert parse_percentage(v["input"]) == pytest.approx(v["expect"]["percentage"], abs=1e-6)


@pytest.mark.parametrize("v", vectors("thresholds.json", select=lambda v: v["kind"] == "add_allocatable_thresholds"))
def test_add_allocatable_thresholds(v):
    got = add_allocatable_thresholds([Threshold.from_dict(t) for t in v["input"]])
    assert _same(got, v["expect"])


@pytest.mark.parametrize("v", vectors("thresholds.json", select=lambda v: v["kind"] == "update_containerfs_thresholds"))
def test_update_containerfs_thresholds(v):
    inp = [Threshold.from_dict(t) for t in v["input"]]
    got, error = update_containerfs_thresholds(inp, v["dedicated_image_fs"], v["container_fs_separate_from_image_fs"])
    slots = {("containerfs.available", True): "hard_available", ("containerfs.available", False): "soft_available",
             ("containerfs.inodesFree", True): "hard_inodes", ("containerfs.inodesFree", False): "soft_inodes"}
    found = {name: None for name in slots.values()}
    for t in got:
        key = slots.get((t.signal, t.is_hard))
        if key is not None:
            assert found[key] is None, f"two {key} thresholds"
            found[key] = t
    for key, exp in v["expect_containerfs"].items():
        if exp is None:
            assert found[key] is None
        else:
            assert found[key] is not None and _same([found[key]], [exp]), key
    others_in = [t for t in inp if not t.signal.startswith("containerfs.")]
    assert [t for t in got if not t.signal.startswith("containerfs.")] == others_in
    assert (error is None) == (v["expect_error"] is None)


@pytest.mark.parametrize("v", vectors("thresholds.json", select=lambda v: v["kind"] == "defaults"))
def test_defaults(v):
    parsed = _from_flags(v["flags"], [])
    assert _same(parsed, v["expect"])
    # and pynuma ships that very set: the current default, or (for a vector pinned to an
    # older kubelet, see the note) the legacy one without imagefs.inodesFree
    shipped = [d for d in (DEFAULT_EVICTION_HARD, LEGACY_DEFAULT_EVICTION_HARD)
               if _same(parse_threshold_config([], None, None, None, None, defaults=d), v["expect"])]
    assert shipped, "the vector's defaults are neither the current nor the legacy built-in set"
    assert set(shipped[0]) == {t["signal"] for t in v["expect"]}


KINDS = {"parse", "parse_percentage", "add_allocatable_thresholds", "update_containerfs_thresholds", "defaults"}


@pytest.mark.parametrize("v", vectors("thresholds.json"))
def test_every_vector_has_a_handled_kind(v):
    assert v["kind"] in KINDS
