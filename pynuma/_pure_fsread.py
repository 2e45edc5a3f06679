"""Pure-Python twin of the native root-relative reader.

A root is an open directory fd.  Paths are resolved component by component
inside it: ``..`` never climbs above the root and absolute symlinks are
re-based on the root (like ``openat2(RESOLVE_IN_ROOT)``), so a dump of
another machine can never make pynuma read this machine's files.
Errors are ``OSError`` with the errno of the failing step.
"""
from __future__ import annotations

import errno
import os
import stat

_MAX_LINKS = 40
#: why a FIFO, socket or device is refused where a file is expected (errno ENXIO, as open(2) says of a socket)
NOT_REGULAR = "not a regular file (a FIFO, socket or device)"
#: why a path holding a NUL byte is refused (EINVAL): C would read a shorter path
NUL_IN_PATH = "path holds a NUL byte"
_OWN_REASONS = (NOT_REGULAR, NUL_IN_PATH)
_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_O_PATH = getattr(os, "O_PATH", 0)
# directories on the way are only passed through: O_PATH needs search, not read, permission
_O_WALK = _O_DIR | _O_PATH


def open_root(path: str) -> int:
    """Open ``path`` as a root directory fd."""
    try:
        return os.open(path, _O_DIR)
    except OSError as err:
        raise _named(err, path) from None


def close_root(fd: int) -> None:
    os.close(fd)


def _components(path: str) -> list:
    return [c for c in path.split("/") if c and c != "."]


def _resolve_parent(rootfd: int, path: str):
    """Walk all but the last component of ``path``; return (dirfd, last name).

    The returned dirfd must be closed by the caller when it is not rootfd.
    """
    pending = _components(path)
    stack: list = []  # open fds of the directories below the root
    links = 0
    try:
        while len(pending) > 1:
            name = pending.pop(0)
            cur = stack[-1] if stack else rootfd
            if name == "..":
                if stack:
                    os.close(stack.pop())
                continue
            try:
                st = os.stat(name, dir_fd=cur, follow_symlinks=False)
            except OSError:
                raise
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
                target = os.readlink(name, dir_fd=cur)
                if target.startswith("/"):
                    while stack:
                        os.close(stack.pop())
                pending[:0] = _components(target)
                continue
            stack.append(os.open(name, _O_WALK | os.O_NOFOLLOW, dir_fd=cur))
        last = pending[0] if pending else "."
        if last == "..":
            if stack:
                os.close(stack.pop())
            last = "."
        while len(stack) > 1:
            os.close(stack.pop(0))
        return (stack[0] if stack else rootfd), last
    except BaseException:
        for fd in stack:
            os.close(fd)
        raise


def _open(rootfd: int, path: str, flags: int) -> int:
    if "\0" in path:
        raise OSError(errno.EINVAL, NUL_IN_PATH, path)
    links = 0
    want_dir = 0  # O_DIRECTORY once a followed link's target ended in a slash ("file/")
    while True:
        dirfd, name = _resolve_parent(rootfd, path)
        try:
            try:
                fd = os.open(name, flags | want_dir | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dirfd)
                # O_PATH|O_NOFOLLOW opens a final symlink itself: follow it instead
                if not flags & _O_PATH or not stat.S_ISLNK(os.fstat(fd).st_mode):
                    return fd
                try:
                    target = os.readlink(name, dir_fd=dirfd)
                finally:
                    os.close(fd)
            except OSError as err:
                if err.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) or name in (".", ".."):
                    raise
                try:
                    target = os.readlink(name, dir_fd=dirfd)
                except OSError:
                    raise err from None
        finally:
            if dirfd != rootfd:
                os.close(dirfd)
        links += 1
        if links > _MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
        # the link's directory: all but the last component (``.`` and empty ones are not components)
        parent = "/".join(_components(path)[:-1])
        path = target if target.startswith("/") else parent + "/" + target
        if target.endswith(("/", "/.")):  # as the kernel's lookup: "file/" must be a directory
            want_dir = os.O_DIRECTORY


def _named(err: OSError, path: str) -> OSError:
    """The same error naming the path the caller asked for (as the native reader does)."""
    code = err.errno or errno.EIO
    if code == errno.ENXIO:  # open(2)'s answer for a socket; ours for a FIFO or device
        reason = NOT_REGULAR
    else:
        reason = err.strerror if err.strerror in _OWN_REASONS else os.strerror(code)
    return OSError(code, reason, path)


def _open_file(rootfd: int, path: str, flags: int) -> int:
    """``_open`` for reading or writing a file: never blocks, and refuses all but a regular file.

    O_NONBLOCK: a FIFO would otherwise wait for a writer forever.  A directory
    is EISDIR; a FIFO, socket or device ENXIO (see native/pn_fsread.c).
    """
    fd = _open(rootfd, path, flags | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
    except BaseException:
        os.close(fd)
        raise
    if stat.S_ISREG(mode):
        return fd
    os.close(fd)
    if stat.S_ISDIR(mode):
        raise OSError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    raise OSError(errno.ENXIO, NOT_REGULAR, path)


def read_at(rootfd: int, path: str, limit: int = 1 << 20) -> bytes:
    """Bytes of the file at ``path`` under the root (at most ``limit``)."""
    try:
        return _read_at(rootfd, path, limit)
    except OSError as err:
        raise _named(err, path) from None


# A short read ends the file only under these (see native/pn_fsread.c,
# short_read_ends): regular files of a dump and plain sysfs attributes give
# everything in one read(); seq_file files (/proc, cgroupfs) give one kernel
# buffer per read() and sysfs binary attributes one page.
_SINGLE_SHOT = ("sys/devices/", "sys/bus/", "sys/class/", "sys/kernel/mm/")


def _read_at(rootfd: int, path: str, limit: int, short_ends: bool = False) -> bytes:
    fd = _open_file(rootfd, path, os.O_RDONLY)
    try:
        chunks = []
        total = 0
        while total < limit:
            want = min(65536, limit - total)
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if short_ends and len(chunk) < want and len(chunk) % 4096:
                break
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_many(rootfd: int, paths, limit: int = 1 << 16) -> list:
    """Contents of each path (bytes), or a negative errno where it failed."""
    out = []
    for p in paths:
        try:
            short_ends = isinstance(p, str) and p.lstrip("/").startswith(_SINGLE_SHOT)
            out.append(_read_at(rootfd, p, limit, short_ends))
        except OSError as err:
            out.append(-(err.errno or errno.EIO))
    return out


def read_many_text(rootfd: int, paths: list, limit: int = 1 << 16) -> list:
    """Texts of each path (UTF-8, undecodable bytes replaced), ``None`` where one failed."""
    return [r.decode("utf-8", "replace") if isinstance(r, bytes) else None
            for r in read_many(rootfd, paths, limit)]


def list_at(rootfd: int, path: str) -> list:
    """Names in the directory at ``path`` under the root (unsorted)."""
    try:
        fd = _open(rootfd, path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return os.listdir(fd)
        finally:
            os.close(fd)
    except OSError as err:
        raise _named(err, path) from None


def list_names(rootfd: int, path: str):
    """:func:`list_at`, but a negative errno instead of raising (a missing directory is common)."""
    try:
        return list_at(rootfd, path)
    except OSError as err:
        return -(err.errno or errno.EIO)


def kind_at(rootfd: int, path: str) -> int:
    """0 missing, 1 regular file (or other non-directory), 2 directory."""
    try:
        fd = _open(rootfd, path, os.O_RDONLY | _O_PATH)
    except OSError:
        return 0
    try:
        return 2 if stat.S_ISDIR(os.fstat(fd).st_mode) else 1
    finally:
        os.close(fd)


def write_at(rootfd: int, path: str, data: bytes) -> int:
    """Write ``data`` to an existing file under the root; returns bytes written.

    O_TRUNC, like a shell's ``echo 2 > knob``: harmless on sysfs/cgroupfs,
    and a plain file in a fake root ends up holding exactly ``data``.
    """
    try:
        fd = _open_file(rootfd, path, os.O_WRONLY | os.O_TRUNC)
        try:
            return os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as err:
        raise _named(err, path) from None


def features(rootfd: int = -1) -> dict:
    """Same keys as the native module; the pure path compiles nothing in."""
    flags = ("OPENAT2", "O_PATH", "STATX", "PIDFD_OPEN", "SET_MEMPOLICY_HOME_NODE", "MOVE_PAGES", "GETCPU")
    return {"native": False, "openat2": False, "compiled": {f"PN_HAS_{f}": False for f in flags}}
