"""hugepages-<size> names, divisibility, overcommit and container validation."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.errors import InputError
from pynuma.hugepages import resources as hp


def test_names_round_trip_canonical():
    assert hp.hugepage_resource_name(2097152) == "hugepages-2Mi"
    assert hp.hugepage_resource_name("2048Ki") == "hugepages-2Mi"
    assert hp.resource_name_for_kb(1048576) == "hugepages-1Gi"
    assert hp.resource_name_for_kb(64) == "hugepages-64Ki"
    with pytest.raises(InputError):
        hp.page_size_from_resource_name("hugepages-")
    with pytest.raises(InputError):
        hp.page_size_from_resource_name("memory")


@settings(max_examples=200)
@given(st.integers(1, 1 << 20), st.integers(0, 64))
def test_divisible_iff_whole_pages(size_kb, pages):
    name = hp.resource_name_for_kb(size_kb)
    assert hp.is_value_divisible(name, size_kb * 1024 * pages)
    assert not hp.is_value_divisible(name, size_kb * 1024 * pages + 512)


@pytest.mark.parametrize("name,allowed", [("cpu", True), ("memory", True), ("ephemeral-storage", True),
                                          ("hugepages-1Gi", False), ("example.com/gpu", False),
                                          ("kubernetes.io/x", True)])
def test_overcommit(name, allowed):
    assert hp.is_overcommit_allowed(name) is allowed


def _details(requests, limits):
    return [(e.field, e.detail) for e in hp.validate_container_resources(requests, limits)]


def test_validation_rules():
    assert _details({"memory": "1Gi", "hugepages-2Mi": "4Mi"}, {"memory": "1Gi", "hugepages-2Mi": "4Mi"}) == []
    assert _details({}, {"cpu": "1", "hugepages-2Mi": "4Mi"}) == []  # limits alone: defaulting copies them
    assert ("requests", "must be equal to hugepages-2Mi limit of 8Mi") in _details(
        {"memory": "1", "hugepages-2Mi": "4Mi"}, {"memory": "1", "hugepages-2Mi": "8Mi"})
    assert ("limits", "Limit must be set for non overcommitable resources") in _details(
        {"memory": "1", "hugepages-2Mi": "4Mi"}, {})
    assert ("limits[hugepages-2Mi]", "3Mi is not positive integer multiple of hugepages-2Mi") in _details(
        {"memory": "1"}, {"memory": "1", "hugepages-2Mi": "3Mi"})
    assert ("", "HugePages require cpu or memory") in _details({}, {"hugepages-1Gi": "1Gi"})
    assert _details({"memory": "2Gi"}, {"memory": "1Gi"}) == [("requests", "must be less than or equal to memory limit of 1Gi")]


def test_capacity_every_size_even_empty():
    cap = hp.capacity_from_machine_info(4, 8 << 30, [(2048, 0), (1048576, 2)])
    assert {k: str(v) for k, v in cap.items()} == {"cpu": "4", "memory": "8Gi", "hugepages-2Mi": "0",
                                                   "hugepages-1Gi": "2Gi"}


def test_names_and_values_are_checked_too():
    assert ("limits[disk]", "must be a standard resource for containers") in _details({}, {"disk": "1", "memory": "1"})
    assert ("requests[example.com/gpu]", "must be an integer") in _details({"example.com/gpu": "500m"},
                                                                          {"example.com/gpu": "500m"})
    assert ("limits[memory]", "must be greater than or equal to 0") in _details({}, {"memory": "-1"})


def test_errors_about_one_entry_show_its_full_path_and_keep_the_api_servers_field():
    from pynuma.hugepages.resources import validate_container_resources

    (err,) = validate_container_resources({"memory": "1Gi", "hugepages-2Mi": "2Mi"},
                                           {"memory": "1Gi", "hugepages-2Mi": "4Mi"})
    assert err.field == "requests"  # what the API server's field.Invalid(reqPath, ...) carries
    assert err.path == "resources.requests[hugepages-2Mi]"
    assert str(err) == ('resources.requests[hugepages-2Mi]: Invalid value: "2Mi": '
                        "must be equal to hugepages-2Mi limit of 4Mi")
    (err,) = validate_container_resources({"cpu": "1", "example.com/gpu": "1"}, {"cpu": "1"})
    assert (err.field, err.path) == ("limits", "resources.limits[example.com/gpu]")
    assert str(err).startswith("resources.limits[example.com/gpu]: Required value: ")
