"""``pynuma allocatable`` against a synthetic root and explicit capacities."""
from __future__ import annotations

import json
import subprocess
import sys
import os

import pytest

from pynuma.cli import main

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GI = 1 << 30


@pytest.fixture
def root(tmp_path):
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/meminfo").write_text(f"MemTotal: {16 * GI // 1024} kB\n")
    (tmp_path / "proc/sys/kernel/pid_max").write_text("4194304\n")
    (tmp_path / "proc/sys/kernel/threads-max").write_text("100000\n")
    cpu = tmp_path / "sys/devices/system/cpu"
    cpu.mkdir(parents=True)
    (cpu / "online").write_text("0-7\n")
    hp = tmp_path / "sys/kernel/mm/hugepages/hugepages-2048kB"
    hp.mkdir(parents=True)
    (hp / "nr_hugepages").write_text("512\n")
    return str(tmp_path)


def test_discovered_capacity_and_allocatable(root, capsys):
    rc = main(["allocatable", "--root", root, "--kube-reserved", "cpu=1,memory=2Gi", "--system-reserved",
               "memory=1Gi,pid=1000", "--eviction-hard", "memory.available<100Mi", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["capacity"]["cpu"] == "8" and out["capacity"]["memory"] == "16Gi"
    assert out["capacity"]["hugepages-2Mi"] == "1Gi" and "pid" not in out["capacity"]
    # 16Gi - 2Gi - 1Gi - 100Mi - 1Gi of hugepages
    assert out["allocatable"]["memory"] == "12188Mi"
    assert out["allocatable"]["cpu"] == "7"
    assert out["kubepods_limits"]["memory"] == "12Gi"  # eviction part not subtracted
    assert out["kubepods_limits"]["pid"] == "99k"


def test_table_output(root, capsys):
    rc = main(["allocatable", "--root", root, "--capacity", "ephemeral-storage=100Gi"])
    text = capsys.readouterr().out
    assert rc == 0 and text.startswith("RESOURCE") and "ephemeral-storage" in text


@pytest.mark.parametrize("argv,needle", [
    (["--kube-reserved", "gpu=1"], 'cannot reserve "gpu" resource'),
    (["--kube-reserved", "cpu=100"], "invalid Node Allocatable configuration"),
    (["--system-reserved", "memory"], "--system-reserved"),
    (["--eviction-hard", "bogus<1"], "--eviction-hard bogus<1: unknown signal 'bogus'"),
])
def test_bad_input(root, argv, needle, capsys):
    rc = main(["allocatable", "--root", root, *argv])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_runs_as_a_command(root):
    p = subprocess.run([sys.executable, "-m", "pynuma", "allocatable", "--root", root, "--kube-reserved", "cpu=1"],
                       cwd=PROJECT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "cpu" in p.stdout


def test_kubelet_config_reservations_and_flag_override(root, tmp_path, capsys):
    cfg = tmp_path / "k.yaml"
    cfg.write_text("kind: KubeletConfiguration\nkubeReserved: {cpu: '2'}\nsystemReserved: {memory: 1Gi}\n"
                   "evictionHard: {memory.available: 1Gi}\n")
    rc = main(["allocatable", "--root", root, "--kubelet-config", str(cfg), "--kube-reserved", "cpu=500m", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["allocatable"]["cpu"] == "7500m"  # the flag overrides kubeReserved
    assert out["allocatable"]["memory"] == "13Gi"  # 16Gi - 1Gi system - 1Gi eviction - 1Gi hugepages


def test_a_dump_has_no_ephemeral_storage_of_this_host(root, capsys):
    rc = main(["allocatable", "--root", root, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and "ephemeral-storage" not in out["capacity"]
    assert "this host" in out["unknown"]["ephemeral-storage"]
    assert main(["allocatable", "--root", root]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("ephemeral-storage"))
    assert "unknown" in line and "--fs-stats FILE" in line


def test_fs_stats_file_gives_a_dump_its_ephemeral_storage(root, tmp_path, capsys):
    summary = tmp_path / "summary.yaml"
    summary.write_text("node:\n  fs: {availableBytes: 1, capacityBytes: %d}\n" % (100 * GI))
    rc = main(["allocatable", "--root", root, "--fs-stats", str(summary), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["capacity"]["ephemeral-storage"] == "100Gi" and out["unknown"] == {}


def test_capacity_flag_fills_in_what_is_unknown(root, capsys):
    rc = main(["allocatable", "--root", root, "--capacity", "ephemeral-storage=10Gi", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["capacity"]["ephemeral-storage"] == "10Gi" and out["unknown"] == {}


def test_reserved_cpus_replace_the_cpu_reservations(root, tmp_path, capsys):
    cfg = tmp_path / "k.yaml"
    cfg.write_text("kind: KubeletConfiguration\ncpuManagerPolicy: static\nreservedSystemCPUs: '0-1'\n"
                   "kubeReserved: {cpu: 500m}\nsystemReserved: {cpu: 300m}\n")
    assert main(["allocatable", "--root", root, "--kubelet-config", str(cfg), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["allocatable"]["cpu"] == "6" and out["kubepods_limits"]["cpu"] == "6"  # 8 - 2, not 8 - 800m
    assert main(["allocatable", "--root", root, "--kubelet-config", str(cfg), "--reserved-cpus", "0-2",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["allocatable"]["cpu"] == "5"  # the flag overrides the file


@pytest.mark.parametrize("value,needle", [("0-8", "invalid cpuset '0-8': this machine has 8 CPUs"),
                                          ("x", "--reserved-cpus: bad cpulist 'x'")])
def test_bad_reserved_cpus(root, value, needle, capsys):
    assert main(["allocatable", "--root", root, "--reserved-cpus", value]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1
