"""pynuma.parse: strict pure parsers (text -> value or ValueError)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma import parse
from pynuma.cpuset import CPUSet


@pytest.mark.parametrize("text, value", [("3\n", 3), ("-1\n", -1), ("65536", 65536), ("0\n\x00", 0), (" 7 ", 7)])
def test_parse_int(text, value):
    assert parse.parse_int(text) == value


@pytest.mark.parametrize("text", ["", "\n", "x", "1.5", "0x10", "--1", "1 2", "٣"])
def test_parse_int_rejects(text):
    with pytest.raises(ValueError):
        parse.parse_int(text)


@pytest.mark.parametrize("text", ["3-1", "x", "1,,2", "-", "0-"])
def test_cpulist_rejects(text):
    with pytest.raises(ValueError):
        parse.parse_cpulist(text)


def test_cpulist_and_mask_with_stray_bytes():
    assert parse.parse_cpulist("0-3,8\n\x00") == CPUSet([0, 1, 2, 3, 8])
    assert parse.parse_cpumask("0000,00000fff\n\x00") == CPUSet(range(12))


@pytest.mark.parametrize("text, size", [("32K\n", 32768), ("8192K", 8 << 20), ("1M", 1 << 20), ("2G", 2 << 30),
                                        ("512", 512), ("64k", 65536)])
def test_cache_size(text, size):
    assert parse.parse_cache_size(text) == size


@pytest.mark.parametrize("text", ["", "K", "12Q", "1.5M", "lots"])
def test_cache_size_rejects(text):
    with pytest.raises(ValueError):
        parse.parse_cache_size(text)


def test_cache_type():
    assert parse.parse_cache_type("Data\n") == "Data"
    assert parse.parse_cache_type("unified") == "Unified"
    with pytest.raises(ValueError):
        parse.parse_cache_type("Tertiary")


def test_distance_row():
    assert parse.parse_distance_row("10 21 31\n") == (10, 21, 31)
    for bad in ("", "10 x", "10 -1"):
        with pytest.raises(ValueError):
            parse.parse_distance_row(bad)


NODE_MEMINFO = """Node 2 MemTotal:       16777216 kB
Node 2 MemFree:        1024 kB
Node 2 HugePages_Total:     3
"""


def test_meminfo_node_and_proc():
    info = parse.parse_meminfo(NODE_MEMINFO)
    assert info == {"MemTotal": 16777216 * 1024, "MemFree": 1024 * 1024, "HugePages_Total": 3}
    assert parse.parse_meminfo("MemTotal:  400016779264 kB\n")["MemTotal"] == 400016779264 * 1024


@pytest.mark.parametrize("text", ["", "Node 2 MemTot", "MemFree: 1 kB\n", "MemTotal: x kB", "MemTotal: 1 MB",
                                  "Node 2 X Y: 1 kB\nMemTotal: 1 kB"])
def test_meminfo_rejects(text):
    with pytest.raises(ValueError):
        parse.parse_meminfo(text)


def test_prefixed_ids():
    assert parse.parse_prefixed_id("cpu12", "cpu") == 12
    for name in ("cpufreq", "cpu", "cpu01", "cpu1a", "node3"):
        assert parse.parse_prefixed_id(name, "cpu") is None
    assert parse.parse_hugepage_dirname("hugepages-2048kB") == 2048
    assert parse.parse_hugepage_dirname("hugepages-16777216kB") == 16777216
    assert parse.parse_hugepage_dirname("hugepages-xkB") is None
    assert parse.parse_hugepage_dirname("power") is None


def test_mounts_unescape_and_skip_short_lines():
    text = "cgroup /sys/fs/cgroup/my\\040cpuset cgroup rw,cpuset 0 0\nbroken\nnone /u cgroup2 rw 0 0\n"
    mounts = parse.parse_mounts(text)
    assert mounts[0] == ("cgroup", "/sys/fs/cgroup/my cpuset", "cgroup", ("rw", "cpuset"))
    assert mounts[1][1:3] == ("/u", "cgroup2") and len(mounts) == 2


def test_proc_cgroup():
    lines = parse.parse_proc_cgroup("3:cpuset,cpu:/a\n0::/b\n")
    assert lines == [("3", ("cpuset", "cpu"), "/a"), ("0", (), "/b")]
    with pytest.raises(ValueError):
        parse.parse_proc_cgroup("garbage\n")


def test_cgroup_path():
    assert parse.parse_cgroup_path("/uid_2008/job\n") == "/uid_2008/job"
    with pytest.raises(ValueError):
        parse.parse_cgroup_path("relative")


@settings(max_examples=200)
@given(st.lists(st.integers(min_value=0, max_value=10**6), max_size=30))
def test_distance_row_round_trip(values):
    text = " ".join(map(str, values)) + "\n"
    if values:
        assert parse.parse_distance_row(text) == tuple(values)
    else:
        with pytest.raises(ValueError):
            parse.parse_distance_row(text)


@settings(max_examples=200)
@given(st.dictionaries(st.from_regex(r"[A-Za-z_()]{1,12}", fullmatch=True), st.integers(0, 2**50), max_size=8),
       st.integers(0, 2**50), st.one_of(st.none(), st.integers(0, 4096)))
def test_meminfo_round_trip(extra, total, node):
    prefix = "" if node is None else f"Node {node} "
    fields = dict(extra, MemTotal=total)
    text = "".join(f"{prefix}{k}: {v} kB\n" for k, v in fields.items())
    assert parse.parse_meminfo(text) == {k: v * 1024 for k, v in fields.items()}


@settings(max_examples=200)
@given(st.integers(0, 2**40), st.sampled_from(["", "K", "M", "G"]))
def test_cache_size_property(n, unit):
    assert parse.parse_cache_size(f"{n}{unit}\n") == n * {"": 1, "K": 1024, "M": 1 << 20, "G": 1 << 30}[unit]
