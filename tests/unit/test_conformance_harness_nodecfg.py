"""Hand-made thresholds / allocatable / hugepages vectors through the conformance harness.

Shapes the public files do not exercise: a ``parse`` vector with only the
``config`` form (or only ``flags``), a note marking the error text
informative, 0%/100% thresholds (ignored), float32 percentages in the
reservation, extended resources in capacity, hugepage validation variants.
Expected values follow pkg/kubelet/eviction/helpers.go,
pkg/kubelet/cm/node_container_manager_linux.go and pkg/apis/core/validation.
"""
from __future__ import annotations

import struct

import pytest

from tests.conformance import test_allocatable, test_hugepages, test_thresholds


def _f32(p: float) -> float:
    return struct.unpack("f", struct.pack("f", p))[0]


def _t(signal, value, grace=0, min_reclaim=None):
    return {"signal": signal, "operator": "LessThan", "value": value, "grace_period_s": grace,
            "min_reclaim": min_reclaim}


def test_parse_with_config_form_only():
    v = {"name": "config only", "kind": "parse", "enforce_node_allocatable": ["pods"],
         "config": {"evictionHard": {"memory.available": "0%", "nodefs.available": "10%"},
                    "evictionSoft": {"memory.available": "300Mi"},
                    "evictionSoftGracePeriod": {"memory.available": "1m30s"},
                    "evictionMinimumReclaim": {"memory.available": "100Mi"}},
         # 0% disables memory.available hard; soft thresholds are not copied to allocatableMemory
         "expect": [_t("nodefs.available", {"percentage": _f32(0.1)}),
                    _t("memory.available", {"quantity": "300Mi"}, 90, {"quantity": "100Mi"})]}
    test_thresholds.test_parse(v)


def test_parse_with_flags_form_only_and_allocatable_copy():
    v = {"name": "flags only", "kind": "parse", "enforce_node_allocatable": ["pods"],
         "flags": {"eviction-hard": "nodefs.available<100%,memory.available<150Mi", "eviction-soft": "",
                   "eviction-soft-grace-period": "", "eviction-minimum-reclaim": "memory.available=5%"},
         "expect": [_t("memory.available", {"quantity": "150Mi"}, 0, {"percentage": _f32(0.05)}),  # 100% = off
                    _t("allocatableMemory.available", {"quantity": "150Mi"}, 0, {"percentage": _f32(0.05)})]}
    test_thresholds.test_parse(v)


def test_parse_error_text_informative_only_when_the_note_says_so():
    v = {"name": "neg grace", "kind": "parse", "enforce_node_allocatable": [],
         "flags": {"eviction-soft": "memory.available<150Mi", "eviction-soft-grace-period": "memory.available=-30s"},
         "expect": {"error": "not the real wording"}}
    with pytest.raises(AssertionError):
        test_thresholds.test_parse(dict(v))
    test_thresholds.test_parse(dict(v, note="the test only asserts that an error is returned"))
    test_thresholds.test_parse(dict(v, expect={"error": True}))


def _alloc(kind, cap, expect, kube=None, system=None, hard=""):
    return {"name": "hand-made", "kind": kind, "capacity": cap, "kube_reserved": kube or {},
            "system_reserved": system or {}, "eviction_hard": hard, "expect": expect}


def test_reservation_float32_percentage_and_extended_resources():
    cap = {"cpu": "4", "memory": "10Gi", "pid": "1000"}
    mem = int(10 * 2**30 * _f32(0.1))  # 1073741840, not 1Gi
    v = _alloc("reservation", cap, {"cpu": "100m", "memory": str(mem), "pid": "100"},
               kube={"pid": "100", "ephemeral-storage": "1Gi"}, system={"cpu": "100m"},
               # ephemeral-storage absent from capacity: neither reserved nor reported
               hard="memory.available<10%,nodefs.available<1Gi,allocatableMemory.available<1Gi")
    test_allocatable.test_allocatable(v)


def test_validation_counts_the_hard_eviction_reservation():
    base = dict(kube={"memory": "512Mi"}, system={"memory": "256Mi"})
    test_allocatable.test_allocatable(_alloc("validation", {"cpu": "1", "memory": "1Gi"}, {"valid": False},
                                             hard="memory.available<300Mi", **base))
    test_allocatable.test_allocatable(_alloc("validation", {"cpu": "1", "memory": "1Gi"}, {"valid": True},
                                             hard="memory.available<256Mi", **base))


def test_node_status_allocatable_subtracts_hugepages_from_memory():
    cap = {"cpu": "2", "memory": "10Gi", "hugepages-2Mi": "1Gi", "pods": "110"}
    want = {"cpu": "2", "memory": str(8 * 2**30 - 100 * 2**20), "hugepages-2Mi": "1Gi", "pods": "110"}
    test_allocatable.test_allocatable(_alloc("node_status_allocatable", cap, want, kube={"memory": "1Gi"},
                                             hard="memory.available<100Mi"))


@pytest.mark.parametrize("requests,limits,expect", [
    ({"hugepages-2Mi": "2Mi", "cpu": "1"}, {"cpu": "1"},
     {"valid": False, "field": "limits", "detail": "Limit must be set for non overcommitable resources"}),
    ({"hugepages-2Mi": "2Mi", "memory": "1Gi"}, {"hugepages-2Mi": "4Mi", "memory": "1Gi"},
     {"valid": False, "field": "requests", "detail": "must be equal to hugepages-2Mi limit of 4Mi"}),
    ({"hugepages-2Mi": "3Mi", "cpu": "1"}, {"hugepages-2Mi": "3Mi", "cpu": "1"},
     {"valid": False, "field": "requests[hugepages-2Mi]", "detail": "3Mi is not positive integer multiple of hugepages-2Mi"}),
    ({}, {"hugepages-2Mi": "2Mi", "memory": "1Gi"}, {"valid": True}),
])
def test_hugepage_container_validation(requests, limits, expect):
    test_hugepages.test_container_resources_validation(
        {"name": "hand-made", "kind": "container_resources_validation", "requests": requests, "limits": limits,
         "expect": expect})


@pytest.mark.parametrize("name,expect", [("hugepages-", {"error": True}), ("cpu", {"error": True}),
                                         ("hugepages-1Gi", {"page_size": "1Gi", "bytes": 2**30})])
def test_hugepage_size_from_resource_name(name, expect):
    test_hugepages.test_hugepage_size_from_resource_name(
        {"name": "hand-made", "kind": "hugepage_size_from_resource_name", "input": name, "expect": expect})


def test_defaults_vector_of_an_older_kubelet():
    hard = "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%"
    v = {"name": "older defaults", "kind": "defaults",
         "flags": {"eviction-hard": hard, "eviction-soft": "", "eviction-soft-grace-period": "",
                   "eviction-minimum-reclaim": ""},
         "expect": [_t("memory.available", {"quantity": "100Mi"}), _t("nodefs.available", {"percentage": 0.1}),
                    _t("nodefs.inodesFree", {"percentage": 0.05}), _t("imagefs.available", {"percentage": 0.15})],
         "compare": "unordered"}
    test_thresholds.test_defaults(v)
    # a set pynuma does not ship is caught
    v["flags"]["eviction-hard"] = "memory.available<200Mi"
    v["expect"] = [_t("memory.available", {"quantity": "200Mi"})]
    with pytest.raises(AssertionError):
        test_thresholds.test_defaults(v)
