"""_state_report: the text a failed ``state check`` prints."""
from __future__ import annotations

from pynuma.cli._state_report import print_problems


def test_problems_then_the_fix_written(capsys):
    print_problems("/s/cpu_manager_state", "bad policy", ["one", "two"], ["stuck"], "changes:", ["a -> b"],
                   "{}", dry_run=False)
    assert capsys.readouterr().out.splitlines() == [
        "kubelet would refuse to start: bad policy", "- one", "- two", "cannot fix: stuck",
        "changes:", "  a -> b", "wrote /s/cpu_manager_state"]


def test_dry_run_prints_the_text_and_nothing_to_write_skips_changes(capsys):
    print_problems("f", None, ["x"], [], "changes:", ["c"], '{"k": 1}', dry_run=True)
    assert capsys.readouterr().out.splitlines() == ["- x", "changes:", "  c", "would write:", '{"k": 1}']
    print_problems("f", None, ["x"], [], "changes:", ["c"], None, dry_run=True)
    assert capsys.readouterr().out.splitlines() == ["- x"]
