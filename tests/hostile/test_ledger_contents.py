"""A ledger whose SQLite file is sound but whose *contents* have the wrong types, and a read-only ledger.

Every value read back from the database (the ``config`` document, every
column of every table) is checked once per read: a value pynuma never
writes is one error naming the database and the key or column, exit 1,
never a traceback.  Readers (``ledger show``, ``fit --state-dir``) open the
database read-only and need no write access to the directory or its files.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile

import pytest

from pynuma.cpuset import CPUSet
from pynuma.errors import CheckpointError, InputError
from pynuma.ledger.store import Ledger, Placement
from pynuma.pod import Pod
from pynuma.policy.memorymanager.state import Block

from ._fds import open_fds

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU = "example.com/gpu"


def _pod(uid, cpu="2", gpu="1"):
    res = {"cpu": cpu, "memory": "1Gi", **({GPU: gpu} if gpu else {})}
    return Pod.from_dict({"name": f"p-{uid}", "uid": uid, "containers": [{"name": "app", "requests": res,
                                                                            "limits": res}]})


def _make_ledger(state_dir):
    """A ledger with every config field set and one assumed pod holding CPUs, memory and a device."""
    path = os.path.join(state_dir, "pynuma-ledger.db")
    with Ledger(path) as led:
        led.configure(allocatable={"cpu": "8", "memory": "8Gi", "pods": "10"}, cpu_policy="static",
                      cpus=CPUSet.parse("0-7"),
                      memory={"machine": [[0, 8 << 30, [[2048, 4]]]], "reserved": {"0": {"memory": 1 << 30}}},
                      devices=[{"resource": GPU, "id": "g0", "numa": 0, "healthy": True},
                               {"resource": GPU, "id": "g1", "numa": [0], "healthy": True}],
                      node_name="n1", labels={"zone": "a"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
        led.assume(_pod("u1"), ttl=3600, placement=Placement(cpus={"app": CPUSet.parse("2-3")},
                                                             memory={"app": [Block((0,), "memory", 1 << 30)]},
                                                             devices={"app": {GPU: ["g0"]}}))
    return path


def _edit_config(path, change):
    conn = sqlite3.connect(path)
    cfg = json.loads(conn.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0])
    change(cfg)
    conn.execute("UPDATE meta SET value=? WHERE key='config'", (json.dumps(cfg),))
    conn.commit()
    conn.close()


def _edit_rows(path, statement):
    conn = sqlite3.connect(path)
    conn.execute(statement)
    conn.commit()
    conn.close()


def _setter(*keys_and_value):
    *keys, value = keys_and_value

    def change(cfg):
        for k in keys[:-1]:
            cfg = cfg[k]
        cfg[keys[-1]] = value
    return change


# what is changed -> the key or column the error must name
CONFIG_DAMAGE = {
    "memory a string": (_setter("memory", "x"), "config.memory: "),
    "allocatable cpu not a quantity": (_setter("allocatable", "cpu", "abc"),
                                       "config.allocatable.cpu: 'abc' is not a quantity"),
    "allocatable a list": (_setter("allocatable", [1]), "config.allocatable: "),
    "allocatable beyond any quantity": (_setter("allocatable", "cpu", 10 ** 400), "config.allocatable.cpu: "),
    "allocatable negative": (_setter("allocatable", "memory", -1), "config.allocatable.memory: "),
    "allocatable a fraction": (_setter("allocatable", "pods", 1.5), "config.allocatable.pods: "),
    "allocatable a boolean": (_setter("allocatable", "pods", True), "config.allocatable.pods: "),
    "devices a string": (_setter("devices", "x"), "config.devices: "),
    "device resource a number": (_setter("devices", [{"resource": 1}]), "config.devices[0].resource: "),
    "device without an id": (_setter("devices", [{"resource": GPU}]), "config.devices[0].id: "),
    "device numa a string": (_setter("devices", [{"resource": GPU, "id": "g0", "numa": "0"}]),
                             "config.devices[0].numa: "),
    "device healthy a string": (_setter("devices", [{"resource": GPU, "id": "g0", "healthy": "yes"}]),
                                "config.devices[0].healthy: "),
    "taints a string": (_setter("taints", "x"), "config.taints: "),
    "taint effect a number": (_setter("taints", [{"key": "k", "effect": 1}]), "config.taints[0].effect: "),
    "labels a list": (_setter("labels", ["a"]), "config.labels: "),
    "label value a number": (_setter("labels", {"zone": 1}), "config.labels.zone: "),
    "cpus not a cpulist": (_setter("cpus", "abc"), "config.cpus: "),
    "cpus beyond any machine": (_setter("cpus", "0-99999"), "config.cpus: "),
    "cpus a number": (_setter("cpus", 7), "config.cpus: "),
    "cpu policy a number": (_setter("cpu_policy", 1), "config.cpu_policy: "),
    "memory machine not a list": (_setter("memory", "machine", 1), "config.memory.machine: "),
    "memory node id a string": (_setter("memory", "machine", [["0", 8 << 30, []]]), "config.memory.machine[0][0]: "),
    "memory page size zero": (_setter("memory", "machine", [[0, 8 << 30, [[0, 4]]]]),
                              "config.memory.machine[0][2][0][0]: "),
    "memory nothing reserved": (_setter("memory", "reserved", {}), "config.memory.reserved: "),
    "memory reserved not bytes": (_setter("memory", "reserved", {"0": {"memory": "1Gi"}}),
                                  "config.memory.reserved.0.memory: "),
    "partial a string": (_setter("partial", "yes"), "config.partial: "),
    "unknown a string": (_setter("unknown", "cpu"), "config.unknown: "),
    "node name a number": (_setter("node_name", 5), "config.node_name: "),
    "config a list": (lambda cfg: cfg.clear() or cfg.update({"allocatable": {"x": [1]}}), "config.allocatable.x: "),
}

ROW_DAMAGE = {
    "uid a blob": ("UPDATE pods SET uid=CAST(uid AS BLOB)", "pods.uid: "),
    "deadline text": ("UPDATE pods SET deadline='x'", "pods.deadline (pod 'u1'): "),
    "assumed_at infinite": ("UPDATE pods SET assumed_at=9e999", "pods.assumed_at (pod 'u1'): "),
    "bound_at text": ("UPDATE pods SET bound_at='soon'", "pods.bound_at (pod 'u1'): "),
    "name a blob": ("UPDATE pods SET name=X'41'", "pods.name (pod 'u1'): "),
    "namespace a blob": ("UPDATE pods SET namespace=X'41'", "pods.namespace (pod 'u1'): "),
    "generation text": ("UPDATE pods SET generation='x'", "pods.generation (pod 'u1'): "),
    "requests a list": ("UPDATE pods SET requests='[1]'", "pods.requests (pod 'u1'): "),
    "requests a blob": ("UPDATE pods SET requests=X'7B7D'", "pods.requests (pod 'u1'): "),
    "request a string": ("UPDATE pods SET requests='{\"cpu\": \"2\"}'", "pods.requests.cpu (pod 'u1'): "),
    "cpu container a blob": ("UPDATE cpus SET container=X'41'", "cpus.container (pod 'u1'): "),
    "cpu pod a blob": ("UPDATE cpus SET pod_uid=X'41'", "cpus.pod_uid: "),
    "memory size text": ("UPDATE memory SET size='x'", "memory.size (pod 'u1'): "),
    "memory size negative": ("UPDATE memory SET size=-1", "memory.size (pod 'u1'): "),
    "memory type a blob": ("UPDATE memory SET type=X'41'", "memory.type (pod 'u1'): "),
    "memory numa not a list": ("UPDATE memory SET numa='{}'", "memory.numa (pod 'u1'): "),
    "memory numa not JSON": ("UPDATE memory SET numa='[0'", "memory.numa (pod 'u1'): "),
    "memory numa a blob": ("UPDATE memory SET numa=X'5B305D'", "memory.numa (pod 'u1'): "),
    "memory numa beyond any node": ("UPDATE memory SET numa='[5000]'", "memory.numa (pod 'u1'): "),
    "device id a blob": ("UPDATE devices SET device_id=X'41'", "devices.device_id (pod 'u1'): "),
    "device resource a blob": ("UPDATE devices SET resource=X'41'", "devices.resource (pod 'u1'): "),
    "config a blob": ("UPDATE meta SET value=CAST(value AS BLOB) WHERE key='config'", "meta.config: "),
}


def _damage(path, what):
    if what in CONFIG_DAMAGE:
        _edit_config(path, CONFIG_DAMAGE[what][0])
        return CONFIG_DAMAGE[what][1]
    _edit_rows(path, ROW_DAMAGE[what][0])
    return ROW_DAMAGE[what][1]


@pytest.mark.parametrize("what", sorted(CONFIG_DAMAGE) + sorted(ROW_DAMAGE))
def test_a_value_of_the_wrong_type_is_one_error_naming_the_database_and_the_key(tmp_path, what):
    path = _make_ledger(str(tmp_path))
    key = _damage(path, what)
    want = f"^{re.escape(path)}: damaged: {re.escape(key)}"
    before = open_fds()
    with pytest.raises(CheckpointError, match=want):
        Ledger(path)  # a writer: opening it reads the ledger to repair the checkpoint files
    with Ledger(path, repair=False) as reader:  # a reader opens it without reading it all
        with pytest.raises(CheckpointError, match=want) as err:
            reader.snapshot()
        with pytest.raises(CheckpointError, match=want):
            reader.expire(now=1e12)
    assert "\n" not in str(err.value)
    assert open_fds() == before


def test_a_block_on_a_node_the_machine_lacks_names_the_database(tmp_path):
    path = _make_ledger(str(tmp_path))
    _edit_rows(path, "UPDATE memory SET numa='[3]'")  # well-typed, but no such NUMA node in config.memory
    with pytest.raises(CheckpointError, match=f"^{re.escape(path)}: damaged: "):
        Ledger(path)


def test_a_quantity_string_in_allocatable_means_what_it_means_to_configure(tmp_path):
    path = _make_ledger(str(tmp_path))
    _edit_config(path, _setter("allocatable", "cpu", "4"))
    with Ledger(path, repair=False) as led:
        assert led.config().allocatable["cpu"] == 4000  # 4 cores, in millicores
        assert led.snapshot().node_state().free("cpu") == 2000


def test_a_sound_ledger_reads_back_what_was_written(tmp_path):
    path = _make_ledger(str(tmp_path))
    with Ledger(path, repair=False) as led:
        view = led.snapshot()
    cfg = view.config
    assert cfg.allocatable == {"cpu": 8000, "memory": 8 << 30, "pods": 10}
    assert cfg.memory == {"machine": [[0, 8 << 30, [[2048, 4]]]], "reserved": {"0": {"memory": 1 << 30}}}
    assert [d["id"] for d in cfg.devices] == ["g0", "g1"] and cfg.taints[0]["effect"] == "NoSchedule"
    (entry,) = view.entries
    assert entry.requests == {"cpu": 2000, "memory": 1 << 30, GPU: 1}
    assert entry.placement.memory == {"app": [Block((0,), "memory", 1 << 30)]}


@pytest.mark.parametrize("setting", [{"devices": "x"}, {"devices": [{"resource": GPU}]}, {"taints": "x"},
                                     {"labels": {"a": 1}}, {"memory": {"machine": [], "reserved": {}}},
                                     {"allocatable": {"cpu": "-1"}}])
def test_configure_refuses_what_a_later_read_would_call_damaged(tmp_path, setting):
    path = _make_ledger(str(tmp_path))
    with Ledger(path) as led:
        generation = led.snapshot().generation
        with pytest.raises(InputError, match="^ledger configuration: config[.]"):
            led.configure(**setting)
        assert led.snapshot().generation == generation  # nothing written
        led.snapshot()  # still sound


# -- the command line -------------------------------------------------------------------------------


def _env():
    env = dict(os.environ, PYTHONPATH=PROJECT)
    env.pop("PYNUMA_STATE_DIR", None)
    return env


def _commands(sd, pod, topo):
    admit = ["admit", pod, "--topology", topo, "--state-dir", sd, "--reserved-cpus", "0", "--allocatable",
             "cpu=8,memory=8Gi,pods=10"]
    return [["ledger", "show", "--state-dir", sd], ["ledger", "show", "--json", "--state-dir", sd],
            ["ledger", "expire", "--state-dir", sd], ["ledger", "assume", pod, "--state-dir", sd],
            ["ledger", "bind", "u1", "--state-dir", sd], ["ledger", "forget", "u1", "--state-dir", sd],
            ["release", "u1", "--state-dir", sd], ["fit", pod, "--state-dir", sd], ["state", "check", sd],
            ["ledger", "init", "--state-dir", sd, "--allocatable", "cpu=8,memory=8Gi,pods=10"],
            admit, admit + ["--commit"]]


def _files(tmp_path):
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "uid": "u2"},
                               "spec": {"containers": [{"name": "c", "resources": {
                                   "limits": {"cpu": "1", "memory": "1Gi"}}}]}}))
    topo = tmp_path / "topo.json"
    topo.write_text(json.dumps({"cpus": [{"id": c, "package": 0, "node": 0, "core": c} for c in range(8)],
                                "numa_nodes": [{"id": 0, "memory_bytes": 8 << 30, "hugepages": {}}]}))
    return str(pod), str(topo)


@pytest.mark.parametrize("what", ["memory a string", "allocatable cpu not a quantity", "devices a string",
                                  "taints a string", "uid a blob", "deadline text"])
def test_every_command_reports_damaged_contents_in_one_line(tmp_path, what):
    sd = tmp_path / "state"
    sd.mkdir()
    path = _make_ledger(str(sd))
    key = _damage(path, what)
    pod, topo = _files(tmp_path)
    procs = [(cmd, subprocess.Popen([sys.executable, "-m", "pynuma", *cmd], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=_env(), cwd=str(tmp_path)))
             for cmd in _commands(str(sd), pod, topo)]
    for cmd, proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, (cmd, err)
        assert err.count("\n") == 1 and "Traceback" not in err, (cmd, err)
        assert re.match(r"^pynuma [a-z ]+: error: " + re.escape(f"{path}: damaged: {key}"), err), (cmd, err)


# -- readers need no write access ---------------------------------------------------------------------


def test_a_reader_opens_read_only_and_becomes_a_writer_only_when_asked_to_write(tmp_path):
    path = _make_ledger(str(tmp_path))
    os.unlink(path + ".lock")
    with Ledger(path, repair=False) as led:
        assert led.snapshot().entry("u1") is not None
        assert not os.path.exists(path + ".lock")  # a reader takes no lock, so it needs no lock file
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            led._conn.execute("DELETE FROM pods")
        led.release("u1")
        assert os.path.exists(path + ".lock")
        assert led.snapshot().entries == ()
    with Ledger(path, repair=False) as led:
        assert led.snapshot().entries == ()


def _unprivileged():
    """``(command prefix, python)`` that runs pynuma as a user without write access, else skip."""
    if os.geteuid() != 0:
        return [], sys.executable
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot drop privileges")
    prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    for python in dict.fromkeys([sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"]):
        try:
            ok = subprocess.run(prefix + [python, "-c", "import pynuma.ledger.store, pynuma.cli"], env=_env(),
                                cwd="/", capture_output=True, timeout=60).returncode == 0
        except OSError:
            continue
        if ok:
            return prefix, python
    pytest.skip("no python the unprivileged user may run imports pynuma from this checkout")


@pytest.fixture
def shared_dir():
    """A directory every user may read (pytest's tmp_path is private to its owner)."""
    path = tempfile.mkdtemp(prefix="pynuma-ro-")
    os.chmod(path, 0o755)
    yield path
    for root, dirs, _ in os.walk(path):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
    os.chmod(path, 0o755)
    shutil.rmtree(path)


def _read_only(directory):
    for name in os.listdir(directory):
        p = os.path.join(directory, name)
        os.chmod(p, stat.S_IMODE(os.stat(p).st_mode) & ~0o222)
    os.chmod(directory, 0o555)


def _state(shared_dir):
    sd = os.path.join(shared_dir, "state")
    os.mkdir(sd)
    os.chmod(sd, 0o755)
    path = _make_ledger(sd)
    pod = os.path.join(shared_dir, "pod.json")
    with open(pod, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "uid": "u2"},
                   "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}, f)
    os.chmod(pod, 0o644)
    return sd, path, pod


def _run(prefix, python, *args):
    return subprocess.run(prefix + [python, "-m", "pynuma", *args], capture_output=True, text=True, env=_env(),
                          cwd="/", timeout=120)


def test_readers_need_no_write_access_to_the_state_dir(shared_dir):
    prefix, python = _unprivileged()
    sd, path, pod = _state(shared_dir)
    _read_only(sd)
    listing = sorted(os.listdir(sd))
    res = _run(prefix, python, "ledger", "show", "--json", "--state-dir", sd)
    assert res.returncode == 0, res.stderr
    shown = json.loads(res.stdout)
    assert [e["uid"] for e in shown["entries"]] == ["u1"] and shown["generation"] >= 2
    res = _run(prefix, python, "ledger", "show", "--state-dir", sd)
    assert res.returncode == 0 and "u1" in res.stdout, res.stderr
    res = _run(prefix, python, "fit", pod, "--state-dir", sd)
    assert res.returncode == 0 and "fits" in res.stdout, res.stderr
    assert sorted(os.listdir(sd)) == listing  # nothing was created beside the database
    # a writer still needs write access: one line naming what it could not open
    res = _run(prefix, python, "ledger", "expire", "--state-dir", sd)
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "Permission denied" in res.stderr, res.stderr


def test_a_read_only_reader_sees_what_a_running_writer_committed(shared_dir):
    prefix, python = _unprivileged()
    sd, path, pod = _state(shared_dir)
    with Ledger(path) as writer:  # open, so its -wal and -shm files stay beside the database
        writer.assume(_pod("u3", cpu="1", gpu=None))
        _read_only(sd)
        try:
            res = _run(prefix, python, "ledger", "show", "--json", "--state-dir", sd)
        finally:
            os.chmod(sd, 0o755)
    assert res.returncode == 0, res.stderr
    assert [e["uid"] for e in json.loads(res.stdout)["entries"]] == ["u1", "u3"]


def test_a_log_that_cannot_be_read_without_write_access_is_one_clear_line(shared_dir):
    prefix, python = _unprivileged()
    sd, path, _ = _state(shared_dir)
    # what a writer killed with commits still in its log leaves, once its -shm file is gone
    with Ledger(path) as writer:
        writer.assume(_pod("u3", cpu="1", gpu=None))
        copy = os.path.join(shared_dir, "copy")
        os.mkdir(copy)
        for suffix in ("", "-wal"):
            shutil.copy(path + suffix, os.path.join(copy, "pynuma-ledger.db" + suffix))
    assert os.path.getsize(os.path.join(copy, "pynuma-ledger.db-wal")) > 0
    _read_only(copy)
    res = _run(prefix, python, "ledger", "show", "--state-dir", copy)
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert "pynuma-ledger.db-wal" in res.stderr and "Traceback" not in res.stderr
