"""``pynuma.processes`` and ``pynuma procs`` on a fake two-node machine's /proc.

Node 0 holds CPUs 0-1, node 1 CPUs 2-3 (and node 2, when present, only
memory).  Expected bytes are pages times page size written out per case.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pynuma import processes
from pynuma.cpuset import CPUSet
from pynuma.errors import InputError
from tests.fixtures.proc_builder import maps_line, put_process
from tests.fixtures.sysfs_builder import Machine

PROJECT = Path(__file__).resolve().parents[2]
KB = 1024
MB = 1024 * KB


@pytest.fixture
def dump(tmp_path):
    root = Machine(packages=2, nodes_per_package=1, cores_per_node=2).write(tmp_path)
    put_process(root, 100, "local", numa_maps=maps_line(0x1000, "default", {0: 256}),
                threads=[(100, 1, "0-1")], vmrss_kb=1024, utime=300, stime=100)
    put_process(root, 101, "misplaced", numa_maps=maps_line(0x1000, "default", {0: 64, 1: 192}),
                threads=[(101, 0, "0-1"), (120, 1, "0-1")], utime=50)
    put_process(root, 102, "hugeuser",
                numa_maps=maps_line(0x1000, "bind:0", {0: 2}, page_kb=2048, huge=True)
                + maps_line(0x9000, "bind:0", {1: 256}) + maps_line(0xa000, "default", {1: 1}),
                threads=[(102, 3, "2-3")], utime=5000)
    put_process(root, 103, "spread", numa_maps=maps_line(0x1000, "default", {1: 10}),
                threads=[(103, 0, "0-1"), (130, 2, "2")])
    put_process(root, 104, "kworker/0:1", numa_maps="", threads=[(104, 0, "0")], kernel_thread=True)
    put_process(root, 105, "averyveryverylo", cmdline=["/opt/bin/averyveryverylongname", "--flag"],
                numa_maps=maps_line(0x1000, "interleave:0-1", {0: 1, 1: 1}))
    put_process(root, 106, "other", uid=1000, numa_maps=maps_line(0x1000, "default", {0: 4}))
    return root


def by_pid(listing):
    return {p.pid: p for p in listing}


def test_memory_cpus_and_remote_share(dump):
    found = processes(root=dump)
    procs = by_pid(found)
    assert sorted(procs) == [100, 101, 102, 103, 105, 106]
    local, misplaced, huge, spread = procs[100], procs[101], procs[102], procs[103]
    assert dict(local.memory_by_node) == {0: 256 * 4 * KB}
    assert (local.remote_bytes, local.remote_share) == (0, 0.0)
    assert local.cpus_allowed == CPUSet.parse("0-1") and local.cpu_nodes == CPUSet([0])
    assert local.running_cpus == CPUSet([1]) and local.running_nodes == CPUSet([0])
    assert local.rss_bytes == 1024 * KB and local.cpu_seconds == pytest.approx(4.0)
    assert dict(misplaced.memory_by_node) == {0: 64 * 4 * KB, 1: 192 * 4 * KB}
    assert misplaced.remote_bytes == 192 * 4 * KB and misplaced.remote_share == pytest.approx(0.75)
    assert misplaced.threads == 2
    # 2 MiB pages count as 2 MiB each: 4 MiB on node 0, which none of its CPUs (2-3) is on
    assert dict(huge.memory_by_node) == {0: 4 * MB, 1: 257 * 4 * KB}
    assert huge.cpu_nodes == CPUSet([1])
    assert huge.remote_share == pytest.approx(4 * MB / (4 * MB + 257 * 4 * KB))
    assert str(huge.policy) == "bind:0"
    # a thread allowed on node 1 makes node 1 local for the whole process
    assert spread.cpus_allowed == CPUSet.parse("0-2") and spread.cpu_nodes == CPUSet([0, 1])
    assert spread.running_nodes == CPUSet([0, 1]) and spread.remote_share == 0.0
    assert procs[105].name == "averyveryverylongname" and procs[105].cmdline == ("/opt/bin/averyveryverylongname", "--flag")
    assert str(procs[105].policy) == "interleave:0-1"
    # a dump has no user database: users are uids
    assert (procs[106].user, procs[106].uid) == ("1000", 1000)
    assert found.kernel_threads == 1 and found.vanished == 0 and found.denied == 0 and found.warnings == ()


def test_kernel_threads_on_request(dump):
    procs = by_pid(processes(root=dump, kernel_threads=True))
    assert procs[104].kernel_thread and dict(procs[104].memory_by_node) == {}
    assert procs[104].remote_share == 0.0
    assert by_pid(processes([104], root=dump))[104].kernel_thread  # asked for by pid: always shown


@pytest.mark.parametrize("sort, order", [
    ("pid", [100, 101, 102, 103, 105, 106]),
    ("remote", [102, 101, 105, 100, 103, 106]),
    ("memory", [102, 100, 101, 103, 106, 105]),  # 100 and 101 tie: pid decides
    ("cpu", [102, 100, 101, 103, 105, 106]),
])
def test_sorting(dump, sort, order):
    assert [p.pid for p in processes(root=dump, sort=sort)] == order


def test_selection(dump):
    assert [p.pid for p in processes(root=dump, name="^(local|spread)$")] == [100, 103]
    assert [p.pid for p in processes(root=dump, name="longname")] == [105]
    assert [p.pid for p in processes(root=dump, user="1000")] == [106]
    assert [p.pid for p in processes(root=dump, user="0", name="huge")] == [102]
    found = processes([101, 999, 101], root=dump)
    assert [p.pid for p in found] == [101] and found.missing == (999,)
    with pytest.raises(InputError, match="not a regular expression"):
        processes(root=dump, name="(")
    with pytest.raises(InputError, match="process ids are positive"):
        processes([0], root=dump)
    with pytest.raises(InputError, match="unknown sort"):
        processes(root=dump, sort="size")


def test_memory_only_nodes_are_remote_to_everyone(tmp_path):
    root = Machine(packages=1, nodes_per_package=2, cores_per_node=2, memory_only_nodes=[1]).write(tmp_path)
    put_process(root, 7, "tiered", numa_maps=maps_line(0x1000, "default", {0: 3, 1: 1}), threads=[(7, 0, "0-1")])
    [p] = processes(root=root)
    assert p.cpu_nodes == CPUSet([0]) and p.remote_share == pytest.approx(0.25)


def test_old_dumps_without_task_dirs_or_numa_maps(tmp_path):
    root = Machine(packages=2, nodes_per_package=1, cores_per_node=2).write(tmp_path)
    put_process(root, 7, "old", numa_maps=maps_line(0x1000, "default", {1: 2}), threads=[])
    put_process(root, 8, "nomaps", numa_maps=None, vmrss_kb=100)
    found = processes(root=root)
    old, nomaps = found
    assert old.cpus_allowed == CPUSet.parse("0-1") and old.running_cpus == CPUSet([0])
    assert old.remote_share == 1.0
    assert dict(nomaps.memory_by_node) == {}
    assert any("numa_maps: missing; memory per node unknown" in w for w in found.warnings)


def test_a_single_node_kernel_without_numa_maps_counts_rss_on_its_node(tmp_path):
    root = Machine(cores_per_node=2).write(tmp_path)
    put_process(root, 8, "nomaps", numa_maps=None, vmrss_kb=100)
    found = processes(root=root)
    assert dict(found[0].memory_by_node) == {0: 100 * KB}
    assert any("VmRSS" in w for w in found.warnings)


def test_bad_lines_and_bad_stat_are_warnings(tmp_path):
    root = Machine(packages=2, nodes_per_package=1, cores_per_node=2).write(tmp_path)
    put_process(root, 7, "odd", numa_maps="1000 default N0=zz\n" + maps_line(0x2000, "default", {0: 1}))
    put_process(root, 8, "broken")
    (Path(root) / "proc/8/stat").write_text("garbage\n")
    found = processes(root=root)
    assert [p.pid for p in found] == [7]
    assert dict(found[0].memory_by_node) == {0: 4 * KB}
    assert any("1 line(s) not understood" in w for w in found.warnings)
    assert any("proc/8/stat: no (command)" in w for w in found.warnings)


def test_cpus_outside_the_reported_nodes_are_looked_up_in_sysfs(dump):
    from pynuma.discover import discover
    from pynuma.model import Topology

    topo = discover(dump)
    narrowed = topo.replace(numa_nodes=tuple(n.replace(cpus=n.cpus & CPUSet.parse("0-1")) for n in topo.numa_nodes))
    assert isinstance(narrowed, Topology)
    procs = by_pid(processes(root=dump, topology=narrowed))
    assert procs[102].cpu_nodes == CPUSet([1])  # CPUs 2-3: node 1 by its full cpulist


def run_cli(*args, pure=False):
    env = dict(os.environ, PYNUMA_PURE="1" if pure else "0")
    return subprocess.run([sys.executable, "-m", "pynuma", "procs", *args], capture_output=True, text=True,
                          cwd=PROJECT, env=env, timeout=120)


def test_cli_json_on_a_dump_same_on_both_paths(dump):
    native = run_cli("--all", "--json", "--root", dump, "--sort", "remote")
    assert native.returncode == 0, native.stderr
    rows = json.loads(native.stdout)
    assert [r["pid"] for r in rows] == [102, 101, 105, 100, 103, 106]
    first = rows[0]
    assert first["memory_by_node"] == {"0": 4 * MB, "1": 257 * 4 * KB}
    assert first["cpus_allowed"] == "2-3" and 0 <= first["remote_share"] <= 1
    assert {"pid", "name", "cpus_allowed", "memory_by_node", "remote_share"} <= set(first)
    pure = run_cli("--all", "--json", "--root", dump, "--sort", "remote", pure=True)
    assert pure.returncode == 0 and pure.stdout == native.stdout


def test_cli_table_and_errors(dump):
    res = run_cli("101", "--root", dump)
    assert res.returncode == 0
    header, row = res.stdout.splitlines()
    assert header.split()[:3] == ["PID", "USER", "NAME"]
    assert row.split()[:3] == ["101", "0", "misplaced"] and "75%" in row and "0:256.0K 1:768.0K" in row
    res = run_cli("101", "999", "--root", dump)
    assert res.returncode == 1 and "pid 999: no such process" in res.stderr
    for args, text in ((["--root", dump], "nothing selected"), (["--name", "(", "--root", dump], "--name '('"),
                       (["--all", "--root", str(Path(dump) / "nope")], "nope"), (["--", "-3"], "not a process id")):
        res = run_cli(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and text in res.stderr


def test_huge_mappings_without_a_stated_page_size_use_the_default_hugepage_size(tmp_path):
    root = Machine(packages=2, nodes_per_package=1, cores_per_node=2).write(tmp_path)
    put_process(root, 7, "old", numa_maps="1000 default huge anon=3 N1=3\n2000 default anon=2 N0=2\n")
    found = processes(root=root)
    assert dict(found[0].memory_by_node) == {0: 2 * os.sysconf("SC_PAGE_SIZE")}  # /proc/meminfo: no Hugepagesize
    assert any("3 huge page(s) of unknown size" in w for w in found.warnings)
    (Path(root) / "proc/meminfo").write_text("MemTotal: 100 kB\nHugepagesize:    2048 kB\n")
    found = processes(root=root)
    assert dict(found[0].memory_by_node) == {0: 2 * os.sysconf("SC_PAGE_SIZE"), 1: 3 * 2 * MB}
    assert found.warnings == ()
