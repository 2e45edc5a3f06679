"""Pure-Python twin of :mod:`pynuma._native_sys`.

CPU affinity goes through ``os.sched_getaffinity``/``os.sched_setaffinity``
(CPython's own wrappers of the same syscalls).  Python's standard library
has no memory-policy calls and pynuma uses no ctypes, so every
memory-policy function raises :class:`pynuma.errors.Unsupported`; callers
check :func:`mempolicy_supported` first.
"""
from __future__ import annotations

import os
import threading

from .errors import Unsupported

_WHY = "needs the native core (pynuma built with its C extensions); the pure-Python path has no memory-policy syscalls"


def gettid() -> int:
    """The calling thread's kernel thread id."""
    return threading.get_native_id()


def sched_getaffinity(tid: int, nbits: int = 0) -> int:
    """Affinity bitmap of thread ``tid`` (0 = caller); ``nbits`` is ignored (CPython sizes the mask)."""
    bits = 0
    for cpu in os.sched_getaffinity(tid):
        bits |= 1 << cpu
    return bits


def sched_setaffinity(tid: int, bits: int) -> None:
    """Set the affinity of thread ``tid`` (0 = caller) to the CPUs in ``bits``."""
    bits = int(bits)
    if bits < 0:
        raise ValueError("negative CPU bitmap")
    cpus = []
    pos = 0
    while bits:
        if bits & 1:
            cpus.append(pos)
        bits >>= 1
        pos += 1
    try:
        os.sched_setaffinity(tid, cpus)
    except OSError as err:
        raise OSError(err.errno, err.strerror, "sched_setaffinity") from None


def mempolicy_supported() -> bool:
    """False: the pure path cannot make memory-policy syscalls."""
    return False


def set_mempolicy(mode: int, bits: int, nbits: int) -> None:
    raise Unsupported(f"set_mempolicy {_WHY}")


def get_mempolicy(nbits: int = 0, addr: int = 0, flags: int = 0):
    raise Unsupported(f"get_mempolicy {_WHY}")


def buffer_address(buf) -> int:
    raise Unsupported(f"buffer addresses {_WHY}")


def mbind(buf, offset: int, length: int, mode: int, bits: int, nbits: int, flags: int) -> None:
    raise Unsupported(f"mbind {_WHY}")


def migrate_pages(pid: int, old_bits: int, new_bits: int, nbits: int) -> int:
    raise Unsupported(f"migrate_pages {_WHY}")


def move_pages(pid: int, addresses, nodes=None, flags: int = 0):
    raise Unsupported(f"move_pages {_WHY}")
