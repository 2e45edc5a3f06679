"""CPUState: the shared pool and assignments the CPU Manager keeps."""
from __future__ import annotations

from pynuma.cpuset import CPUSet
from pynuma.policy.cpumanager.state import CPUState


def test_set_get_delete_and_union():
    s = CPUState(CPUSet.parse("0-3"))
    s.set("p", "a", CPUSet([4, 5]))
    s.set("p", "b", CPUSet([6]))
    s.set("q", "c", CPUSet([7]))
    assert s.assigned() == CPUSet.parse("4-7") and s.get("p", "b") == CPUSet([6])
    s.delete("p", "a")
    s.delete("p", "b")
    assert "p" not in s.assignments and s.get("p", "a") is None
    s.delete("nobody", "x")  # deleting what is not there is a no-op


def test_copy_is_independent():
    s = CPUState(CPUSet([0]), {"p": {"a": CPUSet([1])}})
    c = s.copy()
    c.set("p", "b", CPUSet([2]))
    c.default = CPUSet()
    assert s.get("p", "b") is None and s.default == CPUSet([0])
