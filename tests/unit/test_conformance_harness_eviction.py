"""Hand-made eviction_scenarios-shaped vectors for variants no public vector exercises.

Each vector runs through the very harness functions of
tests/conformance/test_eviction_scenarios.py, so a held-back vector of the
same shape takes the same code path.  Expected values follow the kubelet's
eviction manager (pkg/kubelet/eviction): PID ranking, inode signals,
allocatableMemory, critical pods, feature gates, extra pod stats.
"""
from __future__ import annotations

import copy

import pytest

from tests.conformance import test_eviction_scenarios as harness


def _thr(signal, value, grace=0, min_reclaim=None):
    return {"signal": signal, "operator": "LessThan", "value": {"quantity": value}, "grace_period_s": grace,
            "min_reclaim": min_reclaim}


def _pod(name, priority=0, requests=None, limits=None, **usage):
    return {"name": name, "priority": priority,
            "containers": [{"name": name, "requests": requests or {}, "limits": limits or {}}], "usage": usage}


def _step(advance, node, pressure, evicted=None, grace=None, **more):
    exp = {"pressure": pressure, "evicted": evicted, "grace_period_override_s": grace}
    exp.update(more)
    return {"advance_s": advance, "node": node, "expect": exp}


def _rl(curproc):
    return {"rlimit": {"maxpid": 3000, "curproc": curproc}}


PID_SCENARIO = {
    "name": "pid pressure: soft then hard",
    "fs_layout": {"dedicated_image_fs": False},
    "config": {"max_pod_grace_period_s": 7, "pressure_transition_period_s": 300,
               "thresholds": [_thr("pid.available", "500"), _thr("pid.available", "1000", grace=60)]},
    # PID ranking: lower priority first, then more processes (no request step).
    "pods": [_pod("high-priority-many", 1000, process_count=900),
             _pod("low-priority-few", 0, process_count=100),
             _pod("low-priority-many", 0, process_count=400)],
    "steps": [
        _step(0, _rl(1000), []),
        _step(30, _rl(2200), ["PIDPressure"]),            # soft met, grace not elapsed
        _step(60, _rl(2200), ["PIDPressure"], "low-priority-many", 7),
        _step(10, _rl(2700), ["PIDPressure"], "low-priority-many", 1),  # hard
        _step(60, _rl(1000), ["PIDPressure"]),             # transition period holds the condition
        _step(300, _rl(1000), []),
    ],
}


def _fs(avail, cap):
    return {"available": avail, "capacity": cap}


def _disk(nodefs):
    return {"nodefs": nodefs, "imagefs": _fs("16Gi", "32Gi"), "containerfs": _fs("16Gi", "32Gi")}


INODE_SCENARIO = {
    "name": "inode pressure on nodefs (no image fs)",
    "fs_layout": {"dedicated_image_fs": False, "container_fs_separate_from_image_fs": False,
                  "KubeletSeparateDiskGC": False},
    "config": {"max_pod_grace_period_s": 5, "pressure_transition_period_s": 300,
               "thresholds": [_thr("nodefs.inodesFree", "1Mi")]},
    # Inode "request" is 0, so every pod using inodes exceeds it; then priority; then most inodes.
    "pods": [_pod("low-priority-few", 0, container_rootfs_inodes="100"),
             _pod("low-priority-many", 0, container_rootfs_inodes="300", container_logs_inodes="50"),
             _pod("high-priority-most", 100, container_rootfs_inodes="900")],
    "steps": [
        _step(0, _disk(_fs("3Mi", "4Mi")), []),
        _step(10, _disk(_fs("500Ki", "4Mi")), ["DiskPressure"], "low-priority-many", 1,
              gc_invoked=["containers", "images"]),
    ],
}


def _mem(avail, ws):
    return {"available": avail, "working_set": ws}


ALLOCATABLE_SCENARIO = {
    "name": "allocatable memory pressure",
    "fs_layout": {"dedicated_image_fs": False},
    "config": {"max_pod_grace_period_s": 5, "pressure_transition_period_s": 300,
               "thresholds": [_thr("allocatableMemory.available", "1Gi")]},
    # Memory ranking: usage above request first, then priority, then usage - request.
    "pods": [_pod("guaranteed", 0, {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"},
                  memory_working_set="900Mi"),
             _pod("burstable", 0, {"memory": "100Mi"}, {"memory": "1Gi"}, memory_working_set="400Mi"),
             _pod("best-effort", 0, memory_working_set="350Mi")],
    "steps": [
        _step(0, {"memory": _mem("8Gi", "1Gi"), "pods_container_memory": _mem("3Gi", "1Gi")}, []),
        # node memory is fine; only the pods cgroup is short
        _step(10, {"memory": _mem("8Gi", "1Gi"), "pods_container_memory": _mem("500Mi", "3Gi")},
              ["MemoryPressure"], "best-effort", 1),
    ],
}

CRITICAL_SCENARIO = {
    "name": "critical pod is never the victim",
    "fs_layout": {"dedicated_image_fs": False},
    "config": {"max_pod_grace_period_s": 5, "pressure_transition_period_s": 300,
               "thresholds": [_thr("memory.available", "1Gi")]},
    "pods": [_pod("system-critical", 2000000000, memory_working_set="3Gi"),
             _pod("ordinary", 0, memory_working_set="100Mi")],
    "steps": [_step(0, {"memory": _mem("500Mi", "4Gi")}, ["MemoryPressure"], "ordinary", 1)],
}


@pytest.mark.parametrize("v", [PID_SCENARIO, INODE_SCENARIO, ALLOCATABLE_SCENARIO, CRITICAL_SCENARIO],
                         ids=lambda v: v["name"])
def test_signal_variants_through_harness(v):
    harness.test_synchronize_steps(copy.deepcopy(v))


def test_harness_assertions_can_fail():
    # the same PID run with a wrong victim must be caught by the harness
    v = copy.deepcopy(PID_SCENARIO)
    v["steps"][2]["expect"]["evicted"] = "low-priority-few"
    with pytest.raises(AssertionError):
        harness.test_synchronize_steps(v)


def test_any_pod_only_asserts_that_one_pod_was_evicted():
    v = copy.deepcopy(CRITICAL_SCENARIO)
    v["steps"][0]["expect"]["evicted"] = "(any pod)"
    harness.test_synchronize_steps(v)


def test_soft_grace_capped_by_termination_grace_period_unless_gate():
    v = copy.deepcopy(PID_SCENARIO)
    v["pods"][2]["terminationGracePeriodSeconds"] = 3
    v["steps"][2]["expect"]["grace_period_override_s"] = 3   # min(max-pod-grace 7, 3)
    harness.test_synchronize_steps(copy.deepcopy(v))
    # feature gate AllowOverwriteTerminationGracePeriodSeconds: max-pod-grace-period as is
    v["feature_gates"] = {"AllowOverwriteTerminationGracePeriodSeconds": True}
    v["steps"][2]["expect"]["grace_period_override_s"] = 7
    harness.test_synchronize_steps(v)


def test_extra_pod_stats_of_inactive_pods_never_evicted():
    v = copy.deepcopy(CRITICAL_SCENARIO)
    v["steps"][0]["extra_pod_stats"] = {"gone-pod": {"memory_working_set": "10Gi"}}
    harness.test_synchronize_steps(copy.deepcopy(v))
    v["steps"][0]["extra_pod_stats"] = [{"name": "gone-pod", "usage": {"memory_working_set": "10Gi"}}]
    harness.test_synchronize_steps(v)


def test_after_gc_enough_means_no_eviction():
    v = copy.deepcopy(INODE_SCENARIO)
    v["config"]["thresholds"] = [_thr("nodefs.available", "1Gi", min_reclaim={"quantity": "500Mi"})]
    v["pods"] = [_pod("a", 0, container_rootfs="700Mi"), _pod("b", 0, container_rootfs="100Mi")]
    low = _disk(_fs("750Mi", "4Gi"))
    v["steps"] = [
        _step(0, _disk(_fs("3Gi", "4Gi")), []),
        # reclaim frees enough (above 1Gi + 500Mi): no pod evicted
        dict(_step(10, low, ["DiskPressure"], gc_invoked=["containers", "images"]),
             after_gc=_disk(_fs("2Gi", "4Gi"))),
        _step(600, _disk(_fs("3Gi", "4Gi")), []),
        # reclaim frees too little (below 1Gi + 500Mi): largest user goes
        dict(_step(10, low, ["DiskPressure"], "a", 1, gc_invoked=["containers", "images"]),
             after_gc=_disk(_fs("1.1Gi", "4Gi"))),
    ]
    harness.test_synchronize_steps(v)


def test_feature_gate_separate_disk_gc_off_with_split_fs_is_an_error():
    v = {"name": "gate from feature_gates", "kind": "evicted_pod_status",
         "fs_layout": {"dedicated_image_fs": True, "container_fs_separate_from_image_fs": True},
         "feature_gates": {"KubeletSeparateDiskGC": False},
         "config": {"max_pod_grace_period_s": 5, "pressure_transition_period_s": 300,
                    "thresholds": [_thr("containerfs.available", "1Gi")]},
         "pods": [_pod("a", 0, container_rootfs="1Gi")],
         "node": _disk(_fs("100Mi", "4Gi")),
         "expect": {"error": "KubeletSeparateDiskGC is turned off but we still have a split filesystem"}}
    harness.test_evicted_pod_status(v)


def test_evicted_pod_status_does_not_depend_on_evicted_derived():
    v = {"name": "memory status", "kind": "evicted_pod_status", "fs_layout": {"dedicated_image_fs": False},
         "config": {"max_pod_grace_period_s": 5, "pressure_transition_period_s": 300,
                    "thresholds": [_thr("memory.available", "2Gi")]},
         "pods": [_pod("below-requests", 0, {"memory": "1Gi"}, {"memory": "1Gi"}, memory_working_set="500Mi"),
                  _pod("above-requests", 0, {"memory": "100Mi"}, {"memory": "1Gi"}, memory_working_set="700Mi")],
         "node": {"memory": _mem("1500Mi", "3Gi")},
         "evicted_derived": "not-a-pod-name (informational)"}
    # Memory messages name no container: the pod's stats carry no per-container working set here.
    _status(v, "The node was low on resource: memory. Threshold quantity: 2Gi, available: 1500Mi. ")
    harness.test_evicted_pod_status(v)


def _status(v, msg):
    v["expect"] = {"pod_status": {"phase": "Failed", "reason": "Evicted", "message": msg,
                                  "conditions": [{"type": "DisruptionTarget", "status": "True",
                                                  "reason": "TerminationByKubelet", "message": msg}]}}


def test_evicted_pod_status_pid():
    v = {"name": "pid status", "kind": "evicted_pod_status", "fs_layout": {"dedicated_image_fs": False},
         "config": {"max_pod_grace_period_s": 5, "pressure_transition_period_s": 300,
                    "thresholds": [_thr("pid.available", "1000")]},
         "pods": [_pod("p1", 0, process_count=300), _pod("p2", 10, process_count=300)],
         "node": {"rlimit": {"maxpid": 2000, "curproc": 1600}}}
    # Go prints quantities canonically: "1000" (DecimalSI) is "1k".
    _status(v, "The node was low on resource: pids. Threshold quantity: 1k, available: 400. ")
    harness.test_evicted_pod_status(v)
    v["expect"]["pod_status"]["message"] += "x"
    with pytest.raises(AssertionError):
        harness.test_evicted_pod_status(v)


def _never_completes():
    return {
        "name": "soft eviction never completes, then hard pressure",
        "fs_layout": {"dedicated_image_fs": False},
        "pod_termination": "never completes",
        "config": {"max_pod_grace_period_s": 30, "pressure_transition_period_s": 300,
                   "thresholds": [_thr("memory.available", "1Gi"), _thr("memory.available", "2Gi", grace=60)]},
        "pods": [_pod("big", 0, memory_working_set="500Mi"), _pod("small", 0, memory_working_set="300Mi")],
        "steps": [
            _step(0, {"memory": _mem("3Gi", "1Gi")}, []),
            _step(10, {"memory": _mem("1500Mi", "2Gi")}, ["MemoryPressure"]),
            _step(60, {"memory": _mem("1500Mi", "2Gi")}, ["MemoryPressure"], "big", 30),
            # SEMANTICS 2.3: while a soft eviction is still terminating no new soft eviction starts
            _step(10, {"memory": _mem("1500Mi", "2Gi")}, ["MemoryPressure"]),
            # ... but a hard threshold escalates it (grace 1)
            _step(10, {"memory": _mem("500Mi", "3Gi")}, ["MemoryPressure"], "big", 1),
            # a pod already hard-evicted is not killed again: the next one goes
            _step(10, {"memory": _mem("500Mi", "3Gi")}, ["MemoryPressure"], "small", 1),
        ],
    }


def test_pod_termination_never_completes():
    harness.test_synchronize_steps(_never_completes())


def test_without_never_completes_the_same_pod_is_evicted_again():
    v = _never_completes()
    del v["pod_termination"]
    v["steps"][3]["expect"].update(evicted="big", grace_period_override_s=30)
    v["steps"][5]["expect"]["evicted"] = "big"
    harness.test_synchronize_steps(v)
