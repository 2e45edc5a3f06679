"""Crash-safe file replacement for state and checkpoint files."""
from __future__ import annotations

import os
import tempfile


def write_atomic(path: str, data, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` (str or bytes) so readers see old or new, never half.

    The data goes to a temporary file in the same directory, is fsynced,
    renamed over ``path``, and the directory is fsynced so the rename
    survives a crash.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
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
