"""How the launchers end the process: fast after commands that leave nothing for teardown, never losing output."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.sysfs_builder import Machine

PROJECT = Path(__file__).resolve().parents[2]

# a global whose __del__ runs only when the interpreter tears down normally
SCRIPT = """
import sys
sys.path.insert(0, {project!r})
class Witness:
    def __del__(self):
        sys.stderr.write("teardown ran\\n")
witness = Witness()
{extra}
from pynuma.cli import run
run({argv!r})
"""


def run_script(argv, extra=""):
    code = SCRIPT.format(project=str(PROJECT), argv=argv, extra=extra)
    # -S: a site hook of the test machine's interpreter may register atexit callbacks of its own
    return subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120)


@pytest.fixture
def root(tmp_path):
    return str(Machine(packages=2, nodes_per_package=2, cores_per_node=2, threads=2).write(tmp_path))


def test_topology_ends_without_teardown_and_keeps_all_output(root):
    res = run_script(["topology", "--json", "--root", root])
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["online_cpus"] == "0-15"  # flushed in full before the fast exit
    assert "teardown ran" not in res.stderr


def test_usage_errors_keep_their_exit_code_on_the_fast_path(root):
    res = run_script(["topology", "--bogus"])
    assert res.returncode == 2 and "unrecognized argument" in res.stderr
    assert "teardown ran" not in res.stderr


def test_other_commands_exit_normally(root):
    res = run_script(["--version"])
    assert res.returncode == 0 and res.stdout.startswith("pynuma ")
    assert "teardown ran" in res.stderr


def test_an_atexit_callback_gets_a_normal_exit(root):
    res = run_script(["topology", "--json", "--root", root],
                     extra="import atexit; atexit.register(lambda: sys.stderr.write('callback ran\\n'))")
    assert res.returncode == 0
    assert "callback ran" in res.stderr and "teardown ran" in res.stderr


def test_another_thread_gets_a_normal_exit(root):
    extra = ("import threading; release = threading.Event()\n"
             "worker = threading.Thread(target=lambda: (release.wait(), sys.stderr.write('thread ended\\n')))\n"
             "worker.start(); threading.Timer(0.5, release.set).start()")
    res = run_script(["topology", "--json", "--root", root], extra=extra)
    assert res.returncode == 0
    assert "thread ended" in res.stderr and "teardown ran" in res.stderr


@pytest.mark.parametrize("argv", [["--help"], ["topology", "--json", "ROOT"], ["topology", "ROOT"]],
                         ids=["help", "json", "tree"])
def test_a_reader_that_went_away_is_not_an_error(root, argv):
    argv = [root if a == "ROOT" else a for a in argv]
    if argv[0] == "topology":
        argv[-1:-1] = ["--root"]
    proc = subprocess.Popen([sys.executable, "-m", "pynuma", *argv], cwd=PROJECT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()  # nobody reads: every write gets EPIPE
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert err == b""


GC_SCRIPT = """
import gc, sys
sys.path.insert(0, {project!r})
import pynuma.cli as cli
try:
    code = cli.main({argv!r}, ends_process={ends!r})
except SystemExit as done:  # argparse's --help
    code = done.code
sys.stderr.write("collector on: %s\\n" % gc.isenabled())
sys.exit(code)
"""


@pytest.mark.parametrize("argv, ends, stays_on", [
    (["topology", "--json", "--root", "ROOT"], True, False),  # the launcher's fast path: the collector stays off
    (["topology", "--json", "--root", "ROOT"], False, True),  # an embedding caller gets it back
    (["qos", "--help"], True, True),  # other commands run with it on
])
def test_the_collector_stays_off_only_when_the_launcher_ends_the_process_after_it(root, argv, ends, stays_on):
    argv = [root if a == "ROOT" else a for a in argv]
    code = GC_SCRIPT.format(project=str(PROJECT), argv=argv, ends=ends)
    res = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert f"collector on: {stays_on}" in res.stderr
