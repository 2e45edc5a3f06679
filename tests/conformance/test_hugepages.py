"""Every vector of kubelet/hugepages.json against pynuma.hugepages.resources."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.hugepages import resources as hp
from pynuma.quantity import Quantity
from tests.conformance.vectors import vectors


def _kind(kind):
    return vectors("hugepages.json", select=lambda v: v.get("kind") == kind)


@pytest.mark.parametrize("v", _kind("is_hugepage_resource_name"))
def test_is_hugepage_resource_name(v):
    assert hp.is_hugepage_resource_name(v["input"]) is v["expect"]


@pytest.mark.parametrize("v", _kind("hugepage_resource_name"))
def test_hugepage_resource_name(v):
    assert hp.hugepage_resource_name(v["page_size"]) == v["expect"]


@pytest.mark.parametrize("v", _kind("hugepage_size_from_resource_name"))
def test_hugepage_size_from_resource_name(v):
    expect = v["expect"]
    if "error" in expect:
        with pytest.raises(InputError):
            hp.page_size_from_resource_name(v["input"])
        return
    size = hp.page_size_from_resource_name(v["input"])
    assert size == Quantity.parse(expect["page_size"])
    if "bytes" in expect:
        assert size.value() == expect["bytes"]


@pytest.mark.parametrize("v", _kind("hugepage_value_divisible"))
def test_hugepage_value_divisible(v):
    assert hp.is_value_divisible(v["resource"], v["quantity"]) is v["expect"]


@pytest.mark.parametrize("v", _kind("overcommit_allowed"))
def test_overcommit_allowed(v):
    assert hp.is_overcommit_allowed(v["resource"]) is v["expect"]


def _norm_field(field: str) -> str:
    # Vectors may name the field from the pod (spec.containers[0].resources.limits) or from
    # the resources object; compare the part below "resources".
    field = field or ""
    if "resources" in field:
        field = field.rsplit("resources", 1)[1]
    return field.lstrip(".")


def _gist(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


@pytest.mark.parametrize("v", _kind("container_resources_validation"))
def test_container_resources_validation(v):
    errors = hp.validate_container_resources(v.get("requests") or {}, v.get("limits") or {})
    expect = v["expect"]
    assert (not errors) is expect["valid"], [str(e) for e in errors]
    if expect["valid"]:
        return
    def matches(err):
        if "field" in expect and _norm_field(expect["field"]) != _norm_field(err.field):
            return False
        if "detail" in expect:
            want, got = _gist(expect["detail"]), _gist(err.detail)
            # wording varies by release ("... limit" vs "... limit of 4Mi"): one is a prefix of the other
            return got.startswith(want) or want.startswith(got)
        return True
    assert any(matches(e) for e in errors), [str(e) for e in errors]


@pytest.mark.parametrize("v", _kind("capacity_from_machine_info"))
def test_capacity_from_machine_info(v):
    mi = v["machine_info"]
    cap = hp.capacity_from_machine_info(
        mi["num_cores"], mi["memory_capacity"],
        [(p["page_size_kb"], p["num_pages"]) for p in mi.get("hugepages") or []])
    assert set(cap) == set(v["expect"])
    for name, q in v["expect"].items():
        assert cap[name] == Quantity.parse(q), name


def test_every_kind_is_covered():
    from tests.conformance.vectors import load_json
    data = load_json("hugepages.json")
    if data is None:
        pytest.skip("conformance data not found")
    known = {"is_hugepage_resource_name", "hugepage_resource_name", "hugepage_size_from_resource_name",
             "hugepage_value_divisible", "overcommit_allowed", "container_resources_validation",
             "capacity_from_machine_info"}
    assert {v["kind"] for v in data} <= known
