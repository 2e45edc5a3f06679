"""Local-storage limit checks: emptyDir sizeLimit, pod limit, container limit (rootfs only without imagefs)."""
from __future__ import annotations

from pynuma.pod import Pod
from pynuma.policy.eviction.local_storage import local_storage_violation
from pynuma.policy.eviction.ranking import ContainerStats, FsUsage, PodStats

GI, MI = 1 << 30, 1 << 20


def test_local_storage_checks_in_order():
    p = Pod.from_dict({"name": "p", "containers": [{"name": "c", "limits": {"ephemeral-storage": "1Gi"}}],
                       "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Mi"}}]})
    s = PodStats(containers=(ContainerStats("c", FsUsage(600 * MI, 0), FsUsage(600 * MI, 0)),),
                 volumes={"v": FsUsage(2 * MI, 0)}, ephemeral_storage=FsUsage(100, 0))
    assert local_storage_violation(p, s, False) == 'Usage of EmptyDir volume "v" exceeds the limit "1Mi". '
    s2 = PodStats(containers=s.containers, volumes={"v": FsUsage(MI, 0)}, ephemeral_storage=FsUsage(2 * GI, 0))
    assert local_storage_violation(p, s2, False) == \
        "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. "
    s3 = PodStats(containers=s.containers, volumes={}, ephemeral_storage=FsUsage(0, 0))
    assert local_storage_violation(p, s3, False) == 'Container c exceeded its local ephemeral storage limit "1Gi". '
    assert local_storage_violation(p, s3, True) is None  # rootfs is on the image fs then


def test_the_pod_limit_includes_its_overhead():
    # PodLimits adds the pod overhead to a limit that is set: 1Gi + 512Mi, so 1.2Gi used is within it
    p = Pod.from_dict({"name": "p", "overhead": {"ephemeral-storage": "512Mi"},
                       "containers": [{"name": "c", "limits": {"ephemeral-storage": "1Gi"}}]})
    s = PodStats(containers=(ContainerStats("c", FsUsage(0, 0), FsUsage(0, 0)),), volumes={},
                 ephemeral_storage=FsUsage(GI + 200 * MI, 0))
    assert local_storage_violation(p, s, False) is None
    s2 = PodStats(containers=s.containers, volumes={}, ephemeral_storage=FsUsage(GI + 600 * MI, 0))
    assert local_storage_violation(p, s2, False) == \
        "Pod ephemeral local storage usage exceeds the total limit of containers 1536Mi. "
