"""Topology Manager policies: merge + admission rule per policy."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.topologymanager.hints import TopologyHint
from pynuma.policy.topologymanager.numa_info import NUMAInfo
from pynuma.policy.topologymanager.policies import POLICIES, TopologyAffinityError, make_policy

INFO = NUMAInfo.from_matrix([0, 1], [[10, 20], [20, 10]])


def H(nodes, pref=True):
    return TopologyHint.of(nodes, pref)


UNALIGNED = [{"cpu": [H([0]), H([0, 1], False)]}, {"mem": [H([1]), H([0, 1], False)]}]
ALIGNED = [{"cpu": [H([1]), H([0, 1], False)]}, {"mem": [H([1])]}]


@pytest.mark.parametrize("name,admit_unaligned", [("none", True), ("best-effort", True), ("restricted", False),
                                                  ("single-numa-node", False)])
def test_admission_rule(name, admit_unaligned):
    pol = make_policy(name, INFO)
    assert pol.merge(UNALIGNED)[1] is admit_unaligned
    assert pol.merge(ALIGNED)[1] is True


def test_none_policy_gives_no_affinity():
    assert make_policy("none", INFO).merge(ALIGNED) == (TopologyHint(None, False), True)


def test_best_effort_and_restricted_give_the_same_hint():
    a = make_policy("best-effort", INFO).merge(UNALIGNED)[0]
    b = make_policy("restricted", INFO).merge(UNALIGNED)[0]
    assert a == b == H([0], False)


def test_single_numa_node_reports_all_nodes_as_no_affinity():
    pol = make_policy("single-numa-node", INFO)
    assert pol.merge([{"cpu": None}]) == (TopologyHint(None, True), True)
    assert pol.merge([{"cpu": [H([0, 1])]}]) == (TopologyHint(None, False), False)


def test_no_placement_is_not_no_preference():
    pol = make_policy("restricted", INFO)
    assert pol.merge([{"cpu": None}])[1] is True  # no preference: admitted anywhere
    assert pol.merge([{"cpu": []}])[1] is False  # no possible placement: rejected


def test_unknown_policy_is_input_error():
    with pytest.raises(InputError, match='unknown policy: "x"'):
        make_policy("x", INFO)
    assert set(POLICIES) == {"none", "best-effort", "restricted", "single-numa-node"}


def test_affinity_error_carries_the_kubelet_reason():
    err = TopologyAffinityError()
    assert err.reason == "TopologyAffinityError" and err.exit_code == 1
