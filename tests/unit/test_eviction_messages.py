"""Eviction messages in the kubelet's wording."""
from __future__ import annotations

from pynuma.pod import Pod
from pynuma.policy.eviction.messages import eviction_message, evicted_status
from pynuma.policy.eviction.observations import Observation
from pynuma.policy.eviction.ranking import ContainerStats, FsUsage, PodStats
from pynuma.policy.eviction.thresholds import Threshold, ThresholdValue, parse_percentage
from pynuma.quantity import Quantity

MI = 1 << 20


def test_memory_message_with_container_and_pod_level_sentences():
    p = Pod.from_dict({"name": "web", "resources": {"requests": {"memory": "256Mi"}},
                       "containers": [{"name": "app", "requests": {"memory": "100Mi"}}, {"name": "ok"}]})
    s = PodStats(memory_working_set=700 * MI, containers=(ContainerStats("app", memory_working_set=600 * MI),
                                                          ContainerStats("ok", memory_working_set=0)))
    t = Threshold("memory.available", ThresholdValue(Quantity.parse("2Gi")))
    msg, ann = eviction_message("memory", p, s, [t], {"memory.available": Observation(1500 * MI, 8 << 30)})
    assert msg == ("The node was low on resource: memory. Threshold quantity: 2Gi, available: 1500Mi. "
                   "Pod web was using 700Mi, request is 256Mi, has larger consumption of memory. "
                   "Container app was using 600Mi, request is 100Mi, has larger consumption of memory. ")
    assert ann["offending_containers"] == "app" and ann["offending_pod_usage"] == "700Mi"
    assert ann["starved_resource"] == "memory"


def test_percentage_threshold_and_pid_formats():
    t = Threshold("nodefs.available", ThresholdValue(percentage=parse_percentage("10%")))
    p = Pod.from_dict({"name": "x", "containers": [{"name": "c"}]})
    msg, _ = eviction_message("ephemeral-storage", p, None, [t], {"nodefs.available": Observation(1 << 30, 100 << 30)})
    assert msg == ("The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, "
                   "available: 1Gi. ")
    t = Threshold("pid.available", ThresholdValue(Quantity.parse("1200")))
    msg, _ = eviction_message("pids", p, PodStats(), [t], {"pid.available": Observation(500, 1500)})
    assert msg == "The node was low on resource: pids. Threshold quantity: 1200, available: 500. "


def test_disk_usage_needs_both_rootfs_and_logs():
    p = Pod.from_dict({"name": "x", "containers": [{"name": "c", "requests": {"ephemeral-storage": "1Mi"}}]})
    s = PodStats(containers=(ContainerStats("c", FsUsage(5 * MI), None),))
    msg, ann = eviction_message("ephemeral-storage", p, s, [], {})
    assert msg == "The node was low on resource: ephemeral-storage. " and ann["offending_containers"] == ""


def test_status_shape():
    st = evicted_status("m", True)
    assert st == {"phase": "Failed", "reason": "Evicted", "message": "m", "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet", "message": "m"}]}
    assert "conditions" not in evicted_status("m", False)
