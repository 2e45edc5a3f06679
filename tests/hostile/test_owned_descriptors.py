"""Objects that hold a descriptor give it back: on close, on a failed open, and when dropped unclosed."""
from __future__ import annotations

import gc

import pytest

import pynuma
from pynuma import bind

from ._fds import open_fds


def test_a_ledger_that_fails_to_open_holds_nothing(tmp_path):
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    before = open_fds()
    with pytest.raises(OSError):
        pynuma.Ledger(str(tmp_path / "l.db"), checkpoint_dir=str(not_a_directory))
    assert open_fds() == before


def test_a_ledger_dropped_without_close_releases_its_lock_file(tmp_path):
    before = open_fds()
    ledger = pynuma.Ledger(str(tmp_path / "l.db"))
    assert any(path.endswith("l.db.lock") for path in open_fds().values())
    del ledger
    gc.collect()
    assert open_fds() == before


def test_binding_calls_keep_no_descriptor_open():
    before = open_fds()
    bind.get_affinity()
    if bind.mempolicy_supported():
        bind.get_mempolicy()
    assert open_fds() == before
