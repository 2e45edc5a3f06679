"""policy_options.json, component cpumanager: option parsing and feature gates."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.cpumanager.options import option_available, parse_options

from .vectors import vectors


def _cpumanager(v):
    return v.get("component") == "cpumanager"


@pytest.mark.parametrize("v", vectors("policy_options.json", select=_cpumanager))
def test_cpumanager_options(v):
    op = v["op"]
    if op == "option_available":
        assert option_available(v["option"], v.get("feature_gates")) is v["expect"]
        return
    assert op == "parse_options", f"unknown op {op}"
    expect = v["expect"]
    if "error" in expect:
        with pytest.raises(InputError) as err:
            parse_options(v.get("options"), v.get("feature_gates"))
        if isinstance(expect["error"], str):
            assert expect["error"] in str(err.value)
        return
    got = parse_options(v.get("options"), v.get("feature_gates"))
    # Absent option = off: compare the options that are on.
    want = {k: True for k, on in expect["options"].items() if on}
    assert got.as_flags() == want
