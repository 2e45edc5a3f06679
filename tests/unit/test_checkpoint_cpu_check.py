"""state check: every kind of mismatch is named, the proposed fix satisfies the kubelet's Start."""
from __future__ import annotations

from pynuma.cpuset import CPUSet
from pynuma.policy.cpumanager.static_policy import CPUState, NonePolicy, StaticPolicy
from pynuma.state.cpu_check import check_cpu_state

from .cpu_fixtures import DUAL_NODE_HT

ALL = DUAL_NODE_HT.cpus()  # 0-11


def codes(report):
    return sorted({f.code for f in report.findings})


def test_consistent_state_is_ok():
    policy = StaticPolicy(DUAL_NODE_HT, num_reserved=1)
    state = CPUState(ALL - CPUSet([4, 5]), {"p": {"c": CPUSet([4, 5])}})
    report = check_cpu_state("static", state, policy)
    assert report.ok and report.findings == [] and report.kubelet_error is None


def test_every_problem_is_named_and_fixed():
    policy = StaticPolicy(DUAL_NODE_HT, num_reserved=1)  # reserved: CPU 0
    state = CPUState(CPUSet.parse("2-3,20"), {"a": {"x": CPUSet.parse("0,4-5")}, "b": {"y": CPUSet.parse("5-6,30")},
                                              "c": {"z": CPUSet([3])}})
    report = check_cpu_state("static", state, policy)
    assert codes(report) == ["missing-cpus", "overlap", "overlap-default", "reserved", "unknown-cpus"]
    messages = " | ".join(f.message for f in report.findings)
    assert "CPUs 20" in messages and "CPUs 30" in messages and "already assigned to pod a container x" in messages
    assert report.kubelet_error and "not all reserved cpus" in report.kubelet_error
    fixed = report.fixed
    assert fixed.get("a", "x") == CPUSet([4, 5]) and fixed.get("b", "y") == CPUSet([6])
    assert fixed.get("c", "z") == CPUSet([3])
    assert policy.validate(fixed.copy()) is None  # the kubelet would start on the fixed state


def test_strict_reservation_and_policy_change():
    strict = StaticPolicy(DUAL_NODE_HT, num_reserved=2, options={"strict-cpu-reservation": True})
    report = check_cpu_state("static", CPUState(ALL), strict)
    assert codes(report) == ["reserved"] and strict.validate(report.fixed.copy()) is None
    assert report.fixed.default == ALL - strict.reserved
    to_none = check_cpu_state("static", CPUState(ALL - CPUSet([1]), {"p": {"c": CPUSet([1])}}),
                              NonePolicy(DUAL_NODE_HT))
    assert codes(to_none) == ["entries", "policy"] and "differs from state checkpoint" in to_none.kubelet_error
    assert to_none.fixed.default == CPUSet() and not to_none.fixed.assignments


def test_everything_assigned_cannot_be_fixed():
    policy = StaticPolicy(DUAL_NODE_HT)
    report = check_cpu_state("static", CPUState(CPUSet(), {"p": {"c": ALL}}), policy)
    assert "empty-default" in codes(report) and report.fixed is None and report.unfixable
