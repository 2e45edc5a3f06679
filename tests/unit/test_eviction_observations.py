"""Observations from a kubelet stats summary (camelCase and list-form system containers)."""
from __future__ import annotations

from pynuma.policy.eviction.observations import make_signal_observations, pod_stats_from_summary, quantity_format


def test_summary_forms():
    summary = {"node": {
        "memory": {"availableBytes": 100, "workingSetBytes": 50, "time": 7.0},
        "systemContainers": [{"name": "kubelet"}, {"name": "pods", "memory": {"availableBytes": 10,
                                                                              "workingSetBytes": 5}}],
        "fs": {"availableBytes": 1, "capacityBytes": 2},  # no inode figures: no inode signal
        "rlimit": {"maxpid": 100, "curproc": 40},
    }}
    obs = make_signal_observations(summary)
    assert obs["memory.available"].capacity == 150 and obs["memory.available"].time == 7.0
    assert obs["allocatableMemory.available"].available == 10
    assert "nodefs.inodesFree" not in obs and "imagefs.available" not in obs
    assert obs["pid.available"].available == 60
    assert quantity_format("pid.available") == "DecimalSI" and quantity_format("nodefs.available") == "BinarySI"


def test_pod_stats_from_summary():
    summary = {"pods": [{"podRef": {"name": "a", "namespace": "d", "uid": "u1"},
                         "memory": {"workingSetBytes": 9},
                         "containers": [{"name": "c", "rootfs": {"usedBytes": 3, "inodesUsed": 1},
                                         "logs": {"usedBytes": 4}, "memory": {"workingSetBytes": 8}}],
                         "volume": [{"name": "v", "usedBytes": 2}],
                         "ephemeral-storage": {"usedBytes": 11},
                         "process_stats": {"process_count": 6}}, "garbage"]}
    got = pod_stats_from_summary(summary)
    s = got["u1"]
    assert s.memory_working_set == 9 and s.process_count == 6 and s.ephemeral_storage.used_bytes == 11
    assert s.containers[0].rootfs.inodes_used == 1 and s.containers[0].memory_working_set == 8
    assert s.volumes["v"].used_bytes == 2 and list(got) == ["u1"]
