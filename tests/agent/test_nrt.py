"""NodeResourceTopology: zones, costs, resources; available after exclusive holdings; CRD schema; the CLI."""
from __future__ import annotations

import json
import os

import pytest

from tests.conformance.vectors import conformance_dir
import yaml

from pynuma.agent import AgentConfig, NodeAgent
from pynuma.cli import main
from pynuma.export.nrt import build_nrt, legacy_policy
from pynuma.quantity import Quantity

# shared/ecosystem sits beside shared/conformance ($PYNUMA_CONFORMANCE_DIR)
CRD = str(conformance_dir().parent / "ecosystem" / "noderesourcetopology-crd.yaml")
MI = 1 << 20


def _crd():
    path = CRD
    if not os.path.isfile(path):
        pytest.skip(f"CRD {path} not found")
    pytest.importorskip("jsonschema")
    return path


def _resources(zone):
    return {r["name"]: r for r in zone["resources"]}


def guaranteed(uid, cpus, memory="1Gi"):
    res = {"cpu": str(cpus), "memory": memory}
    return {"metadata": {"name": uid, "uid": uid},
            "spec": {"containers": [{"name": "c", "resources": {"requests": res, "limits": res}}]}}


@pytest.mark.parametrize("policy,scope,entry", [
    ("restricted", "pod", "RestrictedPodLevel"), ("restricted", "container", "RestrictedContainerLevel"),
    ("best-effort", "pod", "BestEffortPodLevel"), ("best-effort", "container", "BestEffortContainerLevel"),
    ("single-numa-node", "pod", "SingleNUMANodePodLevel"), ("none", "pod", "None"), ("none", "container", "None"),
])
def test_the_deprecated_policy_entry_carries_the_scope_as_node_feature_discovery_writes_it(policy, scope, entry):
    assert legacy_policy(policy, scope) == entry


def test_zones_costs_and_capacity_follow_the_machine(node_root):
    with NodeAgent(node_root) as agent:
        nrt, topo = agent.nrt(), agent.topology
    assert nrt["metadata"]["name"] == "worker-7"
    assert [z["name"] for z in nrt["zones"]] == ["node-0", "node-1"]
    assert all(z["type"] == "Node" for z in nrt["zones"])
    assert nrt["zones"][0]["costs"] == [{"name": "node-0", "value": 10}, {"name": "node-1", "value": 21}]
    for zone, node in zip(nrt["zones"], topo.numa_nodes):
        r = _resources(zone)
        assert r["cpu"]["capacity"] == str(len(node.cpus))
        assert Quantity.parse(r["memory"]["capacity"]).value() == node.memory_total
        assert r["hugepages-2Mi"]["capacity"] == f"{8 * 2}Mi"  # 8 pages per node in the fixture
    attrs = {a["name"]: a["value"] for a in nrt["attributes"]}
    assert attrs == {"topologyManagerPolicy": "none", "topologyManagerScope": "container"}


def test_available_subtracts_exclusive_cpus_and_reserved(node_root, tmp_path):
    cfg = AgentConfig(cpu_manager_policy="static", topology_manager_policy="single-numa-node",
                      reserved_system_cpus="0")
    state = str(tmp_path / "state")
    with NodeAgent(node_root, cfg, state_dir=state) as agent:
        assert agent.admit(guaranteed("p1", 3)).admit
        nrt = agent.nrt()
        held = agent._admission.exclusive_cpus()
    cpu = {z["name"]: _resources(z)["cpu"] for z in nrt["zones"]}
    assert cpu["node-0"]["allocatable"] == "3"  # CPU 0 reserved
    on_node0 = len([c for c in held if c < 4])
    assert (int(cpu["node-0"]["available"]), int(cpu["node-1"]["available"])) == (3 - on_node0, 4 - (3 - on_node0))
    assert {attr["value"] for attr in nrt["attributes"]} == {"single-numa-node", "container"}
    assert nrt["topologyPolicies"] == ["SingleNUMANodeContainerLevel"]
    # the CLI reads the same holdings back from the checkpoints
    cfg_file = tmp_path / "kubelet.yaml"
    cfg_file.write_text("kind: KubeletConfiguration\ncpuManagerPolicy: static\nreservedSystemCPUs: '0'\n"
                        "topologyManagerPolicy: single-numa-node\n")
    out = tmp_path / "nrt.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["export", "nrt", "--root", node_root, "--state-dir", state, "--config", str(cfg_file)]) == 0
    assert json.loads(buf.getvalue())["zones"] == nrt["zones"]


def test_memory_manager_blocks_reduce_available_memory(node_root, tmp_path):
    from pynuma.policy.memorymanager.reserved import parse_reserved_memory

    cfg = AgentConfig(cpu_manager_policy="static", topology_manager_policy="single-numa-node",
                      memory_manager_policy="Static", kube_reserved={"cpu": "1"},
                      eviction_hard={"memory.available": "100Mi"},
                      reserved_memory=tuple(parse_reserved_memory("0:memory=100Mi")))
    with NodeAgent(node_root, cfg, state_dir=str(tmp_path / "s")) as agent:
        zones = agent.nrt()["zones"]
        before = {z["name"]: _resources(z) for z in zones}
        report = agent.admit(guaranteed("p1", 1, "256Mi"))
        assert report.admit, report.message
        after = {z["name"]: _resources(z)["memory"] for z in agent.nrt()["zones"]}
        numa = report.containers[0].memory[0]["numa"]
    zone = f"node-{numa[0]}"
    drop = Quantity.parse(before[zone]["memory"]["available"]).value() - Quantity.parse(after[zone]["available"]).value()
    assert drop == 256 * MI
    # the Memory Manager's rule: hugepage pools are not "memory"; reservedMemory comes off node 0 only
    for name, reserved in (("node-0", 100 * MI), ("node-1", 0)):
        r = before[name]
        pools = Quantity.parse(r["hugepages-2Mi"]["capacity"]).value()
        assert Quantity.parse(r["memory"]["allocatable"]).value() == \
            Quantity.parse(r["memory"]["capacity"]).value() - pools - reserved


def test_without_memory_manager_allocatable_follows_the_same_rule(node_root):
    from pynuma.policy.memorymanager.reserved import parse_reserved_memory

    cfg = AgentConfig(reserved_memory=tuple(parse_reserved_memory("1:memory=64Mi")))
    with NodeAgent(node_root, cfg) as agent:
        r = {z["name"]: _resources(z) for z in agent.nrt()["zones"]}["node-1"]
    pools = Quantity.parse(r["hugepages-2Mi"]["capacity"]).value()
    assert Quantity.parse(r["memory"]["allocatable"]).value() == \
        Quantity.parse(r["memory"]["capacity"]).value() - pools - 64 * MI
    assert r["memory"]["available"] == r["memory"]["allocatable"]


def test_nrt_fits_the_crd_and_a_broken_one_does_not(node_root):
    from pynuma.export.validate import nrt_errors, nrt_schema

    schema = nrt_schema(_crd())
    with NodeAgent(node_root) as agent:
        nrt = agent.nrt()
    assert nrt_errors(nrt, schema) == []
    nrt["zones"][0]["resources"][0]["capacity"] = "two"
    del nrt["zones"][1]["type"]
    assert len(nrt_errors(nrt, schema)) == 2


def test_cli_formats_and_bad_input(node_root, tmp_path, capsys):
    crd = _crd()
    assert main(["export", "nrt", "--root", node_root, "--format", "yaml", "--crd", crd, "--policy", "restricted",
                 "--node-name", "n1"]) == 0
    obj = yaml.safe_load(capsys.readouterr().out)
    assert obj["metadata"]["name"] == "n1" and obj["topologyPolicies"] == [legacy_policy("restricted", "container")]
    bad = tmp_path / "topo.json"
    bad.write_text("{}")
    assert main(["export", "nrt", "--topology", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err
    assert main(["export", "nrt", "--root", node_root, "--state-dir", str(tmp_path / "missing")]) == 2


def test_saved_topology_gives_the_same_zones(node_root, tmp_path, capsys):
    from pynuma.discover import discover

    topo = discover(node_root)
    saved = tmp_path / "topo.json"
    saved.write_text(json.dumps(topo.to_dict()))
    assert main(["export", "nrt", "--topology", str(saved), "--node-name", "x"]) == 0
    assert json.loads(capsys.readouterr().out)["zones"] == build_nrt(topo, "x")["zones"]


def test_a_kubelet_style_cpu_topology_is_refused_saying_what_is_missing(tmp_path, capsys):
    saved = tmp_path / "kt.json"
    saved.write_text('{"cpus": [{"id": 0, "package": 0, "node": 0, "core": 0}]}')
    assert main(["export", "nrt", "--topology", str(saved)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a kubelet-style CPU topology has no memory per node" in err
