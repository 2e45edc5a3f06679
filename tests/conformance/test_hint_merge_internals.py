"""hint_merge_internals.json: compare step, max-of-min counts, single-numa-node filter."""
from __future__ import annotations

import pytest

from pynuma.policy.topologymanager.hints import TopologyHint
from pynuma.policy.topologymanager.numa_info import NUMAInfo
from pynuma.policy.topologymanager.merge import HintMerger, filter_single_numa_hints, max_of_min_affinity_counts

from .vectors import vectors


def _h(raw):
    return None if raw is None else TopologyHint.from_json(raw)


def _lists(raw):
    return [[TopologyHint.from_json(h) for h in lst] for lst in raw]


@pytest.mark.parametrize("v", vectors("hint_merge_internals.json"))
def test_internals(v):
    op = v["op"]
    if op == "compare":
        # Distances matter only with prefer-closest-numa-nodes; use the vector's when it gives them.
        nodes = v.get("numa_nodes") or (range(len(v["distances"])) if v.get("distances") else range(8))
        info = NUMAInfo.from_matrix(nodes, v.get("distances"))
        closest = bool((v.get("options") or {}).get("prefer-closest-numa-nodes"))
        merger = HintMerger(info, [], v["policy"], closest)
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
