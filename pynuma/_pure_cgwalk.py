"""Pure-Python twin of the native cgroup walker (``native/pn_cgwalk.c``).

``walk(rootfd, bases, systemd, specs, full, hook)`` opens the kubepods
cgroup in each hierarchy (``bases``: root-relative paths; "" = hierarchy not
mounted), reads it, then (``full``) its QoS tiers, pods and containers, and
returns one record per cgroup::

    (kind, qos, pod_uid, runtime, container_id, path, slots, bad)

``slots`` is a tuple of ``NSLOTS`` ints or None (file absent); ``bad`` a bit
mask of slots whose file was unreadable or held garbage.  Cgroups that vanish
mid-walk (ENOENT / ENODEV) are skipped.  No symlink is ever followed (cgroup
trees have none), so a dump cannot lead the walk outside its root.
``hook(path)``, when given, is called after each directory is listed and
before its children are read (tests use it to remove cgroups mid-walk).
"""
from __future__ import annotations

import errno
import os
import stat

from .cgroups import kubepods as _names
from .cgroups._spec import BASE, CONTAINER, INT, NSLOTS, POD, TIER, parse_int, parse_keyed

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
# O_NONBLOCK: a FIFO in a dump would otherwise block the open until a writer comes, forever
_FILE = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
_GONE = (errno.ENOENT, errno.ENODEV)
_DRIVER = {True: _names.SYSTEMD, False: _names.CGROUPFS}


class _Vanished(Exception):
    pass


def open_base(rootfd: int, path: str) -> int:
    """Open a root-relative directory one component at a time, never following a symlink."""
    fd = os.dup(rootfd)
    try:
        for part in path.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                raise OSError(errno.EINVAL, "'..' in a cgroup path", path)
            try:
                nfd = os.open(part, _DIR, dir_fd=fd)
            except OSError as err:  # named by the whole path, as the native walker does
                raise OSError(err.errno, err.strerror, path) from None
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def _read(dfd: int, name: str) -> bytes:
    fd = os.open(name, _FILE, dir_fd=dfd)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # only regular files are read
            code = errno.EISDIR if stat.S_ISDIR(mode) else errno.ENXIO
            raise OSError(code, os.strerror(code), name)
        return os.read(fd, 65536)
    finally:
        os.close(fd)


def _read_cgroup(fds, specs, parent_fd: int, name: str):
    """``(slots, bad)`` of one cgroup whose directory fds (per hierarchy) are ``fds``."""
    slots = [None] * NSLOTS
    bad = 0
    maybe_gone = False
    for base, fname, kind, slot, keys in specs:
        dfd = fds[base]
        if dfd < 0:
            continue
        mask = (1 << slot) if kind == INT else sum(1 << k[1] for k in keys)
        try:
            raw = _read(dfd, fname)
        except OSError as err:
            if err.errno == errno.ENODEV:
                raise _Vanished() from None
            if err.errno == errno.ENOENT:
                maybe_gone = maybe_gone or base == 0
            else:
                bad |= mask
            continue
        try:
            text = raw.decode("ascii")
            if kind == INT:
                slots[slot] = parse_int(text)
            else:
                for s, v in parse_keyed(text, keys).items():
                    slots[s] = v
        except ValueError:
            bad |= mask
    if maybe_gone and parent_fd >= 0:
        # A missing file may only mean a controller is off; a missing directory means the cgroup is gone.
        try:
            os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        except OSError as err:
            if err.errno in _GONE:
                raise _Vanished() from None
    return tuple(slots), bad


def _open_children(parents, name: str):
    """Directory fds of ``name`` below each hierarchy's parent fd (-1 where absent); None when gone from the primary."""
    fds = []
    try:
        for i, pfd in enumerate(parents):
            if pfd < 0:
                fds.append(-1)
                continue
            try:
                fds.append(os.open(name, _DIR, dir_fd=pfd))
            except OSError:
                if i == 0:
                    # gone, or unreadable: either way not walkable, skip it (discovery is tolerant)
                    raise _Vanished() from None
                fds.append(-1)
        return fds
    except BaseException:
        _close(fds)
        raise


def _close(fds) -> None:
    for fd in fds:
        if fd >= 0:
            os.close(fd)


def _subdirs(fd: int):
    try:
        with os.scandir(fd) as it:
            return sorted(e.name for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        raise _Vanished() from None


def walk(rootfd: int, bases, systemd: bool, specs, full: bool = True, hook=None) -> list:
    """Records of the kubepods cgroup and (``full``) its tiers, pods and containers."""
    driver = _DRIVER[bool(systemd)]
    specs = [tuple(s) for s in specs]
    fds = []
    try:
        for i, b in enumerate(bases):
            try:
                fds.append(open_base(rootfd, b) if b else -1)
            except OSError:
                if i == 0:
                    raise
                fds.append(-1)
        out = []
        try:
            slots, bad = _read_cgroup(fds, specs, -1, "")
        except _Vanished:
            raise OSError(errno.ENODEV, os.strerror(errno.ENODEV), bases[0]) from None
        out.append((BASE, None, None, None, None, "", slots, bad))
        if full:
            try:
                _walk_level(fds, specs, driver, None, "", out, hook, depth=0)
            except _Vanished:
                pass
        return out
    finally:
        _close(fds)


def _enter(fds, prefix, hook):
    """Sorted subdirectory names of ``fds[0]``, after reporting ``prefix`` to the hook."""
    names = _subdirs(fds[0])
    if hook is not None:
        hook(prefix)
    return names


def _open_and_read(fds, specs, name):
    """``(child fds, slots, bad)`` of child ``name``; ``_Vanished`` if it went away. The caller closes."""
    child = _open_children(fds, name)
    try:
        slots, bad = _read_cgroup(child, specs, fds[0], name)
    except BaseException:
        _close(child)
        raise
    return child, slots, bad


def _walk_level(fds, specs, driver, tier, prefix, out, hook, depth):
    """Children of kubepods (depth 0: tiers and Guaranteed pods) or of a tier (depth 1: pods)."""
    for name in _enter(fds, prefix, hook):
        path = prefix + name
        qos = _names.tier_of(name, driver) if depth == 0 else None
        uid = None if qos else _names.pod_uid_of(name, driver, tier)
        if qos is None and uid is None:
            continue
        try:
            child, slots, bad = _open_and_read(fds, specs, name)
        except _Vanished:
            continue
        try:
            if qos is not None:
                out.append((TIER, qos, None, None, None, path, slots, bad))
                try:
                    _walk_level(child, specs, driver, qos, path + "/", out, hook, depth=1)
                except _Vanished:
                    pass
                continue
            pod_qos = tier or _names.GUARANTEED
            out.append((POD, pod_qos, uid, None, None, path, slots, bad))
            try:
                _walk_pod(child, specs, driver, pod_qos, uid, path + "/", out, hook)
            except _Vanished:
                pass
        finally:
            _close(child)


def _walk_pod(fds, specs, driver, qos, uid, prefix, out, hook):
    for name in _enter(fds, prefix, hook):
        parsed = _names.container_of(name, driver)
        if parsed is None:
            continue
        # Containers are leaves: never listed, only read.
        try:
            child, slots, bad = _open_and_read(fds, specs, name)
        except _Vanished:
            continue
        _close(child)
        out.append((CONTAINER, qos, uid, parsed[0], parsed[1], prefix + name, slots, bad))
