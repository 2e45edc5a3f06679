"""Atomic state-file replacement."""
import os

import pytest

from pynuma.state.atomic import write_atomic


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


def test_rewrite_keeps_the_file_mode_and_new_files_get_0644(tmp_path):
    path = tmp_path / "cpu_manager_state"
    path.write_text("old")
    os.chmod(path, 0o600)
    write_atomic(str(path), "new")
    assert path.read_text() == "new" and (os.stat(path).st_mode & 0o777) == 0o600
    fresh = tmp_path / "fresh"
    write_atomic(str(fresh), "x")
    assert (os.stat(fresh).st_mode & 0o777) == 0o644
