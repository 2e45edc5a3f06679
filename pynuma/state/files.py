"""Reading a checkpoint file safely: never block on a FIFO or device, never read without bound.

A state directory is a user-given place: ``cpu_manager_state`` may turn out
to be a FIFO, ``/dev/zero`` behind a symlink, or a sparse giant.  Files are
opened with ``O_NONBLOCK``, must be regular files, and are read up to
:data:`MAX_CHECKPOINT_BYTES` (the kubelet's checkpoints are kilobytes; a
node with thousands of containers stays far below it).
"""
from __future__ import annotations

import os
import stat
from typing import Optional

from ..errors import CheckpointError, InputError

MAX_CHECKPOINT_BYTES = 16 << 20


def read_text(path: str, missing_ok: bool = False, limit: int = MAX_CHECKPOINT_BYTES,
              errors: str = "surrogateescape") -> Optional[str]:
    """The file's text; ``None`` when missing and ``missing_ok``; else one error naming the file.

    Not a regular file, or too big: :class:`InputError` (the path given is
    wrong).  Unreadable: :class:`CheckpointError`.  ``errors="strict"``
    lets a non-UTF-8 file raise ``UnicodeDecodeError`` for the caller.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise InputError(f"{path}: no such file") from None
    except OSError as err:
        raise CheckpointError(f"{path}: {err.strerror or err}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{path}: not a regular file")
        if st.st_size > limit:
            raise InputError(f"{path}: {st.st_size} bytes, more than a checkpoint can be ({limit})")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # grew while we read it
                raise InputError(f"{path}: more than {limit} bytes")
            chunks.append(chunk)
    except OSError as err:
        raise CheckpointError(f"{path}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", errors=errors)
