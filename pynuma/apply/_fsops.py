"""Directory and file changes below an :class:`~pynuma.fsroot.FsRoot` (the reader has no mkdir).

On the live host these are plain cgroupfs operations.  On a fake root (a
directory standing in for ``/``) the kernel is not there to fill a new
cgroup with its interface files or to let ``rmdir`` drop them, so the
missing file is created on write and the files are unlinked before
``rmdir``: the tree then looks as a real one would.  Paths never leave the
root: each one is resolved and checked first.
"""
from __future__ import annotations

import os

from ..errors import InputError, from_oserror
from ..fsroot import FsRoot


def host_path(fs: FsRoot, path: str) -> str:
    """The real location of root-relative ``path``; ``InputError`` if it would leave the root."""
    real = fs.host_path(path)
    if fs.is_host:
        return real
    parent = os.path.realpath(os.path.dirname(real))
    root = os.path.realpath(fs.root)
    if parent != root and not parent.startswith(root + os.sep):
        raise InputError(f"{real}: resolves outside the root {fs.root}")
    return os.path.join(parent, os.path.basename(real))


def mkdir(fs: FsRoot, path: str) -> bool:
    """Create one directory; False when it already existed."""
    try:
        os.mkdir(host_path(fs, path), 0o755)
    except FileExistsError:
        return False
    except OSError as err:
        raise from_oserror(err, fs.host_path(path)) from err
    return True


def rmdir(fs: FsRoot, path: str) -> bool:
    """Remove one (cgroup) directory; False when it was already gone."""
    real = host_path(fs, path)
    try:
        if not fs.is_host:
            for name in os.listdir(real):
                entry = os.path.join(real, name)
                if os.path.isfile(entry) and not os.path.islink(entry):
                    os.unlink(entry)
        os.rmdir(real)
    except FileNotFoundError:
        return False
    except OSError as err:
        raise from_oserror(err, fs.host_path(path)) from err
    return True


def write(fs: FsRoot, path: str, text: str) -> None:
    """Write a control file (one ``write(2)``); on a fake root a missing file is created."""
    if not fs.is_host and not fs.exists(path):
        real = host_path(fs, path)
        try:
            fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            os.close(fd)
        except FileExistsError:
            pass
        except OSError as err:
            raise from_oserror(err, real) from err
    fs.write_text(path, text)


def read(fs: FsRoot, path: str):
    """Text of a control file, or None when missing or unreadable."""
    return fs.read_optional(path)
