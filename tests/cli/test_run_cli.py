"""``pynuma run``, ``bind``, ``show`` and ``bench memory`` run as commands, checked through /proc.

Placement is compared side by side with Debian's ``numactl`` when it is
installed (``apt-get install numactl``); without it the kernel's view alone
is checked.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from pynuma import bind
from pynuma.cpuset import CPUSet
from tests.fixtures import host

NUMACTL = shutil.which("numactl")
ALLOWED = host.allowed_cpus()
# CPU 0 / node 0 may be outside this process's cpuset (or node 0 memory-less) on another machine:
# bind to a CPU and nodes this process is allowed to use.
CPU = str(ALLOWED.min())
CPU_NODE = str(host.cpu_node())  # a node with at least one allowed CPU
MEM = str(host.memory_node())  # a node with memory this process may allocate from
NEEDS_NATIVE = pytest.mark.skipif(not bind.mempolicy_supported() and os.environ.get("PYNUMA_REQUIRE_NATIVE") != "1",
                                  reason="memory policy needs the native core or cffi")


@pytest.fixture(autouse=True, params=["native-path", "pure-path"])
def path(request, monkeypatch):
    """Every command runs twice: as built, and on the pure-Python twins (an install without a compiler)."""
    monkeypatch.setenv("PYNUMA_PURE", "1" if request.param == "pure-path" else "0")
    return request.param


def pynuma(*args, **kw):
    return subprocess.run([sys.executable, "-m", "pynuma", *args], capture_output=True, text=True, timeout=120, **kw)


def _policy_word(numa_maps_line: str) -> str:
    """The policy of a numa_maps line, minus the address and the per-mapping counters."""
    return str(bind.parse_numa_maps_policy(numa_maps_line))


def _one_line_error(result, code):
    assert result.returncode == code, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


# -- pynuma run --------------------------------------------------------------
def test_run_cpus_pins_the_command():
    result = pynuma("run", "--cpus", CPU, "--", "grep", "Cpus_allowed_list", "/proc/self/status")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["Cpus_allowed_list:", CPU]


def test_run_cpunodebind_uses_the_nodes_cpus():
    result = pynuma("run", "--cpunodebind", CPU_NODE, "--", "grep", "Cpus_allowed_list", "/proc/self/status")
    assert result.returncode == 0, result.stderr
    want = bind.node_cpus([int(CPU_NODE)]) & ALLOWED
    assert CPUSet.parse(result.stdout.split()[1]) == want


def test_run_without_double_dash_keeps_the_commands_own_options():
    result = pynuma("run", "--cpus", CPU, "head", "-1", "/proc/self/status")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Name:")


MODES = [("--membind", MEM, f"bind:{MEM}"), ("--interleave", MEM, f"interleave:{MEM}"),
         ("--preferred", MEM, f"prefer:{MEM}"), ("--localalloc", None, "local")]


@NEEDS_NATIVE
@pytest.mark.parametrize("option, nodes, expected", MODES, ids=[m[0] for m in MODES])
def test_run_memory_policy_shows_in_numa_maps_like_numactl(option, nodes, expected):
    opts = [option] + ([nodes] if nodes is not None else [])
    # bring head's pages into the page cache first: otherwise the first run's readahead places pages
    # (by its policy) that only the second run maps, and the node sets differ on a multi-node machine
    subprocess.run(["head", "-1", "/proc/self/numa_maps"], capture_output=True, timeout=60)
    ours = pynuma("run", *opts, "--", "head", "-1", "/proc/self/numa_maps")
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.split()[1] == expected
    if NUMACTL:
        theirs = subprocess.run([NUMACTL, *opts, "head", "-1", "/proc/self/numa_maps"], capture_output=True,
                                text=True, timeout=60)
        assert theirs.returncode == 0, theirs.stderr
        assert _policy_word(ours.stdout) == _policy_word(theirs.stdout)
        # the first mapping line matches in what the policy decides (policy, file, which nodes hold pages);
        # the address is ASLR's and the page counters (mapped=, active=, Nn=count) follow the page cache's LRU
        assert _placement(ours.stdout) == _placement(theirs.stdout)


def _placement(numa_maps_line: str) -> tuple:
    """Policy word, backing file and the set of nodes holding pages, from a numa_maps line."""
    fields = numa_maps_line.split()
    backing = [f for f in fields if f.startswith("file=")]
    nodes = sorted(f.split("=")[0] for f in fields if f[:1] == "N" and f[1:].split("=")[0].isdigit())
    return fields[1], backing, nodes


@NEEDS_NATIVE
@pytest.mark.parametrize("option, shown", [("--preferred-many", f"prefer (many):{MEM}"),
                                           ("--weighted-interleave", f"weighted interleave:{MEM}")])
def test_run_newer_modes(option, shown):
    result = pynuma("run", option, MEM, "--", "head", "-1", "/proc/self/numa_maps")
    if result.returncode == 1 and "needs Linux" in result.stderr:
        pytest.skip(result.stderr.strip())
    assert result.returncode == 0, result.stderr
    assert shown in result.stdout


@NEEDS_NATIVE
def test_run_static_flag_and_show_inside():
    result = pynuma("run", "--membind", MEM, "--static", "--", sys.executable, "-m", "pynuma", "show", "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert (info["policy"], info["policy_nodes"], info["policy_flags"]) == ("bind", MEM, ["static"])
    assert info["policy_source"] == "get_mempolicy"


@pytest.mark.parametrize("args, needle", [
    (["--cpus", "4096", "--", "true"], "CPU 4096 does not exist"),
    (["--cpus", "0-x", "--", "true"], "--cpus '0-x'"),
    (["--membind", "4095", "--", "true"], "NUMA node 4095 does not exist"),
    (["--preferred", "0,1", "--", "true"], "preferred"),
    (["--cpus", CPU, "--cpunodebind", CPU_NODE, "--", "true"], "not allowed with"),
    (["--static", "--", "true"], "need a memory policy"),
    (["--cpus", CPU], "no command"),
])
def test_run_bad_input_is_one_line_exit_2(args, needle):
    result = pynuma("run", *args)
    _one_line_error(result, 2)
    assert needle in result.stderr


def test_run_missing_command_is_127():
    result = pynuma("run", "--cpus", CPU, "--", "/nonexistent/pynuma-test-command")
    assert result.returncode == 127
    assert "command not found" in result.stderr and "Traceback" not in result.stderr


def test_run_on_a_fake_root_refuses_but_dry_run_checks(tmp_path):
    cpu = tmp_path / "sys/devices/system/cpu"
    cpu.mkdir(parents=True)
    (cpu / "possible").write_text("0-7\n")
    (cpu / "online").write_text("0-7\n")
    refused = pynuma("run", "--root", str(tmp_path), "--cpus", "5", "--", "true")
    _one_line_error(refused, 1)
    assert "live host" in refused.stderr
    dry = pynuma("run", "--root", str(tmp_path), "--cpus", "5-6", "--dry-run", "--json", "--", "true")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["cpus"] == "5-6"
    bad = pynuma("run", "--root", str(tmp_path), "--cpus", "9", "--dry-run", "--", "true")
    _one_line_error(bad, 2)


# -- pynuma bind / show ------------------------------------------------------
@pytest.fixture
def sleeper():
    proc = subprocess.Popen([sys.executable, "-c", "import threading,time;"
                             "threading.Thread(target=time.sleep,args=(60,),daemon=True).start();"
                             "print('ok',flush=True);time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    yield proc
    proc.kill()
    proc.wait()


def _allowed(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/status") as f:
        return next(line.split(":")[1].strip() for line in f if line.startswith("Cpus_allowed_list"))


def test_bind_all_threads_and_json(sleeper):
    target = str(CPUSet([ALLOWED.max()]))
    result = pynuma("bind", str(sleeper.pid), "--all-threads", "--cpus", target, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    tids = sorted(int(t) for t in os.listdir(f"/proc/{sleeper.pid}/task"))
    assert out["threads"] == tids and out["cpus"] == target
    assert all(_allowed(sleeper.pid, t) == target for t in tids)


@NEEDS_NATIVE
def test_bind_migrate_reports_pages_left(sleeper):
    result = pynuma("bind", str(sleeper.pid), "--migrate", MEM, MEM, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["migrate"]["pages_not_moved"] == 0


def test_bind_errors(sleeper, tmp_path):
    _one_line_error(pynuma("bind", str(sleeper.pid)), 2)
    _one_line_error(pynuma("bind", str(sleeper.pid), "--cpus", "4096"), 2)
    _one_line_error(pynuma("bind", "99999999", "--cpus", CPU), 1)
    refused = pynuma("bind", str(sleeper.pid), "--cpus", CPU, "--root", str(tmp_path))
    _one_line_error(refused, 1)
    assert "live host" in refused.stderr


def test_show_another_process(sleeper):
    result = pynuma("show", str(sleeper.pid), "--json", "--threads")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["pid"] == sleeper.pid and info["cpus_allowed"] == str(ALLOWED)
    assert info["policy_source"] in ("numa_maps", None)
    assert len(info["threads"]) == 2
    text = pynuma("show", str(sleeper.pid))
    assert "cpus allowed: " + str(ALLOWED) in text.stdout


def test_show_matches_numactl_show_fields():
    result = pynuma("show", "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["cpus_allowed"] == str(ALLOWED)
    if NUMACTL:
        theirs = subprocess.run([NUMACTL, "--show"], capture_output=True, text=True, timeout=60).stdout
        fields = dict(line.split(":", 1) for line in theirs.splitlines() if ":" in line)
        assert CPUSet(int(x) for x in fields["physcpubind"].split()) == CPUSet.parse(info["cpus_allowed"])
        assert CPUSet(int(x) for x in fields["membind"].split()) == CPUSet.parse(info["mems_allowed"])
        if bind.mempolicy_supported():
            assert fields["policy"].strip() == info["policy"]


def test_show_missing_pid_is_one_line():
    _one_line_error(pynuma("show", "99999999"), 1)


# -- pynuma bench memory -----------------------------------------------------
def test_bench_memory_json_tiny_run():
    started = time.monotonic()
    result = pynuma("bench", "memory", "--json", "--size", "2M", "--duration", "0.05")
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 60
    out = json.loads(result.stdout)
    n_cpu, n_mem = len(out["cpu_nodes"]), len(out["mem_nodes"])
    assert n_cpu >= 1 and n_mem >= 1
    assert len(out["latency_ns"]) == n_cpu and all(len(r) == n_mem for r in out["latency_ns"])
    for i, node in enumerate(out["cpu_nodes"]):
        if node in out["mem_nodes"]:
            j = out["mem_nodes"].index(node)
            assert out["latency_ns"][i][j] > 1.0  # a dependent load costs at least a nanosecond
            assert out["read_gbps"][i][j] > 0 and out["copy_gbps"][i][j] > 0
            assert out["normalised"][i][j] == 10
    assert result.stderr == ""  # no progress when stderr is not a terminal


@pytest.mark.parametrize("args", [["--size", "lots"], ["--duration", "0"], ["--threads", "0"],
                                  ["--cpu-nodes", "4095"], []])
def test_bench_bad_input_is_exit_2(args):
    cmd = ["bench"] + (["memory"] + args if args else [])
    _one_line_error(pynuma(*cmd), 2)


def test_run_passes_a_later_double_dash_to_the_command():
    for args in (["--cpus", CPU, "echo", "--", "x"], ["--cpus", CPU, "--", "echo", "--", "x"]):
        result = pynuma("run", *args)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "-- x"


@pytest.mark.parametrize("pid", ["0", "-3"])
def test_show_rejects_impossible_pids_as_bad_input(pid):
    out = subprocess.run([sys.executable, "-m", "pynuma", "show", "--", pid], capture_output=True, text=True)
    assert out.returncode == 2
    assert "positive" in out.stderr and "Traceback" not in out.stderr
