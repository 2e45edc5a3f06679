"""ranking.json: victim order under each comparator chain."""
from __future__ import annotations

import pytest

from pynuma.pod import Pod
from pynuma.policy.eviction.comparators import chain, comparator_by_name, order
from pynuma.policy.eviction.ranking import PodStats, stats_lookup

from .vectors import vectors


@pytest.mark.parametrize("v", vectors("ranking.json"))
def test_ranking(v):
    by_name = {p["name"]: p for p in v["pods"]}
    pods = [Pod.from_dict(by_name[n]) for n in v["input_order"]]
    stats = {p.uid: PodStats.from_usage(p, by_name[p.name]["usage"]) for p in pods if "usage" in by_name[p.name]}
    lookup = stats_lookup(stats)
    cmp = chain(*(comparator_by_name(c, lookup, v.get("fs_stats_measured", ()),
                                     v.get("disk_resource", "ephemeral-storage")) for c in v["comparators"]))
    got = [p.name for p in order(pods, cmp)]
    if "expect_order" in v:
        assert got == v["expect_order"]
    else:
        assert got[0] == v["expect_first"]
