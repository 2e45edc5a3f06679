"""Topology Manager creation with policy "none" short-circuits as the kubelet's NewManager does.

Built as tests/conformance/test_policy_options_topologymanager.py builds a ``new_manager`` vector.
Upstream (pkg/kubelet/cm/topologymanager/topology_manager.go): ``if topologyPolicyName == PolicyNone
{ return &manager{scope: NewNoneScope()}, nil }`` before options, NUMA discovery, node count and
scope name; the none scope is named "none".
"""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.topologymanager.manager import TopologyManager
from pynuma.policy.topologymanager.numa_info import NUMAInfo


def _create(policy, scope, options, nodes, distances=True, gates=None):
    matrix = [[10 if i == j else 20 for j in range(len(nodes))] for i in range(len(nodes))] if distances else None
    return TopologyManager.create(NUMAInfo.from_matrix(nodes, matrix), policy, scope, options, gates)


@pytest.mark.parametrize("scope, options, nodes, distances", [
    ("container", {}, [0], True),
    ("unknown", {}, [0], True),
    ("container", {"unknown-option": "true"}, [0], True),
    ("pod", {"max-allowable-numa-nodes": "x"}, [0], True),
    ("container", {"prefer-closest-numa-nodes": "true"}, [0, 1], False),
    ("container", {}, list(range(9)), True),
    ("", None, [], True),
])
def test_policy_none_skips_every_check(scope, options, nodes, distances):
    tm = _create("none", scope, options, nodes, distances)
    assert tm.policy.name == "none" and tm.scope == "none"


def test_other_policies_still_check_in_upstream_order():
    with pytest.raises(InputError, match='unknown Topology Manager Policy option: "unknown-option"'):
        _create("best-effort", "unknown", {"unknown-option": "true"}, list(range(9)))
    with pytest.raises(InputError, match="unsupported on machines with more than 8 NUMA Nodes"):
        _create("restricted", "unknown", {}, list(range(9)))
    with pytest.raises(InputError, match='unknown policy: "bogus"'):
        _create("bogus", "unknown", {}, [0])
    with pytest.raises(InputError, match='unknown scope: "unknown"'):
        _create("best-effort", "unknown", {}, [0])
    assert _create("single-numa-node", "pod", {}, [0]).scope == "pod"


def test_prefer_closest_needs_distances_only_of_the_nodes_there_are():
    # NewNUMAInfo checks each node's distances: a machine without nodes has none missing
    assert _create("best-effort", "container", {"prefer-closest-numa-nodes": "true"}, [], distances=False).scope \
        == "container"
    with pytest.raises(InputError, match="error getting NUMA distances"):
        _create("best-effort", "container", {"prefer-closest-numa-nodes": "true"}, [0, 1], distances=False)
