"""With a state dir the agent admits through the node's ledger, shared with every other process."""
from __future__ import annotations

import os

import pytest

from pynuma.agent import AgentConfig, NodeAgent
from pynuma.cpuset import CPUSet
from pynuma.quantity import Quantity
from pynuma.ledger.store import DB_NAME, Ledger
from tests.agent.test_nrt import guaranteed

STATIC = dict(cpu_manager_policy="static", topology_manager_policy="single-numa-node", reserved_system_cpus="0")


def test_admission_is_a_ledger_entry_and_the_files_derive_from_it(node_root, tmp_path):
    state = str(tmp_path / "state")
    with NodeAgent(node_root, AgentConfig(**STATIC), state_dir=state) as agent:
        report = agent.admit(guaranteed("p1", 2))
        assert report.admit
        cpus = report.containers[0].cpus
        with Ledger(os.path.join(state, DB_NAME)) as other:  # another process's view of the node
            entry = other.get("p1")
            assert entry is not None and entry.state == "bound"
            assert str(entry.placement.cpus["c"]) == cpus
            assert other.check_checkpoints() == []  # cpu_manager_state says the same
        assert agent.release("p1") and not agent.release("p1")
        with Ledger(os.path.join(state, DB_NAME)) as other:
            assert other.get("p1") is None


def test_pods_admitted_elsewhere_count_and_a_cpu_is_never_given_twice(node_root, tmp_path):
    state = str(tmp_path / "state")
    with NodeAgent(node_root, AgentConfig(**STATIC), state_dir=state) as a, \
            NodeAgent(node_root, AgentConfig(**STATIC), state_dir=state, identity="replica-b") as b:
        got = [x.admit(guaranteed(f"p{i}", 2)) for i, x in enumerate((a, b, a))]
        assert [r.admit for r in got] == [True, True, True]
        held = [r.containers[0].cpus for r in got]
        assert len(set(held)) == 3
        a.sync()  # picks up b's pod
        assert {p.uid for p in a.admitted()} == {"p0", "p1", "p2"}
        # 7 allocatable CPUs, 6 held: a 2-CPU pod no longer fits
        late = b.admit(guaranteed("p3", 2))
        assert not late.admit and late.reason


def test_fit_rejects_what_exceeds_allocatable(node_root, tmp_path):
    with NodeAgent(node_root, AgentConfig(), state_dir=str(tmp_path / "s")) as agent:
        report = agent.admit(guaranteed("big", 9))
        assert not report.admit and "cpu" in (report.reason + report.message).lower()


def test_existing_checkpoints_are_imported(node_root, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    from pynuma.cpuset import CPUSet
    from pynuma.state.cpu_checkpoint import write_file

    write_file(str(state / "cpu_manager_state"), "static", CPUSet.parse("0-1,4-7"), {"old": {"c": CPUSet.parse("2-3")}})
    with NodeAgent(node_root, AgentConfig(**STATIC), state_dir=str(state)) as agent:
        assert "old" in {p.uid for p in agent.admitted()}
        zone0 = agent.nrt()["zones"][0]
        assert next(r for r in zone0["resources"] if r["name"] == "cpu")["available"] == "1"  # 4 - cpu0 - 2,3


def test_ledger_totals_are_exported(node_root, tmp_path):
    pytest.importorskip("prometheus_client")
    from pynuma.export.prometheus import render

    with NodeAgent(node_root, AgentConfig(**STATIC), state_dir=str(tmp_path / "s")) as agent:
        assert agent.admit(guaranteed("p1", 2, "1Gi")).admit
        text = render(agent).decode()
    from prometheus_client.parser import text_string_to_metric_families

    got = {s.labels["resource"]: s.value for f in text_string_to_metric_families(text)
           if f.name == "pynuma_ledger_requested" for s in f.samples}
    assert got["cpu"] == 2 and got["memory"] == 1 << 30


def test_a_changed_cpu_policy_is_refused_like_the_kubelet(node_root, tmp_path):
    from pynuma.errors import CheckpointError

    state = str(tmp_path / "s")
    with NodeAgent(node_root, AgentConfig(**STATIC), state_dir=state) as agent:
        agent.admit(guaranteed("p1", 1))
    fds = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(CheckpointError, match="reserved cpus"):  # the kubelet's words for a changed reservation
        NodeAgent(node_root, AgentConfig(**dict(STATIC, reserved_system_cpus="0-1")), state_dir=state)
    with pytest.raises(CheckpointError, match="CPU policy"):
        NodeAgent(node_root, AgentConfig(), state_dir=state)
    assert sorted(os.listdir("/proc/self/fd")) == fds  # a refused agent leaves nothing open


def test_a_manifest_is_admitted_as_the_api_server_hands_it_over(node_root, tmp_path):
    # limits only: the API server makes them the requests, so the pod is Guaranteed and gets exclusive CPUs
    res = {"cpu": "2", "memory": "1Gi"}
    raw = {"metadata": {"name": "lim", "uid": "lim"}, "spec": {"containers": [{"name": "c", "resources": {"limits": res}}]}}
    state = str(tmp_path / "state")
    with NodeAgent(node_root, AgentConfig(**STATIC), state_dir=state) as agent:
        report = agent.admit(raw)
        assert report.admit and len(CPUSet.parse(report.containers[0].cpus)) == 2
        with Ledger(os.path.join(state, DB_NAME)) as other:
            assert other.requested()["memory"] == Quantity.parse("1Gi")
