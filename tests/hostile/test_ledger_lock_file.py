"""The ledger's lock file is a regular file at its path, and a waiter locks the file that is there now."""
from __future__ import annotations

import os
import threading

import pytest

from pynuma.errors import InputError
from pynuma.ledger.lock import FileLock
from pynuma.ledger.store import Ledger

from ._fds import open_fds


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_only_a_regular_file_is_a_lock_file(tmp_path, kind):
    lock = tmp_path / "pynuma-ledger.db.lock"
    target = tmp_path / "elsewhere"
    target.write_text("")
    if kind == "symlink":
        os.symlink(target, lock)  # a link to /dev/null would be a lock every process on the host shares
    else:
        os.mkfifo(lock)
    before = open_fds()
    with pytest.raises(InputError, match=f"^{lock}: "):
        Ledger(str(tmp_path / "pynuma-ledger.db"))
    assert open_fds() == before and target.read_text() == ""


def test_a_waiter_locks_the_file_at_the_path_when_it_was_replaced(tmp_path):
    path = str(tmp_path / "l.lock")
    holder, waiter = FileLock(path), FileLock(path, timeout=10)
    holder.acquire()
    waiter._open()  # the waiter opened the file the holder locks, then waits
    got, done, inode = threading.Event(), threading.Event(), []

    def wait_then_hold():
        with waiter:
            inode.append(os.fstat(waiter._fd).st_ino)
            got.set()
            done.wait(10)

    thread = threading.Thread(target=wait_then_hold)
    thread.start()
    os.unlink(path)  # removed under the holder; a newcomer now creates and locks a new file
    newcomer = FileLock(path)
    newcomer.acquire()
    holder.release()
    assert not got.wait(0.3)  # the waiter did not take the orphaned file: it waits for the newcomer's
    newcomer.release()
    assert got.wait(10)
    assert inode == [os.stat(path).st_ino]
    done.set()
    thread.join(10)
    for lock in (holder, waiter, newcomer):
        lock.close()
