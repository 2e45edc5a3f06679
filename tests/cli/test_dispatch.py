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


def test_errors_after_parsing_name_the_full_subcommand(tmp_path, capsys):
    """A subcommand's error says which one failed, in-process and one command after another."""
    missing = str(tmp_path / "missing")
    cases = [(["allocate", "cpus", "--count", "0", "--topology", missing], "pynuma allocate cpus: error: "),
             (["state", "show", missing], "pynuma state show: error: "),
             (["state", "check", missing], "pynuma state check: error: "),
             (["hugepages", "set", "2Mi=x", "--dry-run"], "pynuma hugepages set: error: "),
             (["topology", "--root", missing], "pynuma topology: error: "),
             (["eviction", "--count", "0"], "pynuma eviction: error: ")]
    for argv, prefix in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(prefix) and err.count("\n") == 1, (argv, err)
    assert main(["hints", "merge", "--policy", "x", "--hints", missing]) == 2
    assert capsys.readouterr().err.startswith("pynuma hints merge: error: ")
