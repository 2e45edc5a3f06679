"""``pynuma fit``, ``pynuma ledger``, ``pynuma release`` and ``pynuma state check DIR`` run as commands."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args, **kw):
    env = dict(os.environ, PYTHONPATH=PROJECT)
    env.pop("PYNUMA_STATE_DIR", None)
    return subprocess.run([sys.executable, "-m", "pynuma", *args], capture_output=True, text=True, env=env, **kw)


def manifest(tmp_path, name, limits, fname=None, volumes=None, requests=None):
    spec = {"containers": [{"name": "app", "resources": {"limits": limits, **({"requests": requests} if requests
                                                                           else {})}}]}
    if volumes:
        spec["volumes"] = volumes
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec}
    path = tmp_path / (fname or f"{name}.yaml")
    path.write_text(json.dumps(doc))
    return str(path)


NODE = "cpu=4,memory=8Gi,pods=110,hugepages-1Gi=0,hugepages-2Mi=64Mi"


def test_fit_seed_case_an_empty_1gi_pool_refuses_2gi(tmp_path):
    pod = manifest(tmp_path, "db", {"cpu": "1", "memory": "1Gi", "hugepages-1Gi": "2Gi"})
    out = run("fit", pod, "--allocatable", NODE, "--json")
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)["pods"][0]
    assert doc["reason"] == "OutOfhugepages-1Gi" and doc["reasons"] == ["Insufficient hugepages-1Gi"]
    assert doc["insufficient"][0]["requested"] == 2 << 30 and doc["insufficient"][0]["capacity"] == 0
    text = run("fit", pod, "--allocatable", NODE)
    assert "OutOfhugepages-1Gi" in text.stdout and text.returncode == 1


def test_fit_validates_hugepages_before_fitting(tmp_path):
    # what the API server rejects never reaches fit: one line naming the field, exit 2
    for name, limits, requests, detail in [
            ("odd", {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "3Mi"}, None, "not positive integer multiple"),
            ("alone", {"hugepages-2Mi": "4Mi"}, None, "require cpu or memory"),
            ("uneq", {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "4Mi"}, {"hugepages-2Mi": "2Mi"},
             "must be equal to hugepages-2Mi limit")]:
        res = run("fit", manifest(tmp_path, name, limits, requests=requests), "--allocatable", NODE, "--json")
        assert res.returncode == 2 and res.stdout == "", name
        assert detail in res.stderr and "spec.containers[0].resources" in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    # what only the node can refuse (an emptyDir medium no container asks for) is a fit answer
    medium = manifest(tmp_path, "med", {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "4Mi"},
                      volumes=[{"name": "hp", "emptyDir": {"medium": "HugePages-1Gi"}}])
    doc = json.loads(run("fit", medium, "--allocatable", NODE, "--json").stdout)["pods"][0]
    assert doc["reason"] == "PodInvalid" and any("medium HugePages-1Gi" in e for e in doc["invalid"])
    good = manifest(tmp_path, "good", {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "4Mi"},
                    volumes=[{"name": "hp", "emptyDir": {"medium": "HugePages-2Mi"}}])
    assert run("fit", good, "--allocatable", NODE).returncode == 0


def test_fit_without_a_reading_of_memory_does_not_invent_zero(tmp_path):
    """A dump without /proc/meminfo: memory is not known, so not checked (and said so)."""
    from tests.fixtures.sysfs_builder import Machine

    root = tmp_path / "root"
    Machine(cores_per_node=2).write(root)
    (root / "proc" / "meminfo").unlink()
    pod = manifest(tmp_path, "p", {"cpu": "1", "memory": "1Gi"})
    out = run("fit", pod, "--root", str(root), "--json")
    doc = json.loads(out.stdout)["pods"][0]
    assert out.returncode == 0, out.stdout + out.stderr
    assert "memory" in doc["unchecked"] and doc["fits"]
    big = manifest(tmp_path, "big", {"cpu": "64", "memory": "1Gi"})
    out = run("fit", big, "--root", str(root), "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["pods"][0]["reason"] == "OutOfcpu"


def test_fit_counts_existing_pods(tmp_path):
    pod = manifest(tmp_path, "b", {"cpu": "3", "memory": "1Gi"})
    existing = manifest(tmp_path, "a", {"cpu": "2", "memory": "1Gi"})
    out = run("fit", pod, "--allocatable", NODE, "--existing", existing, "--json")
    doc = json.loads(out.stdout)["pods"][0]
    assert out.returncode == 1 and doc["reason"] == "OutOfcpu"
    assert doc["insufficient"][0] == {"resource_name": "cpu", "reason": "Insufficient cpu", "requested": 3000,
                                      "used": 2000, "capacity": 4000, "unresolvable": False}


def test_ledger_flow_through_the_commands(tmp_path):
    sd = str(tmp_path)
    assert run("ledger", "init", "--state-dir", sd, "--allocatable", "cpu=4,memory=8Gi,pods=110").returncode == 0
    a = manifest(tmp_path, "a", {"cpu": "3", "memory": "1Gi"})
    b = manifest(tmp_path, "b", {"cpu": "2", "memory": "1Gi"})
    out = run("ledger", "assume", a, "--state-dir", sd, "--ttl", "60", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["assumed"][0]["state"] == "assumed"
    refused = run("ledger", "assume", b, "--state-dir", sd, "--json")
    assert refused.returncode == 1 and json.loads(refused.stdout)["fit"]["reason"] == "OutOfcpu"
    fit = run("fit", b, "--state-dir", sd)
    assert fit.returncode == 1 and "OutOfcpu" in fit.stdout
    assert run("ledger", "bind", "uid-a", "--state-dir", sd).returncode == 0
    show = json.loads(run("ledger", "show", "--state-dir", sd, "--json").stdout)
    assert show["requested"]["cpu"] == "3" and show["free"]["cpu"] == "1" and show["free"]["pods"] == "109"
    assert [e["state"] for e in show["entries"]] == ["bound"]
    forget = run("ledger", "forget", "uid-a", "--state-dir", sd)
    assert forget.returncode == 1 and "release it" in forget.stderr
    assert run("release", "uid-a", "--state-dir", sd).returncode == 0
    again = run("release", "uid-a", "--state-dir", sd)
    assert again.returncode == 1 and "not in the ledger" in again.stderr and "Traceback" not in again.stderr
    assert run("ledger", "assume", b, "--state-dir", sd, "--ttl", "5").returncode == 0
    expired = json.loads(run("ledger", "expire", "--state-dir", sd, "--now", "99999999999", "--json").stdout)
    assert [e["uid"] for e in expired["expired"]] == ["uid-b"]


def test_ledger_offers_pci_devices_as_extended_resources(tmp_path):
    from tests.fsroot.test_devices import PciTree

    root = tmp_path / "root"
    tree = PciTree(root)
    tree.device("0000:3b:00.0", cls="0x030200", vendor="0x10de", device="0x20b0", node="0", driver="nvidia")
    tree.device("0000:d8:00.0", cls="0x030200", vendor="0x10de", device="0x20b0", node="1", driver="nvidia")
    tree.device("0000:af:00.0", cls="0x020000", vendor="0x8086", device="0x1572", node="1")
    sd = tmp_path / "sd"
    sd.mkdir()
    out = run("ledger", "init", "--state-dir", str(sd), "--root", str(root), "--allocatable", "cpu=4,memory=8Gi,pods=9",
              "--pci-resource", "10de=nvidia.com/gpu", "--pci-resource", "class:02=example.com/nic", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["allocatable"]["nvidia.com/gpu"] == "2" and doc["allocatable"]["example.com/nic"] == "1"
    assert {(d["id"], d["numa"]) for d in doc["devices"] if d["resource"] == "nvidia.com/gpu"} == \
        {("0000:3b:00.0", 0), ("0000:d8:00.0", 1)}
    gpus = manifest(tmp_path, "g", {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "3"})
    out = run("fit", gpus, "--state-dir", str(sd), "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["pods"][0]["reason"] == "OutOfnvidia.com/gpu"
    bad = run("ledger", "init", "--state-dir", str(sd), "--root", str(root), "--allocatable", "cpu=1",
              "--pci-resource", "10de=gpu")
    assert bad.returncode == 2 and "extended resource name" in bad.stderr


def test_missing_state_dir_is_one_line_exit_2(tmp_path):
    out = run("ledger", "show")
    assert out.returncode == 2 and "--state-dir" in out.stderr and out.stderr.count("\n") == 1
    out = run("release", "x", "--state-dir", str(tmp_path / "nope"))
    assert out.returncode == 2 and "nope: no such directory" in out.stderr
    (tmp_path / "file").write_text("")
    out = run("release", "x", "--state-dir", str(tmp_path / "file"))
    assert out.returncode == 2 and "file: not a directory" in out.stderr


@pytest.fixture
def unwritable_dir(tmp_path):
    """A directory this process cannot create files in: mode 0555, or (as root) the immutable attribute."""
    import shutil

    sd = tmp_path / "ro"
    sd.mkdir()
    if os.geteuid() != 0:
        os.chmod(sd, 0o555)
        yield sd
        os.chmod(sd, 0o755)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(sd)], capture_output=True).returncode != 0:
        pytest.skip("root ignores permissions and this filesystem has no immutable attribute")
    try:
        yield sd
    finally:
        subprocess.run([chattr, "-i", str(sd)], capture_output=True)


def test_unwritable_state_dir_is_one_line_exit_1(tmp_path, unwritable_dir):
    pod = manifest(tmp_path, "a", {"cpu": "1", "memory": "1Gi"})
    for args in (["ledger", "show", "--state-dir", str(unwritable_dir)],
                 ["admit", pod, "--state-dir", str(unwritable_dir), "--commit",
                  "--allocatable", "cpu=4,memory=4Gi,pods=9"]):
        out = run(*args)
        assert out.returncode == 1, out.stderr
        assert str(unwritable_dir) in out.stderr and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_state_check_dir_without_ledger_finds_checkpoints_naming_different_pods(tmp_path):
    from pynuma.cpuset import CPUSet
    from pynuma.policy.memorymanager.state import Block, MemoryState, MemoryTable, NUMANodeState
    from pynuma.state import cpu_checkpoint, memory_checkpoint

    cpu_checkpoint.write_file(str(tmp_path / "cpu_manager_state"), "static", CPUSet.parse("0,3"),
                              {"pod-x": {"app": CPUSet.parse("1-2")}})
    table = MemoryTable(4 << 30, 0, 4 << 30, 0, 4 << 30)
    memory_checkpoint.write_checkpoint(str(tmp_path / "memory_manager_state"), "Static",
                                       MemoryState({0: NUMANodeState(0, {"memory": table}, [0])}, {}))
    out = run("state", "check", str(tmp_path), "--json")
    doc = json.loads(out.stdout)
    assert out.returncode == 1 and doc["findings"][0]["problem"] == "disagree" and "pod-x" in doc["findings"][0]["detail"]
    memory_checkpoint.write_checkpoint(
        str(tmp_path / "memory_manager_state"), "Static",
        MemoryState({0: NUMANodeState(1, {"memory": MemoryTable(4 << 30, 0, 4 << 30, 1 << 30, 3 << 30)}, [0])},
                    {"pod-x": {"app": [Block((0,), "memory", 1 << 30)]}}))
    assert run("state", "check", str(tmp_path)).returncode == 0


def test_allocatable_shows_pci_devices_offered_as_extended_resources(tmp_path):
    from tests.fsroot.test_devices import PciTree

    tree = PciTree(tmp_path)
    (tmp_path / "sys/devices/system/cpu").mkdir(parents=True, exist_ok=True)
    tree.device("0000:3b:00.0", cls="0x030200", vendor="0x10de", device="0x20b0", node="0", driver="nvidia")
    tree.device("0000:d8:00.0", cls="0x030200", vendor="0x10de", device="0x20b0", node="1", driver="nvidia")
    out = run("allocatable", "--root", str(tmp_path), "--pci-resource", "10de=nvidia.com/gpu", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["capacity"]["nvidia.com/gpu"] == "2" and doc["allocatable"]["nvidia.com/gpu"] == "2"


def test_state_commands_refuse_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "cpu_manager_state"
    os.mkfifo(fifo)
    for action in ("show", "check"):
        out = run("state", action, str(fifo), timeout=60)
        assert out.returncode == 2 and "not a regular file" in out.stderr
    out = run("state", "check", str(tmp_path), timeout=60)
    assert out.returncode == 1 and "unreadable" in out.stdout


def test_readers_do_not_wait_for_a_writer_and_see_only_what_it_committed(tmp_path):
    from pynuma.ledger.store import Ledger
    from pynuma.pod import load_pods

    sd = str(tmp_path)
    assert run("ledger", "init", "--state-dir", sd, "--allocatable", "cpu=4,memory=8Gi,pods=110").returncode == 0
    a = manifest(tmp_path, "a", {"cpu": "3", "memory": "1Gi"})
    assert run("ledger", "assume", a, "--state-dir", sd, "--bind").returncode == 0
    b = manifest(tmp_path, "b", {"cpu": "1", "memory": "1Gi"})
    with Ledger(os.path.join(sd, "pynuma-ledger.db"), timeout=1) as writer, writer.transaction() as tx:
        tx.assume(load_pods(b)[0])  # held open, uncommitted, with the writer's lock
        show = run("ledger", "show", "--state-dir", sd, "--json", timeout=30)
        assert show.returncode == 0, show.stderr
        assert [e["uid"] for e in json.loads(show.stdout)["entries"]] == ["uid-a"]
        fit = run("fit", b, "--state-dir", sd, "--json", timeout=30)
        assert fit.returncode == 0 and json.loads(fit.stdout)["fits"], fit.stderr
    show = json.loads(run("ledger", "show", "--state-dir", sd, "--json").stdout)
    assert [e["uid"] for e in show["entries"]] == ["uid-a", "uid-b"]
