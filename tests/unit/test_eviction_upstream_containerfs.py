"""containerfs thresholds as upstream derives them, and what the first synchronize pass evaluates.

Upstream: pkg/kubelet/eviction/helpers.go ``UpdateContainerFsThresholds`` acts
only when imageFs == separateContainerImageFs (copy nodefs) or imageFs &&
!separateContainerImageFs (copy imagefs); eviction_manager.go ``synchronize``
reads ``thresholds := m.config.Thresholds`` before the first-time block, where
``thresholds, err := UpdateContainerFsThresholds(...)`` declares a new variable,
so the first pass evaluates the old slice (seeing only overwrites that land in
its backing array) while ``reclaimNodeLevelResources`` uses the rewritten
``m.config.Thresholds``.  Vectors go through the conformance harness functions.
"""
from __future__ import annotations

import copy

import pytest

from pynuma.policy.eviction.thresholds import (
    Threshold, containerfs_first_pass_thresholds, parse_threshold_config, threshold_config_capacity,
    update_containerfs_thresholds,
)
from tests.conformance import test_eviction_scenarios as scenarios
from tests.conformance import test_thresholds as thresholds_harness


def _thr(signal, value, grace=0):
    return {"signal": signal, "operator": "LessThan", "value": {"quantity": value}, "grace_period_s": grace,
            "min_reclaim": None}


_NONE = {"hard_available": None, "soft_available": None, "hard_inodes": None, "soft_inodes": None}


def _update_vector(inp, expect, error, dedicated=False, separate=True):
    return {"kind": "update_containerfs_thresholds", "dedicated_image_fs": dedicated,
            "container_fs_separate_from_image_fs": separate, "input": inp,
            "expect_containerfs": expect, "expect_error": error}


# --- item 1: writable layers apart from images, no dedicated image fs: upstream changes nothing ---

def test_split_without_image_fs_derives_nothing():
    v = _update_vector([_thr("nodefs.available", "100Mi")], dict(_NONE), None)
    thresholds_harness.test_update_containerfs_thresholds(v)
    got, error = update_containerfs_thresholds([Threshold.from_dict(t) for t in v["input"]], False, True)
    assert [t.signal for t in got] == ["nodefs.available"] and error is None


def test_split_without_image_fs_keeps_user_containerfs_and_reports_it():
    user = _thr("containerfs.available", "1Gi")
    v = _update_vector([user], dict(_NONE, hard_available=user), "found containerfs.available for hard eviction. ignoring")
    thresholds_harness.test_update_containerfs_thresholds(v)
    got, error = update_containerfs_thresholds([Threshold.from_dict(user)], False, True)
    assert got == [Threshold.from_dict(user)]
    assert error == "found containerfs.available for hard eviction. ignoring"


def test_split_without_image_fs_keeps_every_user_containerfs_threshold():
    inp = [_thr("nodefs.available", "1Gi"), _thr("nodefs.inodesFree", "1k"), _thr("containerfs.available", "2Gi"),
           _thr("containerfs.inodesFree", "3k", grace=30)]
    got, error = update_containerfs_thresholds([Threshold.from_dict(t) for t in inp], False, True)
    assert got == [Threshold.from_dict(t) for t in inp]
    assert error == "found containerfs.inodesFree for soft eviction. ignoring"


@pytest.mark.parametrize("dedicated,separate,source", [(False, False, "nodefs"), (True, True, "nodefs"),
                                                       (True, False, "imagefs")])
def test_acting_layouts_still_copy(dedicated, separate, source):
    inp = [_thr("nodefs.available", "1Gi"), _thr("imagefs.available", "2Gi"), _thr("containerfs.available", "9Gi")]
    want = {"nodefs": "1Gi", "imagefs": "2Gi"}[source]
    v = _update_vector(inp, dict(_NONE, hard_available=_thr("containerfs.available", want)),
                       "found containerfs.available for hard eviction. ignoring", dedicated, separate)
    thresholds_harness.test_update_containerfs_thresholds(v)


# --- item 2: the first synchronize pass evaluates the slice read before the rewrite ---

def _pod(name, **usage):
    return {"name": name, "priority": 0, "containers": [{"name": name, "requests": {}, "limits": {}}], "usage": usage}


def _fs(avail, cap):
    return {"available": avail, "capacity": cap}


def _step(advance, node, pressure, evicted=None, grace=None, **more):
    exp = {"pressure": pressure, "evicted": evicted, "grace_period_override_s": grace}
    exp.update(more)
    return {"advance_s": advance, "node": node, "expect": exp}


# images and writable layers on the root fs, with the separate-disk GC gate on
_ONE_FS_SEPARATE_GC = {"dedicated_image_fs": False, "container_fs_separate_from_image_fs": False,
                       "KubeletSeparateDiskGC": True}


def _config(thresholds):
    return {"max_pod_grace_period_s": 5, "pressure_transition_period_s": 300, "thresholds": thresholds}


_LOW_CONTAINERFS = {"nodefs": _fs("16Gi", "32Gi"), "imagefs": _fs("16Gi", "32Gi"), "containerfs": _fs("500Mi", "32Gi")}

# Derived (appended) containerfs.available is not evaluated until the second pass.
DERIVED_SECOND_PASS = {
    "name": "derived containerfs threshold counts from the second pass",
    "fs_layout": _ONE_FS_SEPARATE_GC,
    "config": _config([_thr("nodefs.available", "1Gi")]),
    "pods": [_pod("a", container_rootfs="100Mi")],
    "steps": [
        _step(0, _LOW_CONTAINERFS, []),
        _step(10, _LOW_CONTAINERFS, ["DiskPressure"], "a", 1, gc_invoked=["containers", "images"]),
    ],
}

# A user containerfs threshold the rewrite replaces by an empty one (no nodefs.inodesFree to copy):
# the first append (containerfs.available) outgrows the slice, so pass 1 still evaluates the user's
# threshold; node-level reclaim checks the rewritten set (nothing can be met) and so evicts no pod.
USER_THRESHOLD_FIRST_PASS = {
    "name": "user containerfs threshold evaluated by the first pass only",
    "fs_layout": _ONE_FS_SEPARATE_GC,
    "config": _config([_thr("containerfs.inodesFree", "1k")]),
    "pods": [_pod("a", container_rootfs_inodes="100")],
    "steps": [
        _step(0, {"nodefs": _fs("1M", "2M"), "imagefs": _fs("1M", "2M"), "containerfs": _fs("500", "2M")},
              ["DiskPressure"], None, gc_invoked=["containers", "images"]),
        # met in pass 1, so re-checked (with min-reclaim) from the previous pass's met set
        _step(10, {"nodefs": _fs("1M", "2M"), "imagefs": _fs("1M", "2M"), "containerfs": _fs("500", "2M")},
              ["DiskPressure"], None, gc_invoked=["containers", "images"]),
        _step(10, {"nodefs": _fs("1M", "2M"), "imagefs": _fs("1M", "2M"), "containerfs": _fs("1M", "2M")},
              ["DiskPressure"], None, gc_invoked=[]),
    ],
}

# An in-place overwrite made before any append is seen by the first pass.
OVERWRITE_FIRST_PASS = {
    "name": "overwrite before any append is seen by the first pass",
    "fs_layout": _ONE_FS_SEPARATE_GC,
    "config": _config([_thr("nodefs.available", "1Gi"), _thr("containerfs.available", "100Mi")]),
    "pods": [_pod("a", container_rootfs="100Mi")],
    "steps": [_step(0, _LOW_CONTAINERFS, ["DiskPressure"], "a", 1, gc_invoked=["containers", "images"])],
}


@pytest.mark.parametrize("v", [DERIVED_SECOND_PASS, USER_THRESHOLD_FIRST_PASS, OVERWRITE_FIRST_PASS],
                         ids=lambda v: v["name"])
def test_first_pass_through_harness(v):
    scenarios.test_synchronize_steps(copy.deepcopy(v))


def test_first_pass_sees_overwrites_only_while_the_slice_has_room():
    ts = [Threshold.from_dict(t) for t in (_thr("nodefs.available", "1Gi"), _thr("nodefs.inodesFree", "1k"),
                                           _thr("containerfs.inodesFree", "5"))]
    # capacity == length (slice literal): the first append moves the slice, the overwrite is not seen
    assert containerfs_first_pass_thresholds(ts, False, False) == ts
    # room for the two appends before the overwrite: it lands in the evaluated slice; appends never do
    seen = containerfs_first_pass_thresholds(ts, False, False, capacity=6)
    assert [(t.signal, str(t.value)) for t in seen] == [
        ("nodefs.available", "1Gi"), ("nodefs.inodesFree", "1k"), ("containerfs.inodesFree", "1k")]
    # the full rewrite (later passes) has all four derived thresholds that have a source
    full, _ = update_containerfs_thresholds(ts, False, False)
    assert [(t.signal, str(t.value)) for t in full] == [
        ("nodefs.available", "1Gi"), ("nodefs.inodesFree", "1k"), ("containerfs.inodesFree", "1k"),
        ("containerfs.available", "1Gi")]


def test_first_pass_layout_that_does_not_act_sees_everything():
    ts = [Threshold.from_dict(_thr("containerfs.available", "1Gi"))]
    assert containerfs_first_pass_thresholds(ts, False, True) == ts


def test_parsed_threshold_capacity_follows_go_append_growth():
    # defaults (5 hard) with "pods": copied (cap 5) then one allocatable copy appended: doubled to 10
    defaults = parse_threshold_config(["pods"], None, None, None, None)
    assert len(defaults) == 6
    assert threshold_config_capacity(5, 0, 1, True) == 10
    assert threshold_config_capacity(5, 0, 0, False) == 5
    assert threshold_config_capacity(3, 1, 0, False) == 6   # append 1 to a full slice of 3: doubles
    assert threshold_config_capacity(1, 3, 0, False) == 4   # more than double: exactly what is needed
    assert threshold_config_capacity(0, 0, 0, True) == 0
