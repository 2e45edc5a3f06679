"""``pynuma admit`` run as a command: placements, rejection, state dir and --commit, bad input."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

GPU = "example.com/gpu"


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", "admit", *args], capture_output=True, text=True)


@pytest.fixture
def topo(tmp_path):
    """2 NUMA nodes x 4 cores x 2 threads (CPU c and c+8 are siblings)."""
    cpus = [{"id": t * 8 + c, "package": c // 4, "node": c // 4, "core": c} for t in range(2) for c in range(8)]
    path = tmp_path / "topo.json"
    path.write_text(json.dumps({"cpus": cpus}))
    return str(path)


def pod_file(tmp_path, name, cpu, gpu=0, fname="pod.yaml"):
    res = {"cpu": str(cpu), "memory": "1Gi"}
    if gpu:
        res[GPU] = str(gpu)
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": f"uid-{name}"},
           "spec": {"containers": [{"name": "app", "resources": {"requests": res, "limits": res}}]}}
    path = tmp_path / fname
    path.write_text(json.dumps(doc))
    return str(path)


def devices(tmp_path):
    path = tmp_path / "dev.json"
    path.write_text(json.dumps([{"resource": GPU, "id": "g1", "numa": 1}]))
    return str(path)


def test_json_report_aligns_cpus_with_the_device(tmp_path, topo):
    out = run(pod_file(tmp_path, "web", 2, 1), "--topology", topo, "--policy", "restricted",
              "--reserved-cpus", "0,8", "--devices", devices(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    c = doc["pods"][0]["containers"][0]
    assert doc["admit"] and not doc["committed"]
    assert c["hint"] == {"numa": [1], "preferred": True} and c["devices"] == {GPU: ["g1"]}
    assert c["cpus"] == "4,12"  # a whole core on node 1
    assert set(c["hints"]) == {"cpu", "devices"}


def test_rejection_exits_1_with_the_reason(tmp_path, topo):
    out = run(pod_file(tmp_path, "big", 10), "--topology", topo, "--policy", "single-numa-node")
    assert out.returncode == 1
    assert "REJECTED: TopologyAffinityError" in out.stdout


def test_a_pod_the_node_cannot_fit_is_rejected_before_any_manager(tmp_path, topo):
    out = run(pod_file(tmp_path, "web", 1), "--topology", topo, "--allocatable", "cpu=0")
    assert out.returncode == 1
    assert out.stdout.startswith("pod web: REJECTED: OutOfpods")  # no policy or scope ran: none is named
    assert len(out.stdout.splitlines()) == 1  # and no container table, empty, below it


def test_commit_writes_a_checkpoint_the_next_run_reads(tmp_path, topo):
    sd = tmp_path / "state"
    sd.mkdir()
    first = run(pod_file(tmp_path, "a", 4), "--topology", topo, "--state-dir", str(sd), "--commit", "--json")
    assert first.returncode == 0, first.stderr
    state = json.loads((sd / "cpu_manager_state").read_text())
    assert state["policyName"] == "static" and state["entries"]["uid-a"]["app"]
    taken = state["entries"]["uid-a"]["app"]
    second = run(pod_file(tmp_path, "b", 4, fname="b.yaml"), "--topology", topo, "--state-dir", str(sd), "--json")
    got = json.loads(second.stdout)["pods"][0]["containers"][0]["cpus"]
    from pynuma.cpuset import CPUSet

    assert CPUSet.parse(got).isdisjoint(CPUSet.parse(taken))


def test_corrupt_checkpoint_is_an_error_and_left_alone(tmp_path, topo):
    sd = tmp_path / "state"
    sd.mkdir()
    bad = '{"policyName":"static","defaultCpuSet":"0-15","checksum":12345}'
    (sd / "cpu_manager_state").write_text(bad)
    out = run(pod_file(tmp_path, "a", 2), "--topology", topo, "--state-dir", str(sd), "--commit")
    assert out.returncode == 1 and "corrupt" in out.stderr and "cpu_manager_state" in out.stderr
    assert "Traceback" not in out.stderr
    assert (sd / "cpu_manager_state").read_text() == bad


def test_rejected_pod_commits_nothing(tmp_path, topo):
    sd = tmp_path / "state"
    sd.mkdir()
    out = run(pod_file(tmp_path, "big", 10), "--topology", topo, "--policy", "single-numa-node", "--state-dir", str(sd),
              "--commit")
    assert out.returncode == 1 and not os.path.exists(sd / "cpu_manager_state")


@pytest.mark.parametrize("extra,needle", [
    (["--policy", "bogus"], 'unknown policy: "bogus"'),
    (["--scope", "node"], 'unknown scope: "node"'),
    (["--commit"], "--commit needs --state-dir"),
    (["--reserved-cpus", "0-"], "--reserved-cpus"),
    (["--memory-policy", "static"], "--reserved-memory"),
    (["--reserved-memory", "garbage"], "--reserved-memory: expected NUMA:type=quantity"),
    (["--reserved-memory", "0:memory=1Gi"], "topo.json: topology JSON has no numa_nodes list"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, topo, extra, needle):
    out = run(pod_file(tmp_path, "a", 1), "--topology", topo, *extra)
    assert out.returncode == 2, out.stderr
    assert needle in out.stderr and out.stderr.strip().count("\n") == 0


@pytest.mark.parametrize("policy", [[], ["--memory-policy", "static"]])
def test_reserved_memory_on_a_node_the_topology_lacks_is_exit_2(tmp_path, policy):
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps({"cpus": [{"id": 0, "package": 0, "node": 0, "core": 0}],
                                "numa_nodes": [{"id": 0, "cpus": "0", "memory_bytes": 8 << 30}]}))
    out = run(pod_file(tmp_path, "a", 1), "--topology", str(path), *policy, "--reserved-memory", "7:memory=1Gi")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().endswith("--reserved-memory: NUMA node 7 does not exist (nodes: 0)")


def test_malformed_pod_is_exit_2(tmp_path, topo):
    path = tmp_path / "bad.yaml"
    path.write_text("kind: Pod\nspec: {containers: [{name: c, resources: {limits: {cpu: 1.5.3}}}]}\n")
    out = run(str(path), "--topology", topo)
    assert out.returncode == 2 and str(path) in out.stderr


def test_text_table_has_a_header_and_human_sizes(tmp_path):
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps({"cpus": [{"id": i, "package": 0, "node": 0, "core": i} for i in range(4)],
                                "numa_nodes": [{"id": 0, "cpus": "0-3", "memory_bytes": 8 << 30}]}))
    out = run(pod_file(tmp_path, "a", 1), "--topology", str(path), "--memory-policy", "static",
              "--reserved-memory", "0:memory=1Gi")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].split() == ["KIND", "CONTAINER", "HINT", "CPUS", "MEMORY", "DEVICES"]
    assert "memory 1 GiB on 0" in lines[2] and "1073741824" not in out.stdout
