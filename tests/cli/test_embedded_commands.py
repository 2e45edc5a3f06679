"""Command lines run inside another program (``pynuma.cli.main``) leave that program as it was.

The launcher owns its process; an embedder's process is not pynuma's to
replace, exit, re-bind or interrupt: ``run`` starts a child, usage errors
and ``--help`` return a code, the caller's Ctrl-C reaches the caller,
threads get their own error prefixes, and a missing standard stream is not
a crash.
"""
from __future__ import annotations

import _thread
import json
import os
import subprocess
import sys
import threading

import pytest

from pynuma import cli
from pynuma.cli import COMMANDS, _common
from tests.fixtures import host
from tests.fixtures.sysfs_builder import Machine

CPU = str(host.allowed_cpus().min())

# an embedding program: records its own state, runs one command line through cli.main, records again
EMBEDDER = r"""
import atexit, json, os, sys
sys.path.insert(0, sys.argv[1])
from pynuma import cli

log = open(sys.argv[2], "w")  # buffered: lost if the process were replaced or ended early
atexit.register(lambda: log.write("atexit ran\n"))
before = sorted(os.sched_getaffinity(0))
try:
    code = cli.main(json.loads(sys.argv[3]))
finally:
    log.write("finally ran\n")
print(json.dumps({"code": code, "affinity_before": before, "affinity_after": sorted(os.sched_getaffinity(0))}))
"""


def embed(tmp_path, argv):
    log = tmp_path / "log"
    project = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    res = subprocess.run([sys.executable, "-c", EMBEDDER, project, str(log), json.dumps(argv)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    *child_lines, report = res.stdout.strip().splitlines()
    return json.loads(report), child_lines, res.stderr, log.read_text()


def test_run_starts_a_child_with_the_placement_and_leaves_the_caller_alone(tmp_path):
    report, child, _, log = embed(tmp_path, ["run", "--cpus", CPU, "--", "sh", "-c",
                                             "grep Cpus_allowed_list /proc/self/status; exit 3"])
    assert child == [f"Cpus_allowed_list:\t{CPU}"]  # the child got the placement
    assert report["code"] == 3  # and its exit status came back
    assert report["affinity_after"] == report["affinity_before"]  # the caller kept its own
    assert log == "finally ran\natexit ran\n"  # the caller went on and ended its own way


@pytest.mark.skipif(not __import__("pynuma").bind.mempolicy_supported(), reason="memory policy needs the native core")
def test_run_memory_policy_goes_to_the_child_only(tmp_path):
    node = str(host.memory_node())
    script = "grep -m1 -o 'bind:[0-9-]*' /proc/self/numa_maps"
    report, child, _, _ = embed(tmp_path, ["run", "--membind", node, "--", "sh", "-c", script])
    assert child == [f"bind:{node}"] and report["code"] == 0
    from pynuma import bind

    assert bind.get_mempolicy().mode == "default"  # this process (another one) is untouched too


def test_run_of_a_missing_command_and_a_signalled_child(tmp_path):
    report, _, err, _ = embed(tmp_path, ["run", "--cpus", CPU, "--", str(tmp_path / "no-such-command")])
    assert report["code"] == 127 and "command not found" in err
    assert report["affinity_after"] == report["affinity_before"]
    report, _, _, _ = embed(tmp_path, ["run", "--", "sh", "-c", "kill -TERM $$"])
    assert report["code"] == 128 + 15


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_usage_errors_and_help_return_a_code_even_in_a_thread(name, capsys):
    codes = {}

    def call(argv):
        codes[tuple(argv)] = cli.main(argv)

    for argv, expected in (([name, "--no-such-option"], 2), ([name, "--help"], 0)):
        worker = threading.Thread(target=call, args=(argv,))
        worker.start()
        worker.join(60)
        assert codes.get(tuple(argv)) == expected, argv  # a SystemExit would have ended the thread
    err = capsys.readouterr().err
    assert f"pynuma {name}" in err and "error:" in err and "Traceback" not in err


def test_the_callers_ctrl_c_reaches_the_caller(tmp_path):
    root = Machine(packages=1, nodes_per_package=1, cores_per_node=2, threads=1).write(tmp_path / "root")
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            cli.main(["eviction", "--watch", "0.05", "--json", "--root", str(root)])
    finally:
        timer.cancel()


def test_under_the_launcher_ctrl_c_still_ends_a_watch_cleanly(tmp_path):
    import signal
    import time

    root = Machine(packages=1, nodes_per_package=1, cores_per_node=2, threads=1).write(tmp_path / "root")
    proc = subprocess.Popen([sys.executable, "-m", "pynuma", "eviction", "--watch", "0.05", "--root", str(root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == ""


def test_error_prefixes_are_per_thread():
    started, checked = threading.Event(), threading.Event()
    seen = {}

    def subcommand():
        _common._note_running("pynuma hints merge")
        started.set()
        checked.wait(10)
        seen["own"] = _common.error_prog("hints")

    worker = threading.Thread(target=subcommand)
    worker.start()
    started.wait(10)
    _common.forget_running()
    seen["other"] = _common.error_prog("hints")  # this thread parsed no subcommand
    checked.set()
    worker.join(10)
    assert seen == {"own": "pynuma hints merge", "other": "pynuma hints"}


def test_a_process_without_standard_streams(tmp_path, monkeypatch):
    root = Machine(packages=1, nodes_per_package=1, cores_per_node=2, threads=1).write(tmp_path / "root")
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", None)
    assert cli.main(["topology", "--json", "--root", str(root)]) == 0
    assert cli.main(["eviction", "--json", "--root", str(root)]) == 0
    assert cli.main(["topology", "--root", str(tmp_path / "missing")]) == 2
    assert cli.main(["eviction", "--no-such-option"]) == 2
