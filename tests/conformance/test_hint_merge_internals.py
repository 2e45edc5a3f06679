"""hint_merge_internals.json: compare step, max-of-min counts, single-numa-node filter."""
from __future__ import annotations

import pytest

from pynuma.policy.hints import TopologyHint
from pynuma.policy.numa_info import NUMAInfo
from pynuma.policy.topology_merge import HintMerger, filter_single_numa_hints, max_of_min_affinity_counts

from .vectors import vectors


def _h(raw):
    return None if raw is None else TopologyHint.from_json(raw)


def _lists(raw):
    return [[TopologyHint.from_json(h) for h in lst] for lst in raw]


@pytest.mark.parametrize("v", vectors("hint_merge_internals.json"))
def test_internals(v):
    op = v["op"]
    if op == "compare":
        info = NUMAInfo.from_matrix(range(8), None)
        merger = HintMerger(info, [], v["policy"], bool(v.get("options", {}).get("prefer-closest-numa-nodes")))
        merger.best_non_preferred_count = v["best_non_preferred_affinity_count"]
        cur, cand = _h(v["current"]), _h(v["candidate"])
        got = merger.compare(cur, cand)
        want = cur if v["expect"] == "current" else cand
        assert got is want
    elif op == "max_of_min_affinity_counts":
        assert max_of_min_affinity_counts(_lists(v["hints"])) == v["expect"]
    elif op == "filter_single_numa_hints":
        got = filter_single_numa_hints(_lists(v["hints"]))
        assert [[h.to_json() for h in lst] for lst in got] == v["expect"]
    else:
        raise AssertionError(op)
