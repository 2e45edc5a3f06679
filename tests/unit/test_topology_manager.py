"""Topology Manager: options, feature gates, creation checks, container and pod scopes."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.pod import Container, Pod
from pynuma.policy.topologymanager.hints import TopologyHint
from pynuma.policy.topologymanager.numa_info import NUMAInfo
from pynuma.policy.topologymanager.manager import TopologyManager, option_available, parse_options

INFO = NUMAInfo.from_matrix([0, 1], [[10, 20], [20, 10]])


def test_defaults():
    o = parse_options(None)
    assert (o.prefer_closest_numa, o.max_allowable_numa_nodes) == (False, 8)


@pytest.mark.parametrize("opts,needle", [
    ({"prefer-closest-numa-nodes": "maybe"}, 'bad value for option "prefer-closest-numa-nodes"'),
    ({"max-allowable-numa-nodes": "7"}, "should not be less than 8"),
    ({"max-allowable-numa-nodes": "x"}, "unable to convert policy option to integer"),
    ({"nope": "1"}, 'unknown Topology Manager Policy option: "nope"'),
])
def test_bad_options(opts, needle):
    with pytest.raises(InputError, match=needle):
        parse_options(opts)


def test_beta_gate_controls_max_allowable():
    assert option_available("max-allowable-numa-nodes")
    assert not option_available("max-allowable-numa-nodes", {"TopologyManagerPolicyBetaOptions": False})
    with pytest.raises(InputError, match="beta-level options not enabled"):
        parse_options({"max-allowable-numa-nodes": "16"}, {"TopologyManagerPolicyBetaOptions": False})
    assert option_available("prefer-closest-numa-nodes", {"TopologyManagerPolicyBetaOptions": False})


def test_go_booleans():
    for text, want in (("1", True), ("T", True), ("False", False), ("0", False)):
        assert parse_options({"prefer-closest-numa-nodes": text}).prefer_closest_numa is want


def test_node_limit_and_none_policy():
    big = NUMAInfo.from_matrix(range(9), None)
    with pytest.raises(InputError, match="more than 8 NUMA Nodes"):
        TopologyManager.create(big, "restricted")
    assert TopologyManager.create(big, "none").policy.name == "none"
    assert TopologyManager.create(big, "restricted", options={"max-allowable-numa-nodes": "9"})


def test_prefer_closest_needs_distances():
    with pytest.raises(InputError, match="NUMA distances"):
        TopologyManager.create(NUMAInfo.from_matrix([0, 1], None), "best-effort",
                               options={"prefer-closest-numa-nodes": "true"})


class Recorder:
    def __init__(self, per_container):
        self.per_container = per_container
        self.calls = []

    def hints(self, pod, container):
        self.calls.append(("container", container.name))
        return self.per_container.get(container.name)

    def pod_hints(self, pod):
        self.calls.append(("pod", None))
        return {"cpu": [TopologyHint.of([1], True)]}


POD = Pod(name="p", uid="p", init_containers=(Container("i"),), containers=(Container("a"), Container("b")))


def test_container_scope_merges_each_container_and_stops_at_the_first_rejection():
    prov = Recorder({"i": None, "a": {"cpu": [TopologyHint.of([0, 1], False)]}, "b": None})
    allocated = []
    res = TopologyManager.create(INFO, "restricted").admit(POD, [prov], lambda c, h: allocated.append(c.name))
    assert not res.admit and res.reason == "TopologyAffinityError"
    assert [c for _, c in prov.calls] == ["i", "a"] and allocated == ["i"]


def test_pod_scope_merges_once_and_gives_every_container_the_hint():
    prov = Recorder({})
    got = []
    res = TopologyManager.create(INFO, "restricted", "pod").admit(POD, [prov], lambda c, h: got.append((c.name, h)))
    assert res.admit and prov.calls == [("pod", None)]
    assert got == [(n, TopologyHint.of([1], True)) for n in ("i", "a", "b")]
    assert res.hint_for("a") == TopologyHint.of([1], True)


def test_none_policy_admits_without_asking_providers():
    prov = Recorder({})
    res = TopologyManager.create(INFO, "none").admit(POD, [prov])
    assert res.admit and prov.calls == []
