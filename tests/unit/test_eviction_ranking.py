"""Ranking: pod requests (sidecars, init peaks, pod-level), disk usage parts, comparator chains."""
from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings, strategies as st

from pynuma.pod import Pod
from pynuma.policy.eviction import comparators as c
from pynuma.policy.eviction import ranking as r
from pynuma.quantity import Quantity

MI = 1 << 20


def pod(name, prio=0, mem_req=None, eph_req=None, inits=(), volumes=(), pod_mem=None):
    req = {}
    if mem_req:
        req["memory"] = mem_req
    if eph_req:
        req["ephemeral-storage"] = eph_req
    raw = {"name": name, "priority": prio, "containers": [{"name": name, "requests": req}],
           "initContainers": list(inits), "volumes": list(volumes)}
    if pod_mem:
        raw["resources"] = {"requests": {"memory": pod_mem}}
    return Pod.from_dict(raw)


def test_pod_request_with_sidecars_and_init_peak():
    p = pod("p", mem_req="100Mi", inits=[
        {"name": "side", "restartPolicy": "Always", "requests": {"memory": "50Mi"}},
        {"name": "init", "requests": {"memory": "300Mi"}},
    ])
    # app 100 + sidecar 50 = 150; init peak = 300 + sidecar 50 = 350
    assert r.pod_request(p, "memory") == 350 * MI
    assert r.pod_request(pod("q", mem_req="100Mi", pod_mem="1Gi"), "memory") == 1 << 30
    assert r.pod_request(pod("z"), "memory") == 0


def test_the_request_is_read_as_given_and_the_api_server_defaults_it_from_the_limit():
    p = Pod.from_dict({"name": "p", "containers": [{"name": "c", "limits": {"memory": "1Gi"}}]})
    assert r.pod_request(p, "memory") == 0  # GetResourceRequestQuantity reads requests only
    assert r.pod_request(p.defaulted(), "memory") == 1 << 30


def test_overhead_is_added_to_a_request_that_is_not_zero():
    p = Pod.from_dict({"name": "p", "overhead": {"memory": "200Mi"},
                       "containers": [{"name": "c", "requests": {"memory": "100Mi"}}]})
    assert r.pod_request(p, "memory") == 300 << 20
    assert r.pod_request(p, "ephemeral-storage") == 0  # no request: no overhead either
    q = Pod.from_dict({"name": "q", "overhead": {"ephemeral-storage": "1Gi"}, "containers": [{"name": "c"}]})
    assert r.pod_request(q, "ephemeral-storage") == 0


def test_pod_level_resources_replace_the_containers():
    p = Pod.from_dict({"name": "p", "resources": {"requests": {"memory": "1Gi"}},
                       "containers": [{"name": "c", "requests": {"memory": "100Mi", "ephemeral-storage": "1Gi"}}]})
    assert r.pod_request(p, "memory") == 1 << 30
    assert r.pod_request(p, "ephemeral-storage") == 0  # container-level requests are skipped


def test_disk_usage_counts_only_declared_local_volumes_and_measured_parts():
    p = pod("p", volumes=[{"name": "scratch", "emptyDir": {}}, {"name": "ram", "emptyDir": {"medium": "Memory"}},
                          {"name": "pvc", "persistentVolumeClaim": {"claimName": "x"}}, {"name": "h", "hostPath": {}}])
    s = r.PodStats(containers=(r.ContainerStats("p", r.FsUsage(10, 1), r.FsUsage(20, 2)),),
                   volumes={"scratch": r.FsUsage(100, 10), "ram": r.FsUsage(1000, 100),
                            "pvc": r.FsUsage(5000, 500), "h": r.FsUsage(7, 7)})
    assert r.pod_disk_usage(s, p, (r.FS_ROOT, r.FS_LOGS, r.FS_LOCAL_VOLUME)) == {"ephemeral-storage": 137, "inodes": 20}
    assert r.pod_disk_usage(s, p, (r.FS_LOGS,)) == {"ephemeral-storage": 20, "inodes": 2}
    assert r.pod_disk_usage(s, p, (r.FS_IMAGES,)) == {"ephemeral-storage": 0, "inodes": 0}


def test_pods_without_stats_go_first():
    a, b = pod("a"), pod("b")
    stats = r.stats_lookup({b.uid: r.PodStats(memory_working_set=MI)})
    assert [p.name for p in r.rank_memory_pressure([b, a], stats)] == ["a", "b"]


def test_memory_chain_exceed_then_priority_then_usage():
    pods = [pod("guaranteed-big", -5, mem_req="1Gi"), pod("be-low", 0), pod("be-high-prio", 10),
            pod("burst-over", 0, mem_req="100Mi")]
    usage = {"guaranteed-big": 900, "be-low": 10, "be-high-prio": 999, "burst-over": 300}
    stats = r.stats_lookup({p.uid: r.PodStats(memory_working_set=usage[p.name] * MI) for p in pods})
    got = [p.name for p in r.rank_memory_pressure(pods, stats)]
    # exceeders (be-low, be-high-prio, burst-over) first; among prio 0: larger usage-over-request first
    assert got == ["burst-over", "be-low", "be-high-prio", "guaranteed-big"]


def test_inode_ranking_subtracts_ephemeral_request():
    a = pod("a", eph_req="1")  # request of ephemeral-storage subtracted even for inodes
    b = pod("b")
    mk = lambda n: r.PodStats(containers=(r.ContainerStats("x", r.FsUsage(0, n), r.FsUsage(0, 0)),))
    stats = r.stats_lookup({a.uid: mk(10), b.uid: mk(10)})
    order = r.rank_disk_pressure((r.FS_ROOT,), "inodes")([a, b], stats)
    assert [p.name for p in order] == ["b", "a"]


def test_rank_funcs_per_layout():
    single = r.signal_rank_funcs(False, False)
    dedicated = r.signal_rank_funcs(True, False)
    split = r.signal_rank_funcs(True, True)
    assert set(single["nodefs.available"].measured) == {"images", "root", "logs", "localVolumeSource"}
    assert set(dedicated["nodefs.available"].measured) == {"logs", "localVolumeSource"}
    assert set(dedicated["containerfs.available"].measured) == {"root", "images"}
    assert set(split["imagefs.available"].measured) == {"images"}
    assert set(split["containerfs.inodesFree"].measured) == {"logs", "localVolumeSource", "root"}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 2000), st.integers(0, 1000)), min_size=1, max_size=12))
def test_memory_ranking_is_a_sorted_permutation(rows):
    pods = [pod(f"p{i}", prio, mem_req=f"{req}Mi" if req else None) for i, (prio, _, req) in enumerate(rows)]
    stats = {p.uid: r.PodStats(memory_working_set=ws * MI) for p, (_, ws, _) in zip(pods, rows)}
    lookup = r.stats_lookup(stats)
    out = r.rank_memory_pressure(pods, lookup)
    assert sorted(p.name for p in out) == sorted(p.name for p in pods)
    cmp = c.chain(c.exceed_memory_requests(lookup), c.priority, c.memory(lookup))
    assert all(cmp(out[i], out[i + 1]) <= 0 for i in range(len(out) - 1))
    assert out == c.order(pods, cmp)  # the key sort agrees with the comparator chain, ties included


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 2), st.integers(0, 50), st.integers(0, 50), st.integers(0, 30),
                          st.booleans()), min_size=1, max_size=10),
       st.sampled_from(["ephemeral-storage", "inodes"]))
def test_disk_and_pid_key_rankings_match_the_comparator_chains(rows, resource):
    pods = [pod(f"p{i}", prio, eph_req=f"{req}" if req else None) for i, (prio, _, req, _, _) in enumerate(rows)]
    stats = {p.uid: r.PodStats(process_count=procs, containers=(r.ContainerStats(p.name, r.FsUsage(use, use),
                                                                                 r.FsUsage(0, 0)),))
             for p, (_, use, _, procs, has) in zip(pods, rows) if has}
    lookup = r.stats_lookup(stats)
    measured = (r.FS_ROOT, r.FS_LOGS)
    want = c.order(pods, c.chain(c.exceed_disk_requests(lookup, measured, resource), c.priority,
                                 c.disk(lookup, measured, resource)))
    assert r.rank_disk_pressure(measured, resource)(pods, lookup) == want
    assert r.rank_pid_pressure(pods, lookup) == c.order(pods, c.chain(c.priority, c.process(lookup)))
