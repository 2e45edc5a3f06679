"""``pynuma state show|check`` on memory_manager_state files (run as a command)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pynuma.pod import Pod
from pynuma.policy.memorymanager.manager import MemoryManager, machine_from_topology_json
from pynuma.state.memory_checkpoint import save_manager

PROJECT = Path(__file__).resolve().parents[2]
GI = 1 << 30
TOPO = {"numa_nodes": [{"id": 0, "memory_bytes": 8 * GI, "hugepages": {"2048": {"total": 512}}},
                       {"id": 1, "memory_bytes": 8 * GI, "hugepages": {"2048": {"total": 512}}}]}


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", "state", *args], capture_output=True, text=True,
                          cwd=PROJECT)


@pytest.fixture
def files(tmp_path):
    topo = tmp_path / "topo.json"
    topo.write_text(json.dumps(TOPO))
    mm = MemoryManager.from_machine(machine_from_topology_json(TOPO), "0:memory=1Gi;1:memory=1Gi")
    p = Pod.from_dict({"uid": "u1", "name": "db", "containers": [
        {"name": "c", "requests": {"cpu": "2", "memory": "2Gi", "hugepages-2Mi": "64Mi"},
         "limits": {"cpu": "2", "memory": "2Gi", "hugepages-2Mi": "64Mi"}}]})
    mm.allocate(p, p.containers[0])
    state = tmp_path / "memory_manager_state"
    save_manager(mm, str(state))
    return state, topo


def test_show(files):
    state, _ = files
    r = run("show", str(state))
    assert r.returncode == 0, r.stderr
    assert "policy:   Static" in r.stdout
    assert ["u1", "c", "hugepages-2Mi", "0", "64", "MiB"] in [line.split() for line in r.stdout.splitlines()]
    d = json.loads(run("show", str(state), "--json").stdout)
    assert d["entries"]["u1"]["c"][0]["numaAffinity"] == [0]


def test_check_ok_then_mismatch_then_fix(files):
    state, topo = files
    r = run("check", str(state), "--topology", str(topo), "--reserved-memory", "0:memory=1Gi;1:memory=1Gi")
    assert r.returncode == 0, r.stdout + r.stderr
    before = state.read_text()
    r = run("check", str(state), "--topology", str(topo), "--reserved-memory", "0:memory=2Gi;1:memory=1Gi",
            "--fix", "--dry-run")
    assert r.returncode == 1 and "different from the real one" in r.stdout and "would write:" in r.stdout
    assert state.read_text() == before
    r = run("check", str(state), "--topology", str(topo), "--reserved-memory", "0:memory=2Gi;1:memory=1Gi", "--fix")
    assert r.returncode == 0 and "wrote" in r.stdout
    r = run("check", str(state), "--topology", str(topo), "--reserved-memory", "0:memory=2Gi;1:memory=1Gi", "--json")
    assert json.loads(r.stdout)["ok"] is True


def test_assignment_on_missing_node_cannot_be_fixed(files, tmp_path):
    state, _ = files
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"numa_nodes": [{"id": 1, "memory_bytes": 8 * GI, "hugepages": {"2048": {"total": 512}}}]}))
    r = run("check", str(state), "--topology", str(small), "--reserved-memory", "1:memory=1Gi", "--fix")
    assert r.returncode == 1 and "cannot fix" in r.stdout


def test_corrupt_file_is_one_line_and_untouched(files):
    state, topo = files
    raw = json.loads(state.read_text())
    raw["entries"]["u1"]["c"][0]["size"] += 1
    state.write_text(json.dumps(raw))
    text = state.read_text()
    r = run("check", str(state), "--topology", str(topo), "--fix")
    assert r.returncode == 1 and "checkpoint is corrupted" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert state.read_text() == text
