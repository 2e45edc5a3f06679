"""``pynuma eviction`` run against synthetic roots and files: never the live machine's state."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pynuma.cgroups.synthetic import MEM_TOTAL, build_tree, make_pods
from pynuma.cli import main

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def root(tmp_path):
    expected = build_tree(str(tmp_path), mode="v2", pods=make_pods(3), extra_files=False)
    k = tmp_path / "proc/sys/kernel"
    k.mkdir(parents=True)
    (k / "pid_max").write_text("1000\n")
    (k / "threads-max").write_text("5000\n")
    (tmp_path / "proc/loadavg").write_text("0.0 0.0 0.0 1/990 7\n")
    return str(tmp_path), expected


def run_json(capsys, *argv):
    rc = main(["eviction", *argv, "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def test_pid_pressure_on_a_dump(root, capsys):
    path, _ = root
    out = run_json(capsys, "--root", path, "--eviction-hard", "pid.available<20")
    assert out["conditions"] == ["PIDPressure"]  # 1000 - 990 = 10 < 20
    row = next(r for r in out["signals"] if r["signal"] == "pid.available")
    assert row["available"] == 10 and row["capacity"] == 1000 and row["met"] is True
    assert out["acting_on"] == {"signal": "pid.available", "resource": "pids"}
    assert out["admission"].endswith("The node had condition: [PIDPressure].")


def test_from_cgroups_ranks_pods_and_names_the_victim(root, capsys):
    path, expected = root
    out = run_json(capsys, "--root", path, "--from-cgroups", "--eviction-hard", "memory.available<100Ei")
    assert out["conditions"] == ["MemoryPressure"]
    assert len(out["ranked"]) == 3 and len(out["evicted"]) == 1
    ev = out["evicted"][0]
    assert ev["pod"] == out["ranked"][0] and ev["grace_period_override_s"] == 1
    assert ev["status"]["reason"] == "Evicted"
    # 100Ei is above apimachinery's maxAllowed: ParseQuantity caps it at 2^63-1, and the message shows that
    assert ev["message"].startswith("The node was low on resource: memory. Threshold quantity: 9223372036854775807,")


def test_explain_shows_the_v2_emulation(root, capsys):
    path, expected = root
    out = run_json(capsys, "--root", path, "--explain")
    ex = out["explain"]
    r = expected["/"]
    ws = max(r.anon + r.file - r.inactive_file, 0)
    assert ex["kubelet_memory_available"] == MEM_TOTAL - ws
    assert "anon + file" in ex["cgroup"]["usage_how"]
    rc = main(["eviction", "--root", path, "--explain"])
    text = capsys.readouterr().out
    assert rc == 0 and "MemAvailable" in text and "kubelet memory.available" in text


def test_pods_file_and_soft_threshold_over_watch_passes(tmp_path, capsys):
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps([
        {"name": "a", "priority": 0, "containers": [{"name": "c", "requests": {"memory": "1Gi"}}],
         "usage": {"memory_working_set": "10Mi"}},
        {"name": "b", "priority": 0, "containers": [{"name": "c"}], "usage": {"memory_working_set": "5Mi"}}]))
    stats = tmp_path / "summary.json"
    stats.write_text(json.dumps({"node": {"memory": {"availableBytes": 1 << 20, "workingSetBytes": 1 << 30}}}))
    rc = main(["eviction", "--stats", str(stats), "--pods", str(pods), "--eviction-hard", "memory.available<1Ki",
               "--eviction-soft", "memory.available<2Mi", "--eviction-soft-grace-period", "memory.available=0.05s",
               "--eviction-max-pod-grace-period", "7", "--watch", "0.06", "--count", "2", "--json"])
    text = capsys.readouterr().out
    assert rc == 0
    docs = [json.loads(d) for d in text.replace("}\n{", "}\n\x00{").split("\x00")]
    assert len(docs) == 2
    assert docs[0]["conditions"] == ["MemoryPressure"] and docs[0]["evicted"] == []
    assert [e["pod"] for e in docs[1]["evicted"]] == ["b"] and docs[1]["evicted"][0]["grace_period_override_s"] == 7


def test_kubelet_config_file(tmp_path, root, capsys):
    path, _ = root
    cfg = tmp_path / "kubelet.yaml"
    cfg.write_text("kind: KubeletConfiguration\nevictionHard: {pid.available: '5'}\n")
    out = run_json(capsys, "--root", path, "--kubelet-config", str(cfg))
    assert [r["signal"] for r in out["signals"]] == ["pid.available"] and out["conditions"] == []


@pytest.mark.parametrize("argv,needle", [
    (["--eviction-hard", "nope<1"], "--eviction-hard nope<1: unknown signal 'nope' (one of: memory.available,"),
    (["--eviction-hard", "memory.available=1Gi"], "--eviction-hard: malformed pair"),
    (["--eviction-soft", "memory.available<1Gi"],
     "--eviction-soft memory.available: no grace period for it (add --eviction-soft-grace-period"),
    (["--eviction-hard", "memory.available<lots"],
     "--eviction-hard memory.available<lots: 'lots' is neither a quantity nor a percentage"),
    (["--eviction-hard", "nodefs.available<1x%"], "--eviction-hard nodefs.available<1x%: '1x%' is not a percentage"),
    (["--eviction-hard", "nodefs.available<150%"], "--eviction-hard nodefs.available<150%: eviction percentage"),
    (["--eviction-soft", "memory.available<1Gi", "--eviction-soft-grace-period", "memory.available=soon"],
     "--eviction-soft-grace-period memory.available=soon: 'soon' is not a duration"),
    (["--eviction-minimum-reclaim", "memory.available=1..2Gi"],
     "--eviction-minimum-reclaim memory.available=1..2Gi: '1..2Gi' is neither a quantity"),
    (["--kubelet-config", "/nonexistent/k.yaml"], "/nonexistent/k.yaml"),
    (["--stats", "/nonexistent/s.json"], "/nonexistent/s.json"),
    (["--watch", "0"], "--watch"),
    (["--watch", "nan"], "--watch"),
    (["--watch", "inf"], "--watch"),
    (["--watch", "1e300"], "--watch"),
    (["--pods", "/nonexistent/pods.yaml"], "/nonexistent/pods.yaml"),
    (["--eviction-pressure-transition-period", "soon"], 'not a duration (e.g. 30s, 5m, 1h): time: invalid duration "soon"'),
])
def test_bad_input_is_one_line_exit_2(argv, needle, capsys, tmp_path):
    rc = main(["eviction", "--root", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "regular expression" not in err


@pytest.mark.parametrize("config, flags, needle", [
    ("evictionHard: {memory.available: lots}", [], "k.yaml: evictionHard[memory.available]: 'lots' is neither"),
    ("evictionSoft: {memory.available: 1Gi}", [], "k.yaml: evictionSoft[memory.available]: no grace period"),
    # a flag overrides the file: its value is the one named
    ("evictionHard: {memory.available: 1Gi}", ["--eviction-hard", "memory.available<x"],
     "--eviction-hard memory.available<x: 'x' is neither"),
])
def test_kubelet_config_errors_name_the_file_and_key(tmp_path, capsys, config, flags, needle):
    cfg = tmp_path / "k.yaml"
    cfg.write_text(config + "\n")
    for command in ("eviction", "allocatable"):
        if command == "allocatable" and "evictionSoft" in config:
            continue  # allocatable reads only the hard thresholds
        rc = main([command, "--root", str(tmp_path), "--kubelet-config", str(cfg), *flags])
        err = capsys.readouterr().err
        assert rc == 2 and needle in err and err.count("\n") == 1, (command, err)


def test_runs_as_a_command(root):
    path, _ = root
    p = subprocess.run([sys.executable, "-m", "pynuma", "eviction", "--root", path], cwd=PROJECT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("SIGNAL") and "conditions:" in p.stdout


def test_live_host_read_only(capsys):
    """On this machine: memory capacity is MemTotal and available never exceeds it."""
    from pynuma.pressure.host import parse_meminfo
    from pynuma.fsroot import FsRoot

    def mem_total():
        return parse_meminfo(FsRoot("/").read_text("/proc/meminfo"))["MemTotal"]

    before = mem_total()  # a balloon driver or memory hotplug can move MemTotal while the command runs
    out = run_json(capsys, "--explain")
    after = mem_total()
    mem = out["observations"].get("memory.available")
    if mem is None:
        pytest.skip("no memory cgroup readable here: " + "; ".join(out.get("warnings", [])))
    assert mem["capacity"] in (before, after)
    assert 0 <= mem["available"] <= mem["capacity"]
    assert out["explain"]["kubelet_memory_available"] == mem["available"]


def test_a_kubelet_stats_summary_alone(tmp_path, capsys):
    summary = {"node": {"memory": {"availableBytes": 50 << 20, "workingSetBytes": 4 << 30}},
               "pods": [{"podRef": {"name": "small", "namespace": "a", "uid": "u1"}, "memory": {"workingSetBytes": 1}},
                        {"podRef": {"name": "hog", "namespace": "b", "uid": "u2"},
                         "memory": {"workingSetBytes": 3 << 30},
                         "containers": [{"name": "main", "memory": {"workingSetBytes": 3 << 30}}]}]}
    f = tmp_path / "summary.json"
    f.write_text(json.dumps(summary))
    out = run_json(capsys, "--stats", str(f))  # default thresholds: memory.available<100Mi
    assert out["conditions"] == ["MemoryPressure"] and out["ranked"] == ["hog", "small"]
    ev = out["evicted"][0]
    assert ev["namespace"] == "b" and ev["pod"] == "hog"
    assert ev["message"] == ("The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ")


def _fs_summary(tmp_path, cap=1000, avail=50):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"node": {"fs": {"availableBytes": avail, "capacityBytes": cap,
                                                "inodesFree": 500, "inodes": 1000}}}))
    return str(path)


def test_a_dump_shows_filesystems_as_unknown_and_says_why(root, capsys):
    path, _ = root
    out = run_json(capsys, "--root", path)
    rows = {r["signal"]: r for r in out["signals"]}
    assert rows["nodefs.available"]["available"] is None and rows["imagefs.inodesFree"]["capacity"] is None
    assert "this host" in out["filesystems_unknown"] and path in out["filesystems_unknown"]
    assert main(["eviction", "--root", path]) == 0
    text = capsys.readouterr().out
    assert "figures unknown" in text and "--fs-stats FILE" in text


def test_fs_stats_file_gives_a_dump_its_filesystems(root, tmp_path, capsys):
    path, _ = root
    out = run_json(capsys, "--root", path, "--fs-stats", _fs_summary(tmp_path), "--eviction-hard",
                   "nodefs.available<10%")
    assert "filesystems_unknown" not in out
    row = next(r for r in out["signals"] if r["signal"] == "nodefs.available")
    assert (row["available"], row["capacity"], row["met"]) == (50, 1000, True)
    assert out["conditions"] == ["DiskPressure"]


@pytest.mark.parametrize("extra, needle", [
    (["--stats", "x.json"], "--fs-stats: not with --stats"),
    ([], "node.fs: missing"),
])
def test_fs_stats_bad_input(root, tmp_path, capsys, extra, needle):
    path, _ = root
    bad = tmp_path / "bad.json"
    bad.write_text('{"node": {}}')
    rc = main(["eviction", "--root", path, "--fs-stats", str(bad), *extra])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_watch_stamps_each_pass(tmp_path, capsys):
    from datetime import datetime

    stats = tmp_path / "summary.json"
    stats.write_text(json.dumps({"node": {"memory": {"availableBytes": 1 << 30, "workingSetBytes": 1 << 30}}}))
    argv = ["eviction", "--stats", str(stats), "--watch", "0.05", "--count", "2"]
    assert main([*argv, "--json"]) == 0
    text = capsys.readouterr().out
    docs = [json.loads(d) for d in text.replace("}\n{", "}\n\x00{").split("\x00")]
    assert [d["pass"] for d in docs] == [1, 2]
    times = [datetime.fromisoformat(d["time"]) for d in docs]
    assert times[0].tzinfo is not None and (times[1] - times[0]).total_seconds() >= 0.05
    assert main(argv) == 0
    stamps = [line for line in capsys.readouterr().out.splitlines() if line.startswith("--- pass ")]
    assert [s.split()[2] for s in stamps] == ["1", "2"]
    assert all(datetime.fromisoformat(s.split(" at ", 1)[1]) for s in stamps)
    assert main(argv[:3] + ["--json"]) == 0  # one pass, no watch: no stamp
    assert "pass" not in json.loads(capsys.readouterr().out)
