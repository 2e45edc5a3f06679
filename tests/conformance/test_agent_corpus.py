"""Every real machine dump of the shared corpus through the agent's outputs, each checked by its schema.

* NodeResourceTopology against the CRD's v1alpha2 ``openAPIV3Schema`` (jsonschema), and one zone per
  NUMA node with the discovered CPUs and distances;
* the ``v1`` Node (status) and the ``coordination.k8s.io/v1`` Lease against the Kubernetes schemas
  (kubernetes-validate, offline, strict).
"""
from __future__ import annotations

import os

import pytest

from pynuma.cpuset import CPUSet

from tests.conformance.test_topology_corpus import _cases, _extract
from tests.conformance.vectors import conformance_dir


def _crd_path():
    # shared/ecosystem sits beside shared/conformance
    return os.path.join(os.path.dirname(str(conformance_dir())), "ecosystem", "noderesourcetopology-crd.yaml")


@pytest.fixture(scope="module")
def nrt_schema():
    pytest.importorskip("jsonschema")
    path = _crd_path()
    if not os.path.isfile(path):
        pytest.skip(f"CRD {path} not found")
    from pynuma.export.validate import nrt_schema as load

    return load(path)


@pytest.mark.parametrize("case", _cases())
def test_agent_outputs_of_each_dump_validate(case, tmp_path, nrt_schema):
    pytest.importorskip("kubernetes_validate")
    from pynuma.agent import NodeAgent
    from pynuma.export.validate import k8s_errors, nrt_errors

    root = _extract(case, tmp_path)
    with NodeAgent(str(root), node_name="dump-node") as agent:
        agent.step()
        nrt, node, lease = agent.nrt(), agent.last_status.to_node(), agent.lease().to_k8s()
        topo = agent.topology
    assert nrt_errors(nrt, nrt_schema) == []
    assert k8s_errors(node) == []
    assert k8s_errors(lease) == []
    assert [z["name"] for z in nrt["zones"]] == [f"node-{n.id}" for n in topo.numa_nodes]
    for zone, n in zip(nrt["zones"], topo.numa_nodes):
        cpu = next((r for r in zone["resources"] if r["name"] == "cpu"), None)
        assert (cpu["capacity"] if cpu else "0") == str(len(n.cpus & topo.online_cpus))
        if topo.distances is not None and n.id in topo.distances.nodes:
            assert [c["value"] for c in zone["costs"]] == [topo.distances.between(n.id, m)
                                                           for m in topo.distances.nodes]
    # capacity counts the machine's online CPUs (cAdvisor), zones the CPUs discovery may use
    from pynuma.parse import parse_cpulist

    online = (root / "sys/devices/system/cpu/online")
    machine = len(parse_cpulist(online.read_text())) if online.is_file() else len(topo.online_cpus)
    assert node["status"]["capacity"]["cpu"] == str(machine)
    assert sum(int(r["capacity"]) for z in nrt["zones"] for r in z["resources"] if r["name"] == "cpu") \
        == len(topo.online_cpus & CPUSet([c for n in topo.numa_nodes for c in n.cpus]))
