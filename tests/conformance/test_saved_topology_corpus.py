"""Whatever ``pynuma topology --save`` writes, every ``--topology`` reader accepts, with --root's answer.

One test per dump of the shared topology corpus (``$PYNUMA_CONFORMANCE_DIR/topology``,
skipped cleanly when absent).  The dump is saved with ``topology --root DUMP
--save FILE``; then each command that takes ``--topology`` (``topology``
itself, ``allocate cpus``, ``hints merge``, ``admit`` with the CPU and Memory
Managers, ``state check``) runs once on the saved file and once on the dump,
and must give the same exit status and the same output.  The API loaders
(``load_cpu_topology``, ``Topology.from_dict``) are held to the same rule.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from pynuma.cli import main
from pynuma.discover import discover
from pynuma.model import Topology
from pynuma.policy.cpumanager.topology import CPUTopology
from pynuma.topology_file import load_cpu_topology
from tests.conformance.test_topology_corpus import _cases, _extract


@pytest.fixture
def scratch(tmp_path):
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        with tempfile.TemporaryDirectory(prefix="pynuma-saved-", dir=shm) as d:
            yield Path(d)
    else:
        yield tmp_path


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _inputs(work: Path, saved: dict) -> dict:
    """A hints file, a pod and a CPU checkpoint fitting the saved machine."""
    online = [c for c in saved["cpus"] if c["online"]]
    node = min((c["node"] for c in online if c["node"] is not None), default=0)
    hints = work / "hints.json"
    hints.write_text(json.dumps([{"cpu": [{"numa": [node], "preferred": True}]}, {"gpu": None}]))
    pod = work / "pod.yaml"
    pod.write_text("metadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n"
                   "      requests: {cpu: '1', memory: 1Mi}\n      limits: {cpu: '1', memory: 1Mi}\n")
    from pynuma.cpuset import CPUSet
    from pynuma.state import cpu_checkpoint

    state = work / "cpu_manager_state"
    cpu_checkpoint.write_file(str(state), "static", CPUSet.parse(saved["online_cpus"]), {})
    return {"hints": str(hints), "pod": str(pod), "state": str(state), "node": node,
            "memory_node": next((n["id"] for n in saved["numa_nodes"] if n["memory_bytes"]), node)}


def _commands(inp: dict, nodes: int):
    # the kubelet refuses more than 8 NUMA nodes unless told otherwise
    many = ("--option", f"max-allowable-numa-nodes={nodes}") if nodes > 8 else ()
    yield ("topology", "--json")
    yield ("allocate", "cpus", "--count", "1", "--json")
    yield ("hints", "merge", "--policy", "restricted", "--hints", inp["hints"], *many)
    # (admit keeps the default limit: the Memory Manager's hints over 17 nodes take seconds)
    yield ("admit", inp["pod"], "--policy", "single-numa-node", "--cpu-policy", "static", "--json")
    yield ("admit", inp["pod"], "--policy", "best-effort", "--memory-policy", "static",
           "--reserved-memory", f"{inp['memory_node']}:memory=1Mi", "--json")
    yield ("state", "check", inp["state"], "--policy", "static", "--json")


@pytest.mark.parametrize("case", _cases())
def test_saved_topology_reads_as_its_dump(case, scratch, capsys):
    root = _extract(case, scratch / "dump")
    saved_path = scratch / "saved.json"
    code, _, err = _run(capsys, "topology", "--root", str(root), "--save", str(saved_path))
    assert code == 0, err
    saved = json.loads(saved_path.read_text())
    inp = _inputs(scratch, saved)

    # the API: both loaders give what discovery gives
    topo = discover(str(root))
    assert Topology.from_dict(saved) == topo
    assert load_cpu_topology(str(saved_path)).to_dict() == CPUTopology.from_topology(topo).to_dict()

    for cmd in _commands(inp, len(saved["numa_nodes"])):
        from_file = _run(capsys, *cmd, "--topology", str(saved_path))
        from_dump = _run(capsys, *cmd, "--root", str(root))
        assert str(saved_path) not in from_file[2], f"{' '.join(cmd)} rejects the saved file"
        assert from_file == from_dump, " ".join(cmd)
