"""Issue 12 item 5: concurrent ``pynuma admit --commit`` on one state dir, and kill -9 during a commit.

``PYNUMA_ADMIT_ROUNDS`` (default 3) rounds of 8 processes, each admitting a
Guaranteed pod with exclusive CPUs and static-Memory-Manager memory into
the same state dir, while 8 more release the pods of two rounds before.  After every round: every pod reported committed is in
the ledger and in both checkpoint files, no CPU belongs to two pods, the
two files name the same pods, and no temp file is left.  Then ``kill -9``:
a process killed right after its commit, between the two file renames,
leaves files behind the ledger, which ``state check`` reports and the next
run repairs; processes killed at random points never leave a half-written
file, a lost acknowledged pod or a temp file past the next run.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROUNDS = int(os.environ.get("PYNUMA_ADMIT_ROUNDS", "3"))
PROCS = 8
NODES, CORES, THREADS = 4, 8, 2  # 64 CPUs, CPU c and c+32 are siblings


def _env():
    env = dict(os.environ, PYTHONPATH=PROJECT)
    env.pop("PYNUMA_STATE_DIR", None)
    return env


@pytest.fixture
def node(tmp_path):
    """A topology file with CPUs and NUMA memory (a saved ``pynuma topology --json`` shape)."""
    cpus = [{"id": t * NODES * CORES + c, "package": c // CORES, "node": c // CORES, "core": c}
            for t in range(THREADS) for c in range(NODES * CORES)]
    doc = {"cpus": cpus, "numa_nodes": [{"id": n, "memory_bytes": 16 << 30, "hugepages": {}} for n in range(NODES)]}
    path = tmp_path / "topo.json"
    path.write_text(json.dumps(doc))
    sd = tmp_path / "state"
    sd.mkdir()
    return str(path), str(sd)


def _pod(tmp_path, uid, cpus=1):
    res = {"cpu": str(cpus), "memory": "256Mi"}
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": uid, "uid": uid},
           "spec": {"containers": [{"name": "app", "resources": {"requests": res, "limits": res}}]}}
    path = tmp_path / f"{uid}.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _admit_cmd(pod, topo, sd):
    return [sys.executable, "-m", "pynuma", "admit", pod, "--topology", topo, "--state-dir", sd, "--commit",
            "--json", "--reserved-cpus", "0,32", "--memory-policy", "static", "--reserved-memory",
            "0:memory=1Gi", "--allocatable", "cpu=62,memory=60Gi,pods=200"]


def _files_agree(sd):
    """The two checkpoints parse, name the same containers, and no CPU is in two pods."""
    from pynuma.state import cpu_checkpoint, memory_checkpoint

    with open(os.path.join(sd, "cpu_manager_state")) as f:
        cpu = cpu_checkpoint.load(f.read(), configured_policy="static")
    with open(os.path.join(sd, "memory_manager_state")) as f:
        mem = memory_checkpoint.parse_checkpoint(f.read(), policy="Static")
    owner = {}
    for pod, conts in cpu.assignments.items():
        for cset in conts.values():
            for c in cset:
                assert owner.setdefault(c, pod) == pod, f"CPU {c} in pods {owner[c]} and {pod}"
    assert not any(c in cpu.default for c in owner), "an exclusive CPU is also in the shared pool"
    cpu_pods = {(p, c) for p, cs in cpu.assignments.items() for c in cs}
    mem_pods = {(p, c) for p, cs in (mem.state.assignments or {}).items() for c in cs}
    assert cpu_pods == mem_pods, f"files disagree: {sorted(cpu_pods ^ mem_pods)}"
    return {p for p, _ in cpu_pods}


def _ledger_pods(sd):
    from pynuma.ledger.store import Ledger

    with Ledger(os.path.join(sd, "pynuma-ledger.db"), repair=False) as led:
        return {e.uid for e in led.entries()}


def test_eight_processes_committing_to_one_state_dir_lose_nothing(tmp_path, node):
    topo, sd = node
    committed = set()
    for r in range(ROUNDS):
        procs = [subprocess.Popen(_admit_cmd(_pod(tmp_path, f"r{r}-p{i}"), topo, sd), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=_env()) for i in range(PROCS)]
        # meanwhile the pods of two rounds ago leave, released by as many processes (the node never fills up)
        gone = [f"r{r - 2}-p{i}" for i in range(PROCS)] if r >= 2 else []
        releases = [subprocess.Popen([sys.executable, "-m", "pynuma", "release", uid, "--state-dir", sd],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
                    for uid in gone]
        for p in releases:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        committed -= set(gone)
        for i, p in enumerate(procs):
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
            doc = json.loads(out)
            assert doc["committed"] is True
            committed.add(f"r{r}-p{i}")
        in_files = _files_agree(sd)
        assert committed == in_files, f"files differ from what was committed: {sorted(committed ^ in_files)}"
        assert _ledger_pods(sd) == committed
        assert not [n for n in os.listdir(sd) if n.endswith(".tmp")]
        check = subprocess.run([sys.executable, "-m", "pynuma", "state", "check", sd], capture_output=True, text=True,
                               env=_env())
        assert check.returncode == 0, check.stdout + check.stderr
    assert len(committed) == min(ROUNDS, 2) * PROCS


KILL_AFTER_FIRST_RENAME = """
import os, signal, sys
from pynuma.state import atomic
real = atomic.write_atomic
def dying(path, data, mode=None):
    real(path, data, mode)
    if os.path.basename(path) == "cpu_manager_state":
        os.kill(os.getpid(), signal.SIGKILL)   # committed, CPU file renamed, memory file not yet
atomic.write_atomic = dying
import pynuma.ledger.checkpoints as ck
ck.write_atomic = dying
from pynuma.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_kill_between_the_two_file_writes_is_reported_then_repaired(tmp_path, node):
    topo, sd = node
    ok = subprocess.run(_admit_cmd(_pod(tmp_path, "a"), topo, sd), capture_output=True, text=True, env=_env())
    assert ok.returncode == 0, ok.stderr
    cmd = _admit_cmd(_pod(tmp_path, "b"), topo, sd)
    killed = subprocess.run([sys.executable, "-c", KILL_AFTER_FIRST_RENAME, *cmd[3:]], capture_output=True, text=True,
                            env=_env())
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # the pod was committed (the ledger has it) but the memory file is behind and disagrees with the CPU file
    assert _ledger_pods(sd) == {"a", "b"}
    check = subprocess.run([sys.executable, "-m", "pynuma", "state", "check", sd, "--json"], capture_output=True,
                           text=True, env=_env())
    assert check.returncode == 1
    problems = {(f["file"], f["problem"]) for f in json.loads(check.stdout)["findings"]}
    assert ("memory_manager_state", "behind") in problems and ("memory_manager_state", "disagree") in problems
    # the next run repairs the files before anything else
    again = subprocess.run(_admit_cmd(_pod(tmp_path, "c"), topo, sd), capture_output=True, text=True, env=_env())
    assert again.returncode == 0, again.stderr
    assert _files_agree(sd) == {"a", "b", "c"} == _ledger_pods(sd)


def test_kill_9_at_random_points_never_leaves_half_written_files(tmp_path, node):
    topo, sd = node
    rng = random.Random(7)
    acknowledged = set()
    for r in range(ROUNDS):
        procs = {}
        for i in range(PROCS):
            uid = f"k{r}-{i}"
            procs[uid] = subprocess.Popen(_admit_cmd(_pod(tmp_path, uid), topo, sd), stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, env=_env())
        for uid in rng.sample(sorted(procs), PROCS // 2):
            time.sleep(rng.uniform(0.0, 0.4))
            procs[uid].send_signal(signal.SIGKILL)
        for uid, p in procs.items():
            out, _ = p.communicate(timeout=300)
            if p.returncode == 0 and json.loads(out)["committed"]:
                acknowledged.add(uid)
        # at any point each file is whole (parses with a valid checksum); only a temp may be left over
        from pynuma.state import cpu_checkpoint, memory_checkpoint

        for name, load in (("cpu_manager_state", cpu_checkpoint.load),
                           ("memory_manager_state", memory_checkpoint.parse_checkpoint)):
            path = os.path.join(sd, name)
            if os.path.exists(path):
                with open(path) as f:
                    load(f.read())
        # the next run: files caught up with the ledger, no temp file survives it
        nxt = subprocess.run(_admit_cmd(_pod(tmp_path, f"next{r}"), topo, sd), capture_output=True, text=True,
                             env=_env())
        assert nxt.returncode == 0, nxt.stderr
        acknowledged.add(f"next{r}")
        assert not [n for n in os.listdir(sd) if n.endswith(".tmp")]
        in_ledger = _ledger_pods(sd)
        assert acknowledged <= in_ledger, f"acknowledged pods lost: {sorted(acknowledged - in_ledger)}"
        assert _files_agree(sd) == in_ledger
