"""PodStats from the compact usage form."""
from __future__ import annotations

from pynuma.pod import Pod
from pynuma.policy.eviction import podstats as r

MI = 1 << 20


def test_from_usage_builds_per_container_and_volume_stats():
    p = Pod.from_dict({"name": "p", "containers": [{"name": "a"}, {"name": "b"}],
                       "volumes": [{"name": "v", "emptyDir": {}}]})
    s = r.PodStats.from_usage(p, {"container_rootfs": "1Mi", "per_local_volume": "2Mi", "process_count": 3})
    assert [c.name for c in s.containers] == ["a", "b"]
    assert s.containers[0].rootfs.used_bytes == MI and s.containers[1].logs.used_bytes == 0
    assert s.volumes["v"].used_bytes == 2 * MI and s.process_count == 3 and s.memory_working_set is None
