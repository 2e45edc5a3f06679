"""hint_merge.json: Topology Manager merge and admission, on the native and pure merge cores.

Every vector is also checked against the literal exhaustive fold, with the
resources of each provider in reverse order (Go map order is unspecified),
and, for TestAdmit vectors, through the manager in both scopes.
"""
from __future__ import annotations

import pytest

from pynuma import _impl
from pynuma.pod import Container, Pod
from pynuma.policy.topologymanager.hints import provider_hints_from_json
from pynuma.policy.topologymanager.numa_info import NUMAInfo
from pynuma.policy.topologymanager.manager import TopologyManager
from pynuma.policy.topologymanager.merge import HintMerger, filter_providers_hints, filter_single_numa_hints
from pynuma.policy.topologymanager.policies import make_policy

from .vectors import vectors


def _setup(v):
    info = NUMAInfo.from_matrix(v["numa_nodes"], v["distances"])
    providers = [provider_hints_from_json(p) for p in v["providers"]]
    closest = bool((v.get("options") or {}).get("prefer-closest-numa-nodes"))
    return info, providers, closest


def _check(v, hint, admit):
    assert admit == v["admit"]
    if v["expect"] is not None:
        assert hint.to_json() == v["expect"]


@pytest.mark.parametrize("v", vectors("hint_merge.json"))
def test_merge(v, backend, monkeypatch):
    monkeypatch.setitem(_impl._chosen, "merge", backend("merge"))
    info, providers, closest = _setup(v)
    policy = make_policy(v["policy"], info, closest)
    _check(v, *policy.merge(providers))
    reversed_order = [None if p is None else dict(reversed(list(p.items()))) for p in providers]
    _check(v, *policy.merge(reversed_order))


@pytest.mark.parametrize("v", vectors("hint_merge.json"))
def test_merge_matches_exhaustive_fold(v):
    info, providers, closest = _setup(v)
    if v["policy"] == "none":
        return
    lists = filter_providers_hints(providers)
    if v["policy"] == "single-numa-node":
        lists = filter_single_numa_hints(lists)
    merger = HintMerger(info, lists, v["policy"], closest)
    assert merger.merge() == merger.merge_exhaustive()


class _Fixed:
    def __init__(self, answer):
        self.answer = answer

    def hints(self, pod, container):
        return self.answer

    def pod_hints(self, pod):
        return self.answer


@pytest.mark.parametrize("v", vectors("hint_merge.json", select=lambda v: "scopes" in v))
def test_admit_through_manager(v):
    info, providers, closest = _setup(v)
    pod = Pod(name="p", uid="p", containers=(Container("c"),))
    for scope in v["scopes"]:
        options = {"prefer-closest-numa-nodes": "true"} if closest else {}
        tm = TopologyManager.create(info, v["policy"], scope, options)
        result = tm.admit(pod, [_Fixed(p) for p in providers])
        assert result.admit == v["admit"]
        if not result.admit:
            assert result.reason == "TopologyAffinityError"
