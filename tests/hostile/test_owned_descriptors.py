"""Objects that hold a descriptor give it back: on close, on a failed open, and when dropped unclosed."""
from __future__ import annotations

import gc
import os
import stat

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


def test_the_atomic_writer_never_replaces_what_is_not_a_file(tmp_path):
    from pynuma.errors import InputError
    from pynuma.state.atomic import write_atomic

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (fifo, tmp_path):
        before = open_fds()
        with pytest.raises(InputError, match=f"^{target}: not a regular file"):
            write_atomic(str(target), "{}")
        assert open_fds() == before
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == ["fifo"]  # nothing left behind
