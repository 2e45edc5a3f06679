"""One writer at a time across processes and threads: an ``flock`` on a lock file plus a thread lock.

The file lock orders every change of the ledger *and* of the checkpoint
files derived from it, so files are always written in commit order.  A
process that dies holding it (even by ``kill -9``) releases it: the kernel
drops ``flock`` locks with the last descriptor.  Waiting backs off from 50 µs
to 5 ms and gives up after ``timeout`` seconds with :class:`LedgerBusy`, so a
stopped holder cannot hang a command forever.
"""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
import time

from ..errors import InputError, from_oserror
from .errors import LedgerBusy

_FIRST_WAIT = 50e-6
_MAX_WAIT = 5e-3


class FileLock:
    """Exclusive lock on ``path`` (created 0600 if missing); re-entrant within one thread."""

    def __init__(self, path: str, timeout: float = 60.0) -> None:
        self.path = path
        self.timeout = timeout
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd = -1

    def _open(self) -> int:
        if self._fd < 0:
            try:
                # never through a symlink (a link to /dev/null would be a lock every process shares), and
                # never blocking on a FIFO planted in its place; only a regular file is a lock file
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
            except OSError as err:
                if err.errno == errno.ELOOP:
                    raise InputError(f"{self.path}: a symlink, not a lock file") from None
                raise from_oserror(err, self.path) from None
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise InputError(f"{self.path}: not a regular file, so not a lock file")
            self._fd = fd
        return self._fd

    def _still_at_path(self, fd: int) -> bool:
        """Whether the locked file is still the one at the path (not removed or replaced meanwhile)."""
        try:
            here = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)

    def acquire(self) -> None:
        if not self._thread_lock.acquire(timeout=self.timeout):
            raise LedgerBusy(f"{self.path}: another thread held the ledger lock for {self.timeout:g} s")
        if self._depth:
            self._depth += 1
            return
        try:
            fd = self._open()
            deadline = time.monotonic() + self.timeout
            wait = _FIRST_WAIT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    if self._still_at_path(fd):
                        break
                    # the lock file was removed or replaced while we waited: a newcomer would lock the new
                    # file and write beside us, so lock what is at the path now
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
                    self._fd = -1
                    fd = self._open()
                    continue
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LedgerBusy(f"{self.path}: another process held the ledger lock for "
                                         f"{self.timeout:g} s") from None
                    time.sleep(wait)
                    wait = min(wait * 2, _MAX_WAIT)
        except BaseException:
            self._thread_lock.release()
            raise
        self._depth = 1

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._thread_lock.release()

    def __enter__(self) -> "FileLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def close(self) -> None:
        with self._thread_lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __del__(self) -> None:
        # a lock dropped without close() takes its descriptor with it (which also drops the flock)
        fd, self._fd = getattr(self, "_fd", -1), -1
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass
