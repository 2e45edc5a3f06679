"""Pod, container, QoS and node cgroup settings beyond the shared vectors: sidecars, overhead, edges."""
from __future__ import annotations

import doctest

import pytest

from pynuma.errors import InputError
from pynuma.pod import Pod
from pynuma.policy.cgroupconfig import config, container, conversions, node, pod, podresources, qos
from pynuma.policy.cgroupconfig.container import resource_config_for_container
from pynuma.policy.cgroupconfig.pod import resource_config_for_pod
from pynuma.policy.cgroupconfig.qos import qos_cgroup_config
from pynuma.quantity import Quantity

MI = 1 << 20


def _pod(containers, init=(), **spec):
    raw = {"name": "p", "uid": "u1", "containers": list(containers), "initContainers": list(init)}
    raw.update(spec)
    return Pod.from_dict(raw)


def c(name, req=None, lim=None, restart=None):
    out = {"name": name, "requests": req or {}, "limits": lim or {}}
    if restart:
        out["restartPolicy"] = restart
    return out


@pytest.mark.parametrize("module", [config, container, conversions, node, pod, podresources, qos])
def test_docstring_examples(module):
    assert doctest.testmod(module).failed == 0


def test_sidecars_add_to_the_running_phase_and_init_containers_peak_beside_earlier_sidecars():
    # init 5, sidecars 1/2/3, app 1 -> max(1+1+2+3, 5+1+2) = 8 for the order below
    p = _pod([c("app", {"cpu": "1"})],
             [c("s1", {"cpu": "1"}, restart="Always"), c("s2", {"cpu": "2"}, restart="Always"),
              c("init", {"cpu": "5"}), c("s3", {"cpu": "3"}, restart="Always")])
    assert podresources.milli(podresources.pod_requests(p), "cpu") == 8000
    p2 = _pod([c("app", {"cpu": "1"})], [c("init", {"cpu": "9"}), c("s1", {"cpu": "1"}, restart="Always")])
    assert podresources.milli(podresources.pod_requests(p2), "cpu") == 9000


def test_overhead_is_added_to_requests_and_only_to_existing_non_zero_limits():
    p = _pod([c("app", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1"})], overhead={"cpu": "250m", "memory": "64Mi"})
    req = podresources.pod_requests(p)
    lim = podresources.pod_limits(p)
    assert podresources.milli(req, "cpu") == 1250 and podresources.value(req, "memory") == 1024 * MI + 64 * MI
    assert podresources.milli(lim, "cpu") == 1250 and "memory" not in lim
    cfg = resource_config_for_pod(p)
    assert cfg.cpu_shares == conversions.milli_cpu_to_shares(1250)
    assert podresources.pod_requests(p, exclude_overhead=True)["cpu"] == 1


def test_a_limit_without_request_is_the_request_as_api_defaulting_makes_it():
    p = _pod([c("app", None, {"cpu": "2", "memory": "1Gi"})])
    cfg = resource_config_for_pod(p)
    assert (cfg.cpu_shares, cfg.cpu_quota, cfg.memory) == (2048, 200000, 1024 * MI)


def test_burstable_pod_gets_no_quota_when_an_init_container_lacks_a_cpu_limit():
    p = _pod([c("app", {"cpu": "1"}, {"cpu": "2"})], [c("init", {"cpu": "1"})])
    cfg = resource_config_for_pod(p)
    assert cfg.cpu_quota is None and cfg.cpu_period is None and cfg.cpu_shares == 1024


def test_pod_level_resources_off_ignores_spec_resources():
    raw = {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2", "memory": "1Gi"}}}
    p = _pod([c("app")], **raw)
    assert resource_config_for_pod(p, pod_level_resources=False).cpu_shares == 2
    assert resource_config_for_pod(p, pod_level_resources=True).cpu_shares == 2048


def test_unknown_memory_reservation_policy_is_refused_by_name():
    with pytest.raises(InputError, match="Tiered"):
        resource_config_for_pod(_pod([c("a")]), memory_reservation_policy="Tiered")


def test_tiered_reservation_gives_burstable_memory_low_and_nothing_to_besteffort():
    b = _pod([c("a", {"memory": "100Mi"})])
    be = _pod([c("a")])
    kw = dict(enforce_memory_qos=True, memory_reservation_policy=pod.POLICY_TIERED)
    assert resource_config_for_pod(b, **kw).unified == {"memory.low": str(100 * MI)}
    assert resource_config_for_pod(be, **kw).unified is None
    assert resource_config_for_pod(b, enforce_memory_qos=True, memory_reservation_policy=None).unified == \
        {"memory.min": str(100 * MI)}


def test_container_config_defaults_shares_from_limit_and_limits_unrequested_hugepage_sizes_to_zero():
    p = _pod([c("app", None, {"cpu": "500m", "memory": "1Gi", "hugepages-2Mi": "4Mi"})])
    cfg = resource_config_for_container(p, "app", huge_page_sizes=[2 * MI, 1 << 30], cgroup_v2=True)
    assert cfg.cpu_shares == 512 and cfg.cpu_quota == 50000 and cfg.cpu_period == 100000
    assert cfg.hugepage_limits == {2 * MI: 4 * MI, 1 << 30: 0}
    assert cfg.unified == {"memory.oom.group": "1"}


def test_container_without_cpu_limit_has_an_unlimited_quota_and_no_quota_when_not_enforced():
    p = _pod([c("app", {"cpu": "250m"})])
    assert resource_config_for_container(p, "app").cpu_quota == -1
    cfg = resource_config_for_container(p, "app", enforce_cpu_limits=False)
    assert cfg.cpu_quota is None and cfg.cpu_period is None and cfg.memory is None


def test_qos_tiers_get_unbounded_hugetlb_and_besteffort_two_shares():
    cfg = qos_cgroup_config([], huge_page_sizes=[2 * MI])
    for tier in (cfg.guaranteed, cfg.burstable, cfg.besteffort):
        assert tier.hugepage_limits == {2 * MI: qos.UNBOUNDED_HUGETLB}
    assert cfg.besteffort.cpu_shares == 2 and cfg.burstable.cpu_shares == 2 and cfg.guaranteed.cpu_shares is None


def test_qos_reserved_limits_are_skipped_without_allocatable_memory():
    g = _pod([c("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})])
    assert qos_cgroup_config([g], allocatable_memory=0, qos_reserved_memory=100).burstable.memory is None
    half = qos_cgroup_config([g], allocatable_memory=4 << 30, qos_reserved_memory=50)
    assert half.burstable.memory == (4 << 30) - (1 << 29)
    assert half.besteffort.memory == half.burstable.memory


def test_node_allocatable_config_carries_pids_and_hugepages_unless_compressible_only():
    res = {"cpu": Quantity.parse("2"), "pid": Quantity.parse("1000"), "hugepages-2Mi": Quantity.parse("8Mi")}
    cfg = node.node_allocatable_cgroup_config(res)
    assert (cfg.cpu_shares, cfg.pids_limit, cfg.hugepage_limits) == (2048, 1000, {2 * MI: 8 * MI})
    only = node.node_allocatable_cgroup_config(res, compressible_resources_only=True)
    assert only.pids_limit is None and only.hugepage_limits is None and only.cpu_shares == 2048


@pytest.mark.parametrize("shares", [2, 3, 51, 1024, 262143, 262144])
def test_weight_stays_in_range_and_round_trip_never_grows(shares):
    w = conversions.shares_to_weight(shares)
    assert 1 <= w <= 10000
    assert conversions.weight_to_shares(w) <= shares


def test_huge_size_names_follow_the_kernel():
    assert [conversions.huge_size_name(s) for s in (2 * MI, 1 << 30, 64 << 10)] == ["2MB", "1GB", "64KB"]


def test_an_unparseable_hugepage_size_counts_as_size_zero_like_the_kubelet_and_is_never_written():
    from pynuma.apply.files import V2Writer

    limits = conversions.hugepage_limits({"hugepages-junk": Quantity.parse("128"), "hugepages-2Mi": Quantity(4 * MI)})
    assert limits == {0: 128, 2 * MI: 4 * MI}
    names = [s.name for s in V2Writer().settings(config.ResourceConfig(hugepage_limits=limits))]
    assert names == ["hugetlb.2MB.max"]


def test_a_regular_init_container_beside_limited_sidecars_keeps_the_pods_limits():
    # PodLimits hands ContainerFn a regular init container's limits plus the sidecars' before it: with
    # a limited sidecar there, the init container's own missing limit does not lift the pod's
    both = {"cpu": "100m", "memory": "100Mi"}
    raw = {"name": "p", "containers": [{"name": "app", "requests": both,
                                        "limits": {"cpu": "200m", "memory": "200Mi"}}],
           "initContainers": [{"name": "side", "restartPolicy": "Always", "requests": both, "limits": both},
                              {"name": "init", "requests": both}]}
    cfg = resource_config_for_pod(Pod.from_dict(raw))
    assert (cfg.cpu_quota, cfg.cpu_period, cfg.memory) == (30000, 100000, 300 << 20)
    # without the sidecar's limits the init container does lift them
    raw["initContainers"][0]["limits"] = {}
    cfg = resource_config_for_pod(Pod.from_dict(raw))
    assert (cfg.cpu_quota, cfg.memory) == (None, None)
