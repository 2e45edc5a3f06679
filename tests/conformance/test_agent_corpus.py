"""Every real machine dump of the shared corpus through the agent's outputs, each checked by its schema.

* NodeResourceTopology against the CRD's v1alpha2 ``openAPIV3Schema`` (jsonschema), and one zone per
  NUMA node with the discovered CPUs and distances;
* the ``v1`` Node (status) and the ``coordination.k8s.io/v1`` Lease against the Kubernetes schemas
  (kubernetes-validate, offline, strict).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


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


@pytest.fixture
def scratch(tmp_path):
    """A directory in memory when the machine has one: a dump is thousands of small files."""
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix="pynuma-corpus-", dir=base)) if base else tmp_path
    yield path
    if base:
        shutil.rmtree(path, ignore_errors=True)


def _unpack(case, dest):
    """The dump's root: the tar program when it is there (several times faster), else the shared helper."""
    if shutil.which("tar") and shutil.which("bzip2"):
        done = subprocess.run(["tar", "-xjf", str(case / f"{case.name}.tar.bz2"), "-C", str(dest),
                               "--no-same-owner", "--no-same-permissions"], capture_output=True)
        tops = [p for p in dest.iterdir() if p.is_dir()]
        if done.returncode == 0 and len(tops) == 1:
            return tops[0]
        shutil.rmtree(dest)
        dest.mkdir()
    return _extract(case, dest)


@pytest.mark.parametrize("case", _cases())
def test_agent_outputs_of_each_dump_validate(case, scratch, nrt_schema):
    pytest.importorskip("kubernetes_validate")
    from pynuma.agent import NodeAgent
    from pynuma.export.validate import k8s_errors, nrt_errors

    root = _unpack(case, scratch)
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
        assert (cpu["capacity"] if cpu else "0") == str(sum(1 for c in topo.cpus
                                                            if c.node == n.id and c.id in topo.online_cpus))
        if topo.distances is not None and n.id in topo.distances.nodes:
            assert [c["value"] for c in zone["costs"]] == [topo.distances.between(n.id, m)
                                                           for m in topo.distances.nodes]
    # capacity counts the machine's online CPUs (cAdvisor), zones the CPUs discovery may use
    from pynuma.parse import parse_cpulist

    online = (root / "sys/devices/system/cpu/online")
    machine = len(parse_cpulist(online.read_text())) if online.is_file() else len(topo.online_cpus)
    assert node["status"]["capacity"]["cpu"] == str(machine)
    # no CPU counted twice, none in a zone that is not its node
    in_nodes = {c.id for c in topo.cpus if c.node in {n.id for n in topo.numa_nodes}} & set(topo.online_cpus)
    assert sum(int(r["capacity"]) for z in nrt["zones"] for r in z["resources"] if r["name"] == "cpu") \
        == len(in_nodes)
