"""``pynuma hints merge`` run as a command: JSON answer, topology sources, one-line errors."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", "hints", *args], capture_output=True, text=True)


def _cpus(nodes, per_node=2):
    return [{"id": n * per_node + i, "package": n // 2, "node": n, "core": n * per_node + i}
            for n in range(nodes) for i in range(per_node)]


@pytest.fixture
def topo(tmp_path):
    """4 NUMA nodes, two sockets; nodes 0-1 and 2-3 close to each other."""
    path = tmp_path / "topo.json"
    d = [[10, 11, 20, 20], [11, 10, 20, 20], [20, 20, 10, 11], [20, 20, 11, 10]]
    path.write_text(json.dumps({"cpus": _cpus(4), "distances": d}))
    return str(path)


def _hints(tmp_path, providers):
    path = tmp_path / "hints.json"
    path.write_text(json.dumps(providers))
    return str(path)


def H(nodes, pref):
    return {"numa": nodes, "preferred": pref}


def test_restricted_rejects_unaligned_and_says_so(tmp_path, topo):
    hints = _hints(tmp_path, [{"cpu": [H([0], True), H([0, 1], False)]}, {"gpu": None},
                              {"memory": [H([1], True), H([0, 1], False)]}])
    out = run("merge", "--policy", "restricted", "--hints", hints, "--topology", topo, "--json")
    assert out.returncode == 1, out.stderr  # the README: 1 when the kubelet rules say no
    assert json.loads(out.stdout) == {"hint": H([0], False), "admit": False, "exact": True}
    text = run("merge", "--policy", "restricted", "--hints", hints, "--topology", topo)
    assert text.returncode == 1 and text.stdout.splitlines() == [
        "hint: NUMA node 0 (not preferred)",
        "rejected by the restricted policy: TopologyAffinityError (Resources cannot be allocated with Topology locality)"]


def test_aligned_hints_are_admitted(tmp_path, topo):
    hints = _hints(tmp_path, [{"cpu": [H([1], True), H([0, 1], False)]}, {"memory": [H([1], True)]}])
    out = run("merge", "--policy", "single-numa-node", "--hints", hints, "--topology", topo, "--json")
    assert out.returncode == 0 and json.loads(out.stdout) == {"hint": H([1], True), "admit": True, "exact": True}
    text = run("merge", "--policy", "single-numa-node", "--hints", hints, "--topology", topo)
    assert text.returncode == 0 and text.stdout.splitlines() == [
        "hint: NUMA node 1 (preferred)", "admitted by the single-numa-node policy"]


def test_prefer_closest_uses_the_topology_distances(tmp_path, topo):
    # Two-node preferred candidates {0,2} and {2,3}: narrowest picks {0,2}, closest picks {2,3}.
    hints = _hints(tmp_path, [{"cpu": [H([0, 2], True), H([2, 3], True)]}])
    plain = run("merge", "--policy", "best-effort", "--hints", hints, "--topology", topo, "--json")
    close = run("merge", "--policy", "best-effort", "--option", "prefer-closest-numa-nodes=true",
                "--hints", hints, "--topology", topo, "--json")
    assert json.loads(plain.stdout)["hint"] == H([0, 2], True)
    assert json.loads(close.stdout)["hint"] == H([2, 3], True)


def test_topologies_json_minimal_form_is_accepted(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"declared": {"num_cpus": 4, "num_cores": 4, "num_sockets": 2, "num_numa_nodes": 2},
                                "cpus": _cpus(2), "distances": None}))
    hints = _hints(tmp_path, [{}, {"x": []}])
    out = run("merge", "--policy", "best-effort", "--hints", hints, "--topology", str(path), "--json")
    assert json.loads(out.stdout) == {"hint": H([0, 1], False), "admit": True, "exact": True}


@pytest.mark.parametrize("args,needle", [
    (["--policy", "bogus"], 'unknown policy: "bogus"'),
    (["--policy", "best-effort", "--option", "no-such=1"], "unknown Topology Manager Policy option"),
    (["--policy", "best-effort", "--option", "max-allowable-numa-nodes=4"], "should not be less than 8"),
    (["--policy", "best-effort", "--scope", "node"], 'unknown scope: "node"'),
])
def test_bad_policy_or_option_is_one_line_exit_2(tmp_path, topo, args, needle):
    hints = _hints(tmp_path, [{}])
    out = run("merge", *args, "--hints", hints, "--topology", topo)
    assert out.returncode == 2
    assert needle in out.stderr and out.stderr.strip().count("\n") == 0 and out.stdout == ""


@pytest.mark.parametrize("content", ["{not json", '{"cpu": []}', '[{"cpu": [{"numa": "0", "preferred": true}]}]',
                                     '[{"cpu": [{"numa": [0], "preferred": "yes"}]}]'])
def test_malformed_hints_file_names_the_file(tmp_path, topo, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    out = run("merge", "--policy", "best-effort", "--hints", str(path), "--topology", topo)
    assert out.returncode == 2 and str(path) in out.stderr and "Traceback" not in out.stderr


def test_more_nodes_than_allowed_needs_the_option(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"cpus": _cpus(10, 1)}))
    hints = _hints(tmp_path, [{"cpu": [H([9], True)]}])
    refused = run("merge", "--policy", "restricted", "--hints", hints, "--topology", str(path))
    assert refused.returncode == 2 and "more than 8 NUMA Nodes" in refused.stderr
    ok = run("merge", "--policy", "restricted", "--option", "max-allowable-numa-nodes=16", "--hints", hints,
             "--topology", str(path), "--json")
    assert json.loads(ok.stdout) == {"hint": H([9], True), "admit": True, "exact": True}


@pytest.mark.parametrize("providers, where, missing", [
    ([{"cpu": [H([0], True), H([0, 4], False)]}], "provider[0].cpu[1].numa", "4"),
    ([{"gpu": None}, {"memory": [H([7, 9], True)]}], "provider[1].memory[0].numa", "7,9"),
])
def test_hints_naming_a_node_the_topology_lacks_are_bad_input(tmp_path, topo, providers, where, missing):
    hints = _hints(tmp_path, providers)
    out = run("merge", "--policy", "best-effort", "--hints", hints, "--topology", topo)
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1
    assert f"{hints}: {where}: NUMA node(s) {missing} not in the topology (nodes 0,1,2,3)" in out.stderr
