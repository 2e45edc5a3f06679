"""``pynuma cgroups`` run as users run it, on synthetic roots."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pynuma.cgroups.synthetic import build_tree, make_pods


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", "cgroups", *args], capture_output=True, text=True)


@pytest.mark.parametrize("mode,driver", [("v2", "systemd"), ("hybrid", "cgroupfs")])
def test_json(tmp_path, mode, driver):
    specs = make_pods(3)
    expected = build_tree(str(tmp_path), mode=mode, driver=driver, pods=specs, extra_files=False)
    r = run("--root", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["mode"], out["driver"]) == (mode, driver)
    assert sorted(p["uid"] for p in out["pods"]) == sorted(s.uid for s in specs)
    for p in out["pods"]:
        assert p["memory_usage"] == expected[p["path"]].usage
        assert len(p["containers"]) == 2
    assert out["kubepods_stats"]["memory_usage"] == expected[""].usage
    assert out["reasons"]


def test_table_and_explain(tmp_path):
    build_tree(str(tmp_path), pods=make_pods(2), extra_files=False)
    r = run("--root", str(tmp_path), "--explain")
    assert r.returncode == 0
    assert "mode: v2" in r.stdout and "driver: systemd" in r.stdout and "WORKSET" in r.stdout
    assert "cgroup2 mounted at /sys/fs/cgroup" in r.stdout


def test_no_mounts_is_one_clear_line(tmp_path):
    r = run("--root", str(tmp_path))
    assert r.returncode == 1
    assert "mount table" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_bad_root_is_reported(tmp_path):
    r = run("--root", str(tmp_path / "missing"))
    assert r.returncode != 0 and "Traceback" not in r.stderr


def test_table_shows_full_container_ids_and_names_the_cpu_seconds_column(tmp_path):
    build_tree(str(tmp_path), pods=make_pods(2), extra_files=False)
    ids = [c["id"] for p in json.loads(run("--root", str(tmp_path), "--json").stdout)["pods"] for c in p["containers"]]
    assert len(ids) == 4 and all(len(i) > 24 for i in ids)
    r = run("--root", str(tmp_path))
    assert r.returncode == 0
    header = next(line for line in r.stdout.splitlines() if line.startswith("POD/CONTAINER"))
    assert header.split()[-1] == "CPU-SECONDS"
    for cid in ids:  # ids differing only after 24 characters stay apart
        assert sum(line.split()[0].endswith(":" + cid) for line in r.stdout.splitlines() if line.strip()) == 1
