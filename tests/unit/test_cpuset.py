"""CPUSet: the immutable id set every API speaks."""
import pickle

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.cpuset import CPUSet

ids = st.sets(st.integers(min_value=0, max_value=8191), max_size=60)


def test_parse_format_and_set_operations():
    s = CPUSet.parse("0-3,8")
    assert str(s) == "0-3,8" and len(s) == 5 and 8 in s and 4 not in s
    assert (s - CPUSet([0, 1])).to_list() == [2, 3, 8]
    assert (s | "9-10" if False else s | CPUSet.parse("9-10")).to_cpulist() == "0-3,8-10"
    assert (s & CPUSet.parse("2-9")).to_cpulist() == "2-3,8"
    assert CPUSet.parse("1-2").issubset(s) and not s.issubset(CPUSet.parse("1-2"))
    assert s.min() == 0 and s.max() == 8
    assert CPUSet.parse_mask("00000000,0000000f") == CPUSet.range(0, 4)


def test_ids_up_to_what_linux_can_have():
    s = CPUSet.parse("8188-8191")  # no 64-bit cap: every id a Linux CPU can have (limits.MAX_CPUS)
    assert len(s) == 4 and 8191 in s
    assert CPUSet.parse_mask(s.to_mask()) == s
    with pytest.raises(ValueError, match="above 8191"):
        CPUSet.parse("8190-8193")
    with pytest.raises(ValueError, match="above 8191"):
        CPUSet.parse_mask(CPUSet([8192]).to_mask())


def test_immutable_hashable_picklable():
    s = CPUSet([1, 2])
    with pytest.raises(AttributeError):
        s._bits = 0
    assert {s: 1}[CPUSet.parse("1-2")] == 1
    assert pickle.loads(pickle.dumps(s)) == s


@pytest.mark.parametrize("bad", ["3-1", "x", "1,,2", "-1", "1-"])
def test_bad_cpulists_raise_value_error(bad):
    with pytest.raises(ValueError):
        CPUSet.parse(bad)


def test_empty_set():
    e = CPUSet()
    assert str(e) == "" and len(e) == 0 and not e and CPUSet.parse("") == e
    with pytest.raises(ValueError):
        e.min()


@settings(max_examples=200)
@given(ids, ids)
def test_matches_python_sets(a, b):
    x, y = CPUSet(a), CPUSet(b)
    assert (x | y).to_list() == sorted(a | b)
    assert (x & y).to_list() == sorted(a & b)
    assert (x - y).to_list() == sorted(a - b)
    assert x.issubset(y) == a.issubset(b)
    assert CPUSet.parse(x.to_cpulist()) == x
    assert len(x) == len(a)
