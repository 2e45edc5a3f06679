"""Atomic state-file replacement."""
import os

import pytest

from pynuma.atomic import write_atomic


def test_replaces_content_and_leaves_no_temp_files(tmp_path):
    path = tmp_path / "state"
    path.write_text("old")
    write_atomic(str(path), '{"new": 1}')
    assert path.read_text() == '{"new": 1}'
    assert os.listdir(tmp_path) == ["state"]


def test_failure_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "state"
    path.write_text("old")

    def boom(*a):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_atomic(str(path), b"new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["state"]
