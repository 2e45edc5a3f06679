"""``pynuma bind --name``: acting on the processes a name finds (only this test's own children).

Each child runs a copy of ``sleep`` under a name no other process has, so a
pattern can never reach a process this test did not start.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from pynuma.cpuset import CPUSet
from pynuma.procs import find_processes
from tests.fixtures import host
from tests.fixtures.proc_builder import put_process
from tests.fixtures.sysfs_builder import Machine

ALLOWED = host.allowed_cpus()
PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sleepers(tmp_path):
    """Two processes named ``pn<8 hex>`` (a private copy of sleep) and the pattern that finds exactly them."""
    name = "pn" + uuid.uuid4().hex[:8]
    exe = tmp_path / name
    shutil.copy(shutil.which("sleep"), exe)
    procs = [subprocess.Popen([str(exe), "60"]) for _ in range(2)]
    yield f"^{name}$", procs
    for proc in procs:
        proc.kill()
        proc.wait()


def pynuma(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", *args], capture_output=True, text=True, timeout=120,
                          cwd=PROJECT)


def allowed(pid):
    with open(f"/proc/{pid}/status") as f:
        return CPUSet.parse(next(line.split(":")[1].strip() for line in f if line.startswith("Cpus_allowed_list")))


def test_find_processes_sees_exactly_the_children(sleepers):
    pattern, procs = sleepers
    assert [i.pid for i in find_processes(pattern)] == sorted(p.pid for p in procs)
    assert find_processes(pattern, user="no-such-user") == []
    assert os.getpid() not in [i.pid for i in find_processes(r"^python")]  # never the caller itself


def test_bind_name_pins_every_match(sleepers):
    pattern, procs = sleepers
    target = CPUSet([ALLOWED.max()])
    res = pynuma("bind", "--name", pattern, "--all-threads", "--cpus", str(target), "--json")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert sorted(r["pid"] for r in rows) == sorted(p.pid for p in procs)
    assert all(r["name"] == pattern.strip("^$") and r["cpus"] == str(target) for r in rows)
    assert all(allowed(p.pid) == target for p in procs)


def test_bind_name_dry_run_changes_nothing(sleepers):
    pattern, procs = sleepers
    before = [allowed(p.pid) for p in procs]
    res = pynuma("bind", "--name", pattern, "--cpus", str(CPUSet([ALLOWED.min()])), "--dry-run")
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("would set CPUs") == 2
    assert [allowed(p.pid) for p in procs] == before


def test_bind_name_errors(sleepers):
    pattern, _ = sleepers
    for args, code, text in ((["--name", "^no-such-process-xyz$", "--cpus", "0"], 1, "no process has a name"),
                             (["1", "--name", pattern, "--cpus", "0"], 2, "either a PID or --name"),
                             (["--user", "root", "--cpus", "0"], 2, "give --name too"),
                             (["--name", "(", "--cpus", "0"], 2, "not a regular expression"),
                             # a dry run checks the process is there, as the run does
                             (["999999", "--cpus", "0", "--dry-run"], 1, "no such process"),
                             # an unknown user is bad input, as for procs --user
                             (["--name", pattern, "--user", "no-such-user-xyz", "--cpus", "0"], 2,
                              "no user named 'no-such-user-xyz'")):
        res = pynuma("bind", *args)
        assert res.returncode == code, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and text in res.stderr


def test_bind_name_on_a_dump_finds_its_processes_for_a_dry_run(tmp_path):
    root = Machine(packages=2, nodes_per_package=1, cores_per_node=2).write(tmp_path)
    put_process(root, 50, "worker", numa_maps="")
    put_process(root, 51, "worker", numa_maps="")
    put_process(root, 52, "kworker/0:0", numa_maps="", kernel_thread=True)
    res = pynuma("bind", "--name", "worker", "--cpus", "2-3", "--dry-run", "--json", "--root", root)
    assert res.returncode == 0, res.stderr
    assert [r["pid"] for r in json.loads(res.stdout)] == [50, 51]
    res = pynuma("bind", "--name", "worker", "--cpus", "2-3", "--root", root)
    assert res.returncode == 1 and "live host" in res.stderr
