"""The comparator functions one by one: direction, missing stats, chaining."""
from __future__ import annotations

from pynuma.pod import Pod
from pynuma.policy.eviction import comparators as c
from pynuma.policy.eviction.podstats import ContainerStats, FsUsage, PodStats
from pynuma.policy.eviction.ranking import stats_lookup


def _pod(name, prio=0, mem=None):
    req = {"memory": mem} if mem else {}
    return Pod.from_dict({"name": name, "priority": prio, "containers": [{"name": name, "requests": req}]})


def test_directions():
    a, b = _pod("a", 1, "1Mi"), _pod("b", 0)
    stats = stats_lookup({a.uid: PodStats(memory_working_set=5 << 20, process_count=1),
                          b.uid: PodStats(memory_working_set=1 << 20, process_count=9)})
    assert c.priority(a, b) == 1 and c.priority(b, a) == -1 and c.priority(a, a) == 0
    assert c.exceed_memory_requests(stats)(a, b) == 0  # both exceed (b has no request)
    assert c.memory(stats)(a, b) == -1  # a: 4Mi above request, b: 1Mi
    assert c.process(stats)(a, b) == 1
    assert c.chain(c.exceed_memory_requests(stats), c.priority)(a, b) == 1


def test_missing_stats_go_first_and_tie_with_each_other():
    a, b, d = _pod("a"), _pod("b"), _pod("d")
    stats = stats_lookup({a.uid: PodStats(memory_working_set=1)})
    for cmp in (c.memory(stats), c.process(stats), c.exceed_memory_requests(stats),
                c.disk(stats, ("root",), "ephemeral-storage")):
        assert cmp(b, a) == -1 and cmp(a, b) == 1 and cmp(b, d) == 0


def test_disk_subtracts_ephemeral_request_for_inodes_too():
    a = Pod.from_dict({"name": "a", "containers": [{"name": "x", "requests": {"ephemeral-storage": "5"}}]})
    b = _pod("b")
    mk = PodStats(containers=(ContainerStats("x", FsUsage(0, 10), FsUsage(0, 0)),))
    stats = stats_lookup({a.uid: mk, b.uid: mk})
    assert c.disk(stats, ("root",), "inodes")(a, b) == 1
    assert c.exceed_disk_requests(stats, ("root",), "inodes")(a, b) == 0  # inode request is always 0
