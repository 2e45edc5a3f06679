"""policy_options.json, component topologymanager: option parsing, availability, NewManager."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.topologymanager.numa_info import NUMAInfo
from pynuma.policy.topologymanager.manager import TopologyManager, option_available, parse_options

from .vectors import vectors


def _expect_error(v, fn):
    with pytest.raises(InputError) as err:
        fn()
    if v["expect"]["error"] is not True:
        assert v["expect"]["error"] in str(err.value)


@pytest.mark.parametrize("v", vectors("policy_options.json", select=lambda v: v.get("component") == "topologymanager"))
def test_topologymanager_options(v):
    op = v["op"]
    if op == "parse_options":
        call = lambda: parse_options(v.get("options"), v.get("feature_gates"))  # noqa: E731
        if "error" in v["expect"]:
            _expect_error(v, call)
        else:
            opts = call()
            assert opts.prefer_closest_numa == v["expect"]["prefer_closest_numa"]
            assert opts.max_allowable_numa_nodes == v["expect"]["max_allowable_numa_nodes"]
    elif op == "option_available":
        assert option_available(v["option"], v.get("feature_gates")) == v["expect"]
    elif op == "new_manager":
        nodes = v["numa_nodes"]
        matrix = None if v.get("distances_available") is False else [
            [10 if i == j else 20 for j in range(len(nodes))] for i in range(len(nodes))]
        info = NUMAInfo.from_matrix(nodes, matrix)
        call = lambda: TopologyManager.create(info, v["policy"], v["scope"], v.get("options"), v.get("feature_gates"))  # noqa: E731
        if "error" in v["expect"]:
            _expect_error(v, call)
        else:
            tm = call()
            if "policy" in v["expect"]:
                assert tm.policy.name == v["expect"]["policy"]
            if "scope" in v["expect"]:
                assert tm.scope == v["expect"]["scope"]
    else:
        raise AssertionError(op)
