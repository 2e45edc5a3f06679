"""``pynuma apply`` / ``evict`` / ``oom-adjust`` run as commands on fake roots and a child process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pynuma.apply.checks import CAP_SYS_RESOURCE, has_capability
from pynuma.cpuset import CPUSet
from pynuma.fsroot import FsRoot
from pynuma.policy.memorymanager.state import Block, MemoryState
from pynuma.state import cpu_checkpoint, memory_checkpoint
from tests.fixtures import cgroupfs

PROJECT = Path(__file__).resolve().parents[2]
POD = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, uid: 11-22}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "1", memory: 1Gi}}
"""


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", *args], capture_output=True, text=True, cwd=PROJECT,
                          timeout=60)


def one_line_error(r, code):
    assert r.returncode == code, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    return r.stderr


@pytest.fixture
def node(tmp_path):
    root = cgroupfs.build(str(tmp_path / "root"), "v2", "systemd", pids=[777])
    (tmp_path / "root/proc/meminfo").write_text("MemTotal: 8388608 kB\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    return root, str(pod)


def _snapshot(root):
    return sorted((d, sorted(f)) for d, _, f in os.walk(root))


def test_dry_run_prints_the_writes_and_needs_no_target_flag(node):
    root, pod = node
    before = _snapshot(root)
    r = run("apply", pod, "--root", root, "--dry-run")
    assert r.returncode == 0, r.stderr
    pod_dir = f"{root}/sys/fs/cgroup/kubepods.slice/kubepods-pod11_22.slice"
    assert r.stdout.splitlines()[0] == f"mkdir {pod_dir}"
    assert f"write {pod_dir}/memory.max 1073741824  (memory limit)" in r.stdout
    assert _snapshot(root) == before


def test_a_fake_root_is_written_only_with_target_root(node):
    root, pod = node
    err = one_line_error(run("apply", pod, "--root", root), 1)
    assert "--target-root" in err and root in err
    r = run("apply", pod, "--root", root, "--target-root", "--pid", "app=777")
    assert r.returncode == 0, r.stderr
    app = Path(root, "sys/fs/cgroup/kubepods.slice/kubepods-pod11_22.slice/cri-containerd-app.scope")
    assert (app / "cgroup.procs").read_text() == "777"
    assert Path(root, "proc/777/oom_score_adj").read_text() == "-997"
    again = run("apply", pod, "--root", root, "--target-root", "--pid", "app=777")
    assert again.stdout.strip() == "nothing to change: the cgroups already match"


def test_state_dir_placements_reach_cpuset_files(node, tmp_path):
    root, pod = node
    state = tmp_path / "state"
    state.mkdir()
    cpu_checkpoint.write_file(str(state / "cpu_manager_state"), "static", CPUSet.parse("0,3"),
                              {"11-22": {"app": CPUSet.parse("1-2")}})
    memory_checkpoint.write_checkpoint(str(state / "memory_manager_state"), "Static",
                                       MemoryState({}, {"11-22": {"app": [Block((0,), "memory", 1 << 30)]}}))
    r = run("apply", pod, "--root", root, "--target-root", "--state-dir", str(state), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    writes = {s["path"].rsplit("/", 1)[1]: s["value"] for s in doc["pods"][0]["steps"]
              if s["path"].endswith(("cpuset.cpus", "cpuset.mems"))}
    assert writes == {"cpuset.cpus": "1-2", "cpuset.mems": "0"}
    assert doc["cgroup_version"] == 2 and doc["driver"] == "systemd" and doc["pods"][0]["uid"] == "11-22"


def test_corrupt_checkpoint_is_one_line(node, tmp_path):
    root, pod = node
    (tmp_path / "cpu_manager_state").write_text("{nope")
    err = one_line_error(run("apply", pod, "--root", root, "--dry-run", "--state-dir", str(tmp_path)), 1)
    assert "cpu_manager_state" in err


@pytest.mark.parametrize("args, code, text", [
    (("/nonexistent.yaml", "--dry-run"), 2, "/nonexistent.yaml"),
    (("POD", "--dry-run", "--pid", "app"), 2, "expected CONTAINER=VALUE"),
    (("POD", "--dry-run", "--pid", "app=x"), 2, "'x' is not valid"),
    (("POD", "--dry-run", "--pid", "other=777"), 2, "unknown container 'other'"),
    (("POD", "--dry-run", "--pid", "app=999999"), 1, "no such process"),
    (("POD", "--dry-run", "--cpu-cfs-quota-period", "3h"), 2, "--cpu-cfs-quota-period"),
    (("POD", "--dry-run", "--cgroup-driver", "cgroupfs"), 2, "belongs to the systemd driver"),
    (("POD", "--dry-run", "--state-dir", "/nonexistent-state"), 2, "--state-dir /nonexistent-state: no such directory"),
])
def test_bad_input_is_one_line(node, args, code, text):
    root, pod = node
    args = [pod if a == "POD" else a for a in args]
    err = one_line_error(run("apply", *args, "--root", root), code)
    assert text in err


def test_remove_refuses_a_busy_pod_then_removes(node):
    root, pod = node
    assert run("apply", pod, "--root", root, "--target-root", "--pid", "app=777").returncode == 0
    err = one_line_error(run("apply", pod, "--root", root, "--target-root", "--remove"), 1)
    assert "still holds processes 777" in err and "cgroup.procs" in err
    app = Path(root, "sys/fs/cgroup/kubepods.slice/kubepods-pod11_22.slice/cri-containerd-app.scope")
    (app / "cgroup.procs").write_text("")
    r = run("apply", pod, "--root", root, "--target-root", "--remove")
    assert r.returncode == 0, r.stderr
    assert not app.parent.exists()


def test_evict_dry_run_then_kill_file_then_unknown_pod(node):
    root, pod = node
    assert run("apply", pod, "--root", root, "--target-root").returncode == 0
    pod_dir = Path(root, "sys/fs/cgroup/kubepods.slice/kubepods-pod11_22.slice")
    (pod_dir / "cgroup.kill").write_text("")
    r = run("evict", "11-22", "--root", root, "--dry-run")
    # the kill, then every cgroup the run removes, the containers' before the pod's
    assert r.returncode == 0 and r.stdout.splitlines() == [f"write {pod_dir}/cgroup.kill 1",
                                                           f"rmdir {pod_dir}/cri-containerd-app.scope", f"rmdir {pod_dir}"]
    r = run("evict", "11-22", "--root", root, "--target-root", "--json", "--message", "low on memory")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["evicted"] and out["removed"] and out["method"] == "cgroup.kill"
    assert out["status"]["phase"] == "Failed" and out["status"]["message"] == "low on memory"
    assert not pod_dir.exists()
    err = one_line_error(run("evict", "11-22", "--root", root, "--target-root"), 1)
    assert "no cgroup of pod 11-22" in err


def test_evict_where_the_kubelet_made_no_pods_says_so(tmp_path):
    root = cgroupfs.build(str(tmp_path / "root"), "v2", "systemd", kubepods=False)
    err = one_line_error(run("evict", "11-22", "--root", root, "--dry-run"), 1)
    assert "no cgroup of pod 11-22: no kubepods" in err and "driver" not in err


def test_evict_on_v1_fake_root_refuses_to_signal(tmp_path):
    root = cgroupfs.build(str(tmp_path / "r"), "v1", "cgroupfs")
    (tmp_path / "pod.yaml").write_text(POD)
    assert run("apply", str(tmp_path / "pod.yaml"), "--root", root, "--target-root").returncode == 0
    pod_dirs = list(Path(root, "sys/fs/cgroup").glob("**/pod11-22"))
    assert pod_dirs
    for pod_dir in pod_dirs:
        (pod_dir / "cgroup.procs").write_text(f"{os.getpid()}\n")  # a fake root's pids are not this host's
    for extra in (["--target-root"], ["--dry-run"]):  # the dry run refuses as the run would
        err = one_line_error(run("evict", "11-22", "--root", root, *extra), 1)
        assert "live host" in err
    one_line_error(run("evict", "11-22", "--root", root, "--timeout", "-1"), 2)


def test_evict_on_a_v1_fake_root_without_processes_removes_the_pod(tmp_path):
    root = cgroupfs.build(str(tmp_path / "r"), "v1", "cgroupfs")
    (tmp_path / "pod.yaml").write_text(POD)
    assert run("apply", str(tmp_path / "pod.yaml"), "--root", root, "--target-root").returncode == 0
    r = run("evict", "11-22", "--root", root, "--target-root")
    assert r.returncode == 0 and "signalled 0 process(es); cgroups removed" in r.stdout, r.stderr
    assert not list(Path(root, "sys/fs/cgroup").glob("**/pod11-22"))


@pytest.fixture
def sleeper():
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


def test_oom_adjust_sets_and_validates(sleeper):
    pid = str(sleeper.pid)
    r = run("oom-adjust", pid, "500")
    assert r.returncode == 0, r.stderr
    assert Path(f"/proc/{pid}/oom_score_adj").read_text().strip() == "500"
    assert "-> 500" in r.stdout
    assert "already 500" in run("oom-adjust", pid, "500").stdout
    r = run("oom-adjust", pid, "200", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["dry_run"] and doc["steps"][0]["value"] == "200" and doc["steps"][0]["current"] == "500"
    assert Path(f"/proc/{pid}/oom_score_adj").read_text().strip() == "500"
    # a negative VALUE is a value, not an option; going below 0 needs CAP_SYS_RESOURCE, checked before writing
    with FsRoot("/") as fs:
        capable = has_capability(fs, CAP_SYS_RESOURCE)
    r = run("oom-adjust", pid, "-5", "--dry-run")
    if capable:
        assert r.returncode == 0 and "oom_score_adj -5" in r.stdout, r.stderr
    else:
        assert "needs CAP_SYS_RESOURCE" in one_line_error(r, 1)
    assert "outside [-1000, 1000]" in one_line_error(run("oom-adjust", pid, "1001"), 2)
    assert "not an integer" in one_line_error(run("oom-adjust", pid, "abc"), 2)
    assert "expected a process id from 1 to" in one_line_error(run("oom-adjust", "x1", "5"), 2)
    assert "no such process" in one_line_error(run("oom-adjust", "999999", "5"), 1)


def test_oom_adjust_refuses_a_zombie_and_writes_nothing():
    # a child that has exited but is not reaped yet: the kernel would take the write, to no effect
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        for _ in range(500):
            if Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                break
            time.sleep(0.01)
        before = Path(f"/proc/{proc.pid}/oom_score_adj").read_text()
        err = one_line_error(run("oom-adjust", str(proc.pid), "900"), 1)
        assert "the process has exited (a zombie)" in err and f"/proc/{proc.pid}" in err
        assert Path(f"/proc/{proc.pid}/oom_score_adj").read_text() == before
    finally:
        proc.wait()


def test_apply_checks_refuse_an_exited_process_on_a_fake_root(tmp_path):
    from pynuma.apply.checks import check_pid
    from pynuma.apply.plan import PreconditionError

    for pid, state in ((41, "S"), (42, "Z")):
        (tmp_path / f"proc/{pid}").mkdir(parents=True)
        (tmp_path / f"proc/{pid}/stat").write_text(f"{pid} (odd) name) {state} 1 {pid} {pid} 0 -1\n")
    with FsRoot(str(tmp_path)) as fs:
        check_pid(fs, 41)
        with pytest.raises(PreconditionError, match="zombie"):
            check_pid(fs, 42)
