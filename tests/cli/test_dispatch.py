"""The pynuma command dispatcher: help, unknown commands, exit codes."""
import subprocess
import sys

from pynuma.cli import COMMANDS, main


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", *args], capture_output=True, text=True)


def test_help_lists_every_command():
    out = run("--help")
    assert out.returncode == 0
    for name in COMMANDS:
        assert f"  {name} " in out.stdout


def test_no_command_is_a_usage_error():
    out = run()
    assert out.returncode == 2 and "usage: pynuma" in out.stdout


def test_unknown_command_is_one_line_exit_2():
    out = run("frobnicate")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "frobnicate" in out.stderr


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("pynuma ")
