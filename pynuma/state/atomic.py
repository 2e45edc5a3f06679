"""Crash-safe file replacement for state and checkpoint files."""
from __future__ import annotations

import os
import stat


def write_atomic(path: str, data, mode=None) -> None:
    """Replace ``path`` with ``data`` (str or bytes) so readers see old or new, never half.

    The data goes to a temporary file in the same directory, is fsynced,
    renamed over ``path``, and the directory is fsynced so the rename
    survives a crash.  ``mode`` defaults to the replaced file's permissions
    (0644 for a new file), so rewriting a checkpoint never widens or narrows them.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        # a device, FIFO, socket or directory in its place is never replaced (--save /dev/null)
        from ..errors import InputError

        raise InputError(f"{path}: not a regular file ({_kind(st.st_mode)}); not replaced")
    if mode is None:
        # the replaced file's own mode; a symlink in its place lends nothing
        mode = st.st_mode & 0o7777 if st is not None and stat.S_ISREG(st.st_mode) else 0o644
    import tempfile  # here, not at the top: reading a checkpoint need not pay for it

    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"
