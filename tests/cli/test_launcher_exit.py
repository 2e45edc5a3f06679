"""The library never owns the process: embedded, ``cli.run``/``cli.main`` leave the caller's
buffered files, ``finally`` blocks, teardown and garbage collector as they were (DESIGN.md 16)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.sysfs_builder import Machine

PROJECT = Path(__file__).resolve().parents[2]

# a program's start: pynuma importable, and a global whose __del__ runs only at the interpreter's
# normal teardown
WITNESS = """
import sys
sys.path.insert(0, {project!r})
class Witness:
    def __del__(self):
        sys.stderr.write("teardown ran\\n")
witness = Witness()
"""

# an embedding program: a buffered file written before and in a finally block, the teardown witness,
# and the collector in a chosen state
EMBED = WITNESS + """
import gc
{gc_call}
thresholds = gc.get_threshold()
import pynuma.cli as cli
with open({log!r}, "w", buffering=1 << 16) as log:
    log.write("before\\n")
    try:
        {call}
    finally:
        log.write("finally ran; collector on: %s\\n" % gc.isenabled())
        sys.stderr.write("thresholds %s\\n" % (gc.get_threshold() == thresholds))
"""


def embed(tmp_path, call: str, collector_on: bool):
    log = tmp_path / "log.txt"
    code = EMBED.format(project=str(PROJECT), log=str(log), call=call,
                        gc_call="gc.enable()" if collector_on else "gc.disable()")
    # -S: a site hook of the test machine's interpreter must not change what is measured
    res = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120)
    return res, log.read_text() if log.exists() else ""


@pytest.fixture
def root(tmp_path):
    return str(Machine(packages=2, nodes_per_package=2, cores_per_node=2, threads=2).write(tmp_path / "m"))


@pytest.mark.parametrize("collector_on", [True, False], ids=["gc-on", "gc-off"])
@pytest.mark.parametrize("entry", ["run", "main"])
def test_an_embedded_command_leaves_files_finally_blocks_and_gc_alone(tmp_path, root, entry, collector_on):
    argv = ["topology", "--json", "--root", root]
    call = f"cli.run({argv!r})" if entry == "run" else f"sys.exit(cli.main({argv!r}))"
    res, log = embed(tmp_path, call, collector_on)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["online_cpus"] == "0-15"
    assert log == f"before\nfinally ran; collector on: {collector_on}\n"  # flushed at a normal exit
    assert "teardown ran" in res.stderr
    assert "thresholds True" in res.stderr  # the collector's tuning is the embedder's too


@pytest.mark.parametrize("argv, code", [(["topology", "--bogus"], 2), (["--version"], 0), (["nope"], 2)])
def test_run_ends_with_the_commands_code_by_an_ordinary_exit(tmp_path, argv, code):
    res, log = embed(tmp_path, f"cli.run({argv!r})", True)
    assert res.returncode == code, res.stderr
    assert log == "before\nfinally ran; collector on: True\n"
    assert "teardown ran" in res.stderr


def test_main_returns_instead_of_exiting(tmp_path, root):
    call = f"code = cli.main(['topology', '--root', {root!r}]); sys.stderr.write('returned %d\\n' % code)"
    res, log = embed(tmp_path, call, True)
    assert res.returncode == 0 and "returned 0" in res.stderr
    assert log.endswith("finally ran; collector on: True\n")


def test_the_library_does_not_switch_the_collector_or_exit():
    # only the process owners (bin/pynuma, python -m pynuma) may; nothing under pynuma/ but __main__.py
    offenders = []
    for path in (PROJECT / "pynuma").rglob("*.py"):
        if path.name == "__main__.py":
            continue
        text = path.read_text()
        for needle in ("gc.disable(", "gc.enable(", "gc.freeze(", "gc.set_threshold(", "os._exit(",
                       "signal.signal("):
            if needle in text:
                offenders.append(f"{path.relative_to(PROJECT)}: {needle}")
    assert offenders == []


# the launcher, which owns the process, runs a command and reports the collector it left
LAUNCH = """
import gc, sys
sys.path.insert(0, {project!r})
gc.set_threshold({young}, 10, 10)
sys.argv = ["pynuma", "--version"]
from pynuma.__main__ import launch, YOUNG_GENERATION_THRESHOLD
try:
    launch()
finally:
    sys.stderr.write("%d %d %s %d\\n" % (*gc.get_threshold()[:2], gc.isenabled(), YOUNG_GENERATION_THRESHOLD))
"""


@pytest.mark.parametrize("young", [700, 50_000])
def test_the_launcher_raises_a_small_young_generation_threshold_and_keeps_collecting(young):
    res = subprocess.run([sys.executable, "-S", "-c", LAUNCH.format(project=str(PROJECT), young=young)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    now, older, enabled, wanted = res.stderr.split()
    assert int(now) == max(young, int(wanted))  # raised, never lowered
    assert int(older) == 10 and enabled == "True"


# the launcher runs a command line; the witness tells whether the interpreter's teardown ran
TEARDOWN = WITNESS + """
{extra}
sys.argv = ["pynuma", *{argv!r}]
from pynuma.__main__ import launch
launch()
"""
AN_ATEXIT_CALLBACK = "import atexit; atexit.register(lambda: sys.stderr.write('atexit ran\\n'))"
A_SECOND_THREAD = ("import threading; gate = threading.Event(); threading.Thread(target=gate.wait, args=(2,)).start()")


def launch_with(root: str, argv: list, extra: str = "") -> subprocess.CompletedProcess:
    argv = [root if a == "ROOT" else a for a in argv]
    code = TEARDOWN.format(project=str(PROJECT), extra=extra, argv=argv)
    return subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("argv, code", [(["topology", "--json", "--root", "ROOT"], 0),
                                        (["topology", "--root", "ROOT", "--bogus"], 2),
                                        (["topology", "--root", "ROOT/missing"], 2)],
                         ids=["json", "bad-option", "bad-root"])
def test_a_command_that_leaves_nothing_open_ends_without_teardown(root, argv, code):
    res = launch_with(root, argv)
    assert res.returncode == code, res.stderr
    assert "teardown ran" not in res.stderr
    if code == 0:
        assert json.loads(res.stdout)["online_cpus"] == "0-15"  # the whole output, flushed
    else:
        assert res.stderr.startswith("pynuma topology: error:") or "usage" in res.stderr


@pytest.mark.parametrize("extra", [AN_ATEXIT_CALLBACK, A_SECOND_THREAD], ids=["atexit", "thread"])
def test_the_launcher_exits_normally_when_something_waits_for_it(root, extra):
    res = launch_with(root, ["topology", "--json", "--root", "ROOT"], extra)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["online_cpus"] == "0-15"
    assert "teardown ran" in res.stderr
    assert ("atexit ran" in res.stderr) == (extra == AN_ATEXIT_CALLBACK)


@pytest.mark.parametrize("argv", [["--version"], ["ledger", "--help"]], ids=["no-command", "not-promised"])
def test_commands_without_the_promise_get_the_interpreters_teardown(root, argv):
    res = launch_with(root, argv)
    assert res.returncode == 0, res.stderr
    assert "teardown ran" in res.stderr


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


@pytest.mark.parametrize("argv", [["--version"], ["topology", "--json", "--root", "ROOT", "--save", "SAVED"],
                                  ["topology", "--root", "ROOT/missing"]], ids=["version", "save", "error"])
@pytest.mark.parametrize("closed", [1, 2], ids=["stdout", "stderr"])
def test_a_stream_closed_from_the_start_is_not_a_traceback(tmp_path, root, argv, closed):
    saved = tmp_path / "topo.json"
    argv = [root + a[4:] if a.startswith("ROOT") else str(saved) if a == "SAVED" else a for a in argv]
    res = subprocess.run([sys.executable, "-m", "pynuma", *argv], cwd=PROJECT, capture_output=True, text=True,
                         preexec_fn=lambda: os.close(closed), timeout=120)
    assert res.returncode == (2 if "missing" in argv[-1] else 0), res.stderr + res.stdout
    assert "Traceback" not in res.stderr + res.stdout
    if "--save" in argv:
        assert json.loads(saved.read_text())["online_cpus"] == "0-15"  # the command's work is done


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("argv", [["--version"], ["state", "--help"], ["admit", "--help"], ["ledger", "show", "--help"],
                                  ["topology", "--root", "ROOT"], ["topology", "--json", "--root", "ROOT"]],
                         ids=["version", "help", "help of a command that tears down", "help of a subcommand", "tree",
                              "json"])
def test_output_to_a_full_disk_is_one_line_and_exit_1(root, argv):
    argv = [root if a == "ROOT" else a for a in argv]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # block-buffered, as usual
    with open("/dev/full", "w") as full:
        res = subprocess.run([sys.executable, "-m", "pynuma", *argv], cwd=PROJECT, stdout=full, stderr=subprocess.PIPE,
                             text=True, env=env, timeout=120)
    assert res.returncode == 1, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pynuma") and "No space left on device" in lines[0], res.stderr


def test_the_commands_that_close_every_file_are_commands():
    from pynuma.cli import CLOSE_EVERY_FILE, COMMANDS

    assert CLOSE_EVERY_FILE and CLOSE_EVERY_FILE <= set(COMMANDS)
