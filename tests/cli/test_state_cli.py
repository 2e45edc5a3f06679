"""``pynuma state show/check`` run as a command on files under tmp."""
from __future__ import annotations

import json
import re
import os
import subprocess
import sys

import pytest

from pynuma.cpuset import CPUSet
from pynuma.state import cpu_checkpoint as ckpt

from ..unit.cpu_fixtures import DUAL_NODE_HT


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", "state", *args], capture_output=True, text=True)


@pytest.fixture
def topo(tmp_path):
    path = tmp_path / "topo.json"
    path.write_text(json.dumps(DUAL_NODE_HT.to_dict()))
    return str(path)


def write_state(tmp_path, default, entries, policy="static"):
    path = tmp_path / "cpu_manager_state"
    path.write_text(ckpt.dumps(policy, CPUSet.parse(default), {p: {c: CPUSet.parse(s) for c, s in cs.items()}
                                                               for p, cs in entries.items()}))
    return str(path)


def test_show_table_and_json(tmp_path):
    path = write_state(tmp_path, "0-9", {"pod-a": {"app": "10-11"}})
    out = run("show", path)
    assert out.returncode == 0 and "pod-a" in out.stdout and "10-11 (2 CPUs)" in out.stdout and "valid" in out.stdout
    doc = json.loads(run("show", path, "--json").stdout)
    assert doc["defaultCpuSet"] == "0-9" and doc["entries"] == {"pod-a": {"app": "10-11"}}


def test_show_legacy_v1_file_keyed_by_container_id(tmp_path):
    from pynuma.state.checksum import fnv1a32

    entries = {"cid-1": "2-3"}
    text = json.dumps({"policyName": "static", "defaultCpuSet": "0-1", "entries": entries,
                       "checksum": fnv1a32(ckpt.hashed_text("static", "0-1", entries, v1=True))})
    path = tmp_path / "cpu_manager_state"
    path.write_text(text)
    out = run("show", str(path))
    assert out.returncode == 0 and "v1" in out.stdout and "cid-1" in out.stdout and "2-3 (2 CPUs)" in out.stdout


def test_check_ok_exit_0(tmp_path, topo):
    out = run("check", write_state(tmp_path, "0-9", {"p": {"c": "10-11"}}), "--topology", topo)
    assert out.returncode == 0 and "OK" in out.stdout


def test_check_explains_then_dry_run_writes_nothing_then_fix(tmp_path, topo):
    path = write_state(tmp_path, "0-5,20", {"p": {"c": "5-7"}})
    before = open(path).read()
    out = run("check", path, "--topology", topo, "--reserved-cpus", "0")
    assert out.returncode == 1
    assert "CPUs 20" in out.stdout and "also in the default" in out.stdout and "CPUs 8-11" in out.stdout
    dry = run("check", path, "--topology", topo, "--reserved-cpus", "0", "--fix", "--dry-run")
    assert dry.returncode == 1 and "would write" in dry.stdout and open(path).read() == before
    fix = run("check", path, "--topology", topo, "--reserved-cpus", "0", "--fix", "--json")
    doc = json.loads(fix.stdout)
    assert fix.returncode == 0 and doc["written"] and doc["fixed"]["entries"] == {"p": {"c": "5-7"}}
    st = ckpt.read_file(path, "static")
    assert str(st.default) == "0-4,8-11"
    assert run("check", path, "--topology", topo, "--reserved-cpus", "0").returncode == 0


def test_policy_change_is_reported(tmp_path, topo):
    out = run("check", write_state(tmp_path, "0-11", {}), "--topology", topo, "--policy", "none", "--json")
    doc = json.loads(out.stdout)
    assert out.returncode == 1 and "differs from state checkpoint" in doc["kubelet_error"]


def test_corrupt_file_is_an_error_and_never_rewritten(tmp_path, topo):
    path = write_state(tmp_path, "0-11", {})
    bad = open(path).read().replace("0-11", "0-10")
    open(path, "w").write(bad)
    mtime = os.stat(path).st_mtime_ns
    out = run("check", path, "--topology", topo, "--fix")
    assert out.returncode == 1 and "checkpoint is corrupted" in out.stderr and out.stderr.count("\n") == 1
    assert open(path).read() == bad and os.stat(path).st_mtime_ns == mtime


@pytest.mark.parametrize("args, words", [
    (["show", "/nonexistent/cpu_manager_state"], "no such file"),
    (["check", "FILE", "--dry-run"], "--dry-run"),
    (["check", "FILE", "--policy", "dynamic"], "unknown CPU Manager policy"),
    (["check", "FILE", "--reserved-cpus", "x"], "--reserved-cpus"),
])
def test_bad_input_exit_2(tmp_path, topo, args, words):
    path = write_state(tmp_path, "0-11", {})
    args = [path if a == "FILE" else a for a in args]
    if args[0] == "check":
        args += ["--topology", topo]
    out = run(*args)
    assert out.returncode == 2 and words in out.stderr and "Traceback" not in out.stderr


def test_unknown_file_kind(tmp_path):
    other = tmp_path / "whatever.json"
    other.write_text('{"hello": 1}')
    out = run("show", str(other))
    assert out.returncode == 2 and "neither" in out.stderr


def _tamper(path, **changes):
    doc = json.loads(open(path).read())
    doc.update(changes)
    open(path, "w").write(json.dumps(doc))
    return doc


def test_bad_checksum_shows_stored_and_computed(tmp_path):
    path = write_state(tmp_path, "0-3", {})
    good = json.loads(open(path).read())["checksum"]
    _tamper(path, defaultCpuSet="0-2")
    out = run("show", path)
    assert out.returncode == 1 and out.stdout == ""
    line = out.stderr.strip()
    assert line.count("\n") == 0 and "checkpoint is corrupted" in line
    stored, computed = (int(x) for x in re.search(r"checksum in the file (\d+), computed from its content (\d+)",
                                                   line).groups())
    assert stored == good and computed == ckpt.compute_checksum("static", "0-2", {}, False)


def test_directory_check_reports_a_lone_corrupt_file_by_name(tmp_path):
    path = write_state(tmp_path, "0-3", {})
    _tamper(path, checksum=12345)
    out = run("check", str(tmp_path))
    assert out.returncode == 1
    assert "cpu_manager_state: corrupt: " in out.stdout and "checksum in the file 12345" in out.stdout
