"""The v1 / v2 writers, read-back comparison, plans and the oom_score_adj range (no I/O)."""
from __future__ import annotations

import pytest

from pynuma.apply.files import V1Writer, V2Writer, parse_controllers, same_value, writer_for
from pynuma.apply.oom import validate
from pynuma.apply.plan import MKDIR, WRITE, Plan, Step
from pynuma.errors import InputError
from pynuma.policy.cgroupconfig.config import ResourceConfig
from pynuma.policy.cgroupconfig.conversions import shares_to_weight
from pynuma.policy.cgroupconfig.qos import UNBOUNDED_HUGETLB

MI = 1 << 20
FULL = ResourceConfig(cpu_shares=1024, cpu_quota=50000, cpu_period=100000, memory=512 * MI,
                      hugepage_limits={2 * MI: 4 * MI, 1 << 30: 0}, pids_limit=100, cpuset_cpus="1-2",
                      cpuset_mems="0")


def _by_name(settings):
    return {s.name: s for s in settings}


def test_v1_files_and_order():
    got = V1Writer().settings(FULL)
    names = [s.name for s in got]
    assert names.index("cpuset.mems") < names.index("cpuset.cpus")
    assert names.index("cpu.cfs_period_us") < names.index("cpu.cfs_quota_us")
    by = _by_name(got)
    assert by["cpu.shares"].value == "1024" and by["cpu.cfs_quota_us"].value == "50000"
    assert by["memory.limit_in_bytes"].value == str(512 * MI) and by["pids.max"].value == "100"
    assert by["hugetlb.2MB.limit_in_bytes"].value == str(4 * MI) and not by["hugetlb.2MB.limit_in_bytes"].optional
    assert by["hugetlb.1GB.limit_in_bytes"].optional
    assert {s.controller for s in got} == {"cpuset", "cpu", "memory", "pids", "hugetlb"}


def test_v2_files_convert_shares_and_quota():
    by = _by_name(V2Writer().settings(FULL.with_unified({"memory.min": "5", "cgroup.freeze": "0"})))
    assert by["cpu.weight"].value == str(shares_to_weight(1024))
    assert by["cpu.max"].value == "50000 100000"
    assert by["memory.max"].value == str(512 * MI) and by["hugetlb.2MB.max"].value == str(4 * MI)
    assert by["memory.min"].controller == "memory" and by["cgroup.freeze"].controller is None


@pytest.mark.parametrize("cfg, v2, v1", [
    (ResourceConfig(cpu_quota=-1, cpu_period=100000), "max 100000", "-1"),
    (ResourceConfig(cpu_period=5000), "max 5000", None),
    (ResourceConfig(cpu_quota=2000), "2000 100000", "2000"),
])
def test_unlimited_and_partial_cpu_limits(cfg, v2, v1):
    assert _by_name(V2Writer().settings(cfg))["cpu.max"].value == v2
    got = _by_name(V1Writer().settings(cfg)).get("cpu.cfs_quota_us")
    assert (got.value if got else None) == v1


def test_zero_memory_and_pids_mean_unset_and_minus_one_means_max():
    assert V2Writer().settings(ResourceConfig(memory=0, pids_limit=0)) == []
    by = _by_name(V2Writer().settings(ResourceConfig(memory=-1, pids_limit=-1)))
    assert by["memory.max"].value == "max" and by["pids.max"].value == "max"
    assert _by_name(V1Writer().settings(ResourceConfig(memory=-1)))["memory.limit_in_bytes"].value == "-1"


def test_unbounded_tier_hugetlb_is_optional():
    s = V2Writer().settings(ResourceConfig(hugepage_limits={2 * MI: UNBOUNDED_HUGETLB}))[0]
    assert s.optional and s.value == str(UNBOUNDED_HUGETLB)


def test_writer_for_picks_by_version():
    assert writer_for(2).version == 2 and writer_for(1).version == 1


@pytest.mark.parametrize("name, current, desired, same", [
    ("cpuset.cpus", "0-3\n", "0,1,2,3", True),
    ("cpuset.cpus", "0-2\n", "0-3", False),
    ("cpuset.mems", "\n", "0", False),
    ("cpu.max", "max 100000\n", "max 100000", True),
    ("memory.limit_in_bytes", "9223372036854771712\n", "-1", True),
    ("memory.max", "max\n", "-1", True),
    ("memory.max", "1073741824\n", "1073741824", True),
    ("memory.max", "1073741824\n", "1073741900", True),   # the kernel keeps whole pages
    ("memory.max", "1073741824\n", "1073745920", False),
    ("cpu.weight", "100\n", "4", False),
    ("cpu.weight", None, "4", False),
    ("pids.max", "max\n", "max", True),
])
def test_same_value(name, current, desired, same):
    assert same_value(name, current, desired) is same


def test_parse_controllers_reads_both_kernel_and_written_forms():
    assert parse_controllers("cpu memory pids\n") == ("cpu", "memory", "pids")
    assert parse_controllers("+cpu +memory") == ("cpu", "memory")
    assert parse_controllers(None) == ()


def test_plan_describes_and_serialises_every_step():
    plan = Plan((Step(MKDIR, "/sys/fs/cgroup/a"), Step(WRITE, "/sys/fs/cgroup/a/cpu.weight", "4", "4\n", False),
                 Step(WRITE, "/sys/fs/cgroup/a/memory.max", "10", "max\n", True, "memory limit")),
                ("a note",), "/tmp/root")
    lines = plan.describe().splitlines()
    assert lines == ["mkdir /tmp/root/sys/fs/cgroup/a",
                     "write /tmp/root/sys/fs/cgroup/a/cpu.weight 4  (unchanged)",
                     "write /tmp/root/sys/fs/cgroup/a/memory.max 10  (now max; memory limit)",
                     "note: a note"]
    assert len(plan.changes) == 2 and plan.to_dict()["changes"] == 2
    assert plan.to_dict()["steps"][1]["current"] == "4"


@pytest.mark.parametrize("value, want", [("-1000", -1000), ("1000", 1000), ("0", 0), (" 5 ", 5), (-3, -3),
                                         ("+7", 7)])
def test_oom_score_adj_range_accepts(value, want):
    assert validate(value) == want


@pytest.mark.parametrize("value", ["-1001", "1001", "abc", "", "1e3", "--5", "5-", True, 2.0, "１２"])
def test_oom_score_adj_range_refuses(value):
    with pytest.raises(InputError, match="oom_score_adj"):
        validate(value)
