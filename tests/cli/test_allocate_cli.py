"""``pynuma allocate cpus`` run as a command: both topology file forms, options, exit codes."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pynuma.cpuset import CPUSet
from pynuma.policy.cpumanager.take import take_by_topology

from ..unit.cpu_fixtures import DUAL_NODE_HT, QUAD_NODE


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", "allocate", "cpus", *args],
                          capture_output=True, text=True)


@pytest.fixture
def dual(tmp_path):
    path = tmp_path / "dual.json"
    path.write_text(json.dumps(DUAL_NODE_HT.to_dict()))
    return str(path)


def one_line_error(out, code):
    assert out.returncode == code, out.stderr
    assert out.stdout == "" and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    return out.stderr


def test_prints_the_allocators_pick(dual):
    out = run("--count", "4", "--topology", dual)
    assert out.returncode == 0
    assert out.stdout.strip() == str(take_by_topology(DUAL_NODE_HT, DUAL_NODE_HT.cpus(), 4))


def test_named_single_entry_map_and_declared_counts(tmp_path):
    doc = QUAD_NODE.to_dict()
    path = tmp_path / "named.json"
    path.write_text(json.dumps({"quad": {"description": "x", **doc}}))
    out = run("--count", "3", "--available", "1-31", "--topology", str(path),
              "--option", "distribute-cpus-across-numa")
    want = take_by_topology(QUAD_NODE, CPUSet.range(1, 32), 3, {"distribute-cpus-across-numa": True})
    assert out.returncode == 0 and out.stdout.strip() == str(want)


def test_reserved_numa_and_json(dual):
    out = run("--count", "2", "--reserved", "0,6", "--numa", "0", "--topology", dual, "--json")
    assert out.returncode == 0
    got = json.loads(out.stdout)
    assert got["count"] == 2 and got["numa_nodes"] == [0] and "0" not in got["cpus"].split(",")


def test_num_reserved_picks_like_the_kubelet(dual):
    out = run("--count", "2", "--num-reserved", "2", "--topology", dual, "--json")
    got = json.loads(out.stdout)
    reserved = take_by_topology(DUAL_NODE_HT, DUAL_NODE_HT.cpus(), 2)
    assert out.returncode == 0 and got["reserved"] == str(reserved)
    assert CPUSet.parse(got["cpus"]).isdisjoint(reserved)
    assert "--num-reserved" in one_line_error(run("--count", "1", "--num-reserved", "99", "--topology", dual), 2)


def test_group_size_runs_the_distributed_algorithm(dual):
    out = run("--count", "4", "--option", "distribute-cpus-across-numa", "--option", "cpu-group-size=2",
              "--topology", dual)
    assert out.returncode == 0
    assert out.stdout.strip() == str(take_by_topology(DUAL_NODE_HT, DUAL_NODE_HT.cpus(), 4,
                                                      {"distribute-cpus-across-numa": True, "cpu_group_size": 2}))


@pytest.mark.parametrize("args, words", [
    (["--count", "-2"], "at least 1 CPU, got -2"),
    (["--count", "0"], "--count: expected at least 1 CPU, got 0"),
    (["--count", "13"], "only 12"),
    (["--count", "two"], "whole number"),
    (["--count", "1", "--option", "made-up"], "unknown CPU Manager Policy option"),
    (["--count", "1", "--option", "full-pcpus-only=perhaps"], "bad value"),
    (["--count", "1", "--available", "0-99"], "not in the topology"),
    (["--count", "1", "--available", "5-2"], "--available"),
    (["--count", "1", "--numa", "7"], "--numa"),
])
def test_bad_input_is_one_line_exit_2(dual, args, words):
    assert words in one_line_error(run(*args, "--topology", dual), 2)


def test_unsatisfiable_is_exit_1_with_the_reason(dual):
    assert "not enough cpus available" in one_line_error(run("--count", "5", "--available", "0-3",
                                                             "--topology", dual), 1)
    assert "SMT Alignment Error" in one_line_error(run("--count", "3", "--option", "full-pcpus-only",
                                                       "--topology", dual), 1)


def test_bad_topology_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"cpus": 3}')
    assert str(bad) in one_line_error(run("--count", "1", "--topology", str(bad)), 2)


def test_root_dump_uses_discovered_online_cpus(tmp_path):
    import tarfile

    from tests.conformance.vectors import conformance_dir

    case = conformance_dir() / "topology" / "16em64t-4s2c2t-offlines"
    archive = case / "16em64t-4s2c2t-offlines.tar.bz2"
    if not archive.is_file():
        pytest.skip("shared topology corpus not present")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path)
    roots = [p for p in tmp_path.iterdir() if p.is_dir()]
    root = roots[0] if len(roots) == 1 and (roots[0] / "sys").is_dir() else tmp_path
    online = CPUSet.parse(json.loads((case / "expected.json").read_text())["online_cpus"])
    out = run("--count", "4", "--root", str(root), "--json")
    assert out.returncode == 0, out.stderr
    got = CPUSet.parse(json.loads(out.stdout)["cpus"])
    assert len(got) == 4 and got <= online
    too_many = run("--count", str(len(online) + 1), "--root", str(root))
    assert too_many.returncode == 2
