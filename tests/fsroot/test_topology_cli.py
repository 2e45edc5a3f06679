"""``pynuma topology`` run as a command: output forms, exit codes, one-line errors."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tests.fixtures.sysfs_builder import Machine, cpumask, put

PROJECT = Path(__file__).resolve().parents[2]


def run(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(PROJECT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "pynuma", "topology", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=60)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    m = Machine(packages=2, nodes_per_package=2, cores_per_node=2, threads=2, offline=[5], memory_only_nodes=[3])
    return m.write(tmp_path_factory.mktemp("machine"))


def test_json_has_the_checker_keys(root):
    res = run("--root", root, "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["online_cpus"] == "0-4,6-11"
    assert data["cores"] == 6
    assert [p["id"] for p in data["packages"]] == [0, 1]
    node3 = next(n for n in data["numa_nodes"] if n["id"] == 3)
    assert node3["cpus"] == "" and node3["memory_bytes"] > 0
    assert node3["hugepages"]["2048"] == {"total": 4, "free": 3, "surplus": 0, "reserved": None}
    assert data["distances"]["nodes"] == [0, 1, 2, 3]
    assert set(data["cpus"][0]) >= {"id", "package", "die", "cluster", "core_id", "core", "node",
                                    "uncore_cache", "online"}


def test_tree_marks_offline_and_memory_only(root):
    res = run("--root", root)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.startswith("Machine (")
    assert "Package P#0" in out and "Package P#1" in out
    assert "NUMANode N#3" in out and "no CPUs" in out
    assert "Offline CPUs: 5" in out
    assert "L3" in out and "Core #0" in out and "CPU 11" in out


def test_distances_table(root):
    res = run("--root", root, "--distances")
    assert res.returncode == 0
    lines = res.stdout.splitlines()
    assert lines[0] == "node distances (source: sysfs)"
    assert lines[1].split() == ["node", "0", "1", "2", "3"]
    assert lines[2].split() == ["0", "10", "20", "20", "20"]


def test_distances_say_why_there_are_none(tmp_path):
    one = Machine(cores_per_node=2).write(tmp_path / "one")
    assert run("--root", one, "--distances").stdout == "no NUMA distances: this machine has 1 NUMA node\n"
    two = Machine(packages=2, cores_per_node=2).write(tmp_path / "two")
    for n in (0, 1):
        put(two, f"/sys/devices/system/node/node{n}/distance", "10 x\n")
    out = run("--root", two, "--distances")
    assert out.returncode == 0
    assert out.stdout.startswith("no NUMA distances: 2 nodes, but neither nodeN/distance nor an ACPI SLIT gave "
                                 "a valid matrix (")


def test_save_then_load(root, tmp_path):
    saved = tmp_path / "topo.json"
    res = run("--root", root, "--save", str(saved))
    assert res.returncode == 0 and res.stdout == ""
    assert res.stderr == f"pynuma topology: saved {saved}: 11 CPUs, 4 NUMA nodes (load it with --topology {saved})\n"
    direct = json.loads(run("--root", root, "--json").stdout)
    loaded = run("--topology", str(saved), "--json")
    assert loaded.returncode == 0, loaded.stderr
    loaded = json.loads(loaded.stdout)
    assert loaded.pop("native_reader") == direct.pop("native_reader")  # shown, not saved
    assert loaded == direct == json.loads(saved.read_text())


@pytest.mark.parametrize("pure", ["0", "1"])
def test_json_says_which_reader_answered(root, pure, monkeypatch):
    from pynuma import native_available

    monkeypatch.setenv("PYNUMA_PURE", pure)
    shown = json.loads(run("--root", root, "--json").stdout)["native_reader"]
    built = native_available("fsread")
    assert shown == {"built": built, "in_use": built and pure == "0"}


@pytest.mark.parametrize("args, needle", [
    (["--bogus"], "unrecognized argument"),
    (["--root"], "expected one argument"),
    (["--json", "--distances"], "cannot be combined"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    res = run(*args)
    assert res.returncode == 2
    assert len(res.stderr.splitlines()) == 1 and needle in res.stderr.splitlines()[0]
    assert "Traceback" not in res.stderr


def _one_line_error(res):
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr
    return lines[0]


@pytest.mark.parametrize("text", ["3-1\n", "x\n"])
def test_bad_cpulist_in_dump_is_one_line_exit_2(tmp_path, text):
    root = Machine(packages=1, cores_per_node=2).write(tmp_path)
    put(root, "/sys/devices/system/cpu/online", text)
    line = _one_line_error(run("--root", root, "--json"))
    assert line.startswith("pynuma topology: error: ") and "sys/devices/system/cpu/online" in line


def test_missing_root_is_one_line_exit_2(tmp_path):
    line = _one_line_error(run("--root", str(tmp_path / "absent")))
    assert "absent" in line


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"online_cpus": "0-1"}', ""])
def test_bad_topology_file_is_one_line_exit_2(tmp_path, content):
    path = tmp_path / "t.json"
    path.write_text(content)
    line = _one_line_error(run("--topology", str(path)))
    assert str(path) in line


def test_missing_topology_file(tmp_path):
    line = _one_line_error(run("--topology", str(tmp_path / "none.json")))
    assert "none.json" in line


def test_help_exits_0():
    res = run("--help")
    assert res.returncode == 0 and "--topology FILE" in res.stdout


def test_save_to_missing_directory_is_exit_2(root, tmp_path):
    line = _one_line_error(run("--root", root, "--save", str(tmp_path / "no" / "t.json")))
    assert "--save" in line


def test_json_hugepage_capacity_agrees_with_pools(root):
    from pynuma.fsroot import FsRoot
    from pynuma.hugepages.pools import capacity_to_dict, read_capacity

    res = run("--root", root, "--json")
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)["hugepage_capacity"]
    want = capacity_to_dict(read_capacity(FsRoot(root)))
    assert got == want
    assert got["total"]["hugepages-2Mi"] == want["total"]["hugepages-2Mi"] != "0"


def test_saved_topology_keeps_hugepage_capacity(root, tmp_path):
    saved = tmp_path / "t.json"
    assert run("--root", root, "--save", str(saved)).returncode == 0
    first = json.loads(saved.read_text())["hugepage_capacity"]
    res = run("--topology", str(saved), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["hugepage_capacity"] == first  # nodes agree with the machine here


@pytest.mark.parametrize("packages,word", [(1, "1 package,"), (2, "2 packages,")])
def test_tree_header_counts_are_pluralised(tmp_path, packages, word):
    m = Machine(packages=packages, nodes_per_package=1, cores_per_node=1, threads=1)
    res = run("--root", m.write(tmp_path))
    assert res.returncode == 0, res.stderr
    head = res.stdout.splitlines()[0]
    assert word in head
    assert (f"{packages} core," if packages == 1 else f"{packages} cores,") in head
    assert (" 1 CPU online" if packages == 1 else f" {packages} CPUs online") in head


@settings(max_examples=200)
@given(st.integers(min_value=0, max_value=1 << 52))  # n * 1024 stays an int64
def test_binary_si_matches_quantity(n):
    from pynuma.cli.topology import _binary_si
    from pynuma.quantity import BINARY_SI, Quantity

    assert _binary_si(n) == str(Quantity(n, BINARY_SI))
    assert _binary_si(n * 1024) == str(Quantity(n * 1024, BINARY_SI))


@pytest.mark.parametrize("package_id,label", [(None, "Package P#1"), (-1, "Package (CPUs")])
def test_tree_prints_each_node_once_when_nodes_span_packages(tmp_path, package_id, label):
    # CPUs 0-1 in package 0, 2-3 in package 1; the nodes interleave them so each node spans both packages
    root = Machine(packages=2, nodes_per_package=1, cores_per_node=2, threads=1).write(tmp_path)
    for node, cpus in ((0, "0,2"), (1, "1,3")):
        put(root, f"/sys/devices/system/node/node{node}/cpulist", cpus + "\n")
        put(root, f"/sys/devices/system/node/node{node}/cpumap", cpumask(int(c) for c in cpus.split(",")) + "\n")
    if package_id is not None:  # POWER reports -1 where there is no socket id
        for cpu in range(4):
            put(root, f"/sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id", f"{package_id}\n")
    res = run("--root", root)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    node_lines = [ln for ln in lines if "NUMANode N#" in ln]
    assert [ln.split(" (")[0] for ln in node_lines] == ["  NUMANode N#0", "  NUMANode N#1"]
    assert label in res.stdout and "P#-1" not in res.stdout
    # packages nest under nodes: both packages appear once under each node
    assert sum("Package" in ln for ln in lines) == 4
