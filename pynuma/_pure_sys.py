"""Pure-Python twin of :mod:`pynuma._native_sys`.

CPU affinity goes through ``os.sched_getaffinity``/``os.sched_setaffinity``
(CPython's own wrappers of the same syscalls).  Python's standard library
has no memory-policy calls: they go through libc's ``syscall(2)`` with cffi
in ABI mode (:mod:`pynuma._abi_syscall`, imported on the first such call;
no compiler needed).  Where cffi is missing or the architecture's syscall
numbers are unknown they raise :class:`pynuma.errors.Unsupported` saying
why; callers check :func:`mempolicy_supported` first.
"""
from __future__ import annotations

import os
import threading

from .errors import Unsupported

# Linux refuses masks larger than a page of bits for the mempolicy calls.
_MAX_NODE_BITS = 4096 * 8
_abi_module = None
_abi_why: "str | None" = None


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


def _abi():
    """The cffi syscall module (imported once), or None with the reason in ``_abi_why``."""
    global _abi_module, _abi_why
    if _abi_module is None and _abi_why is None:
        try:
            from . import _abi_syscall
        except ImportError as err:
            _abi_why = f"cffi is not importable ({err})"
        else:
            if _abi_syscall.WHY_NOT is not None:
                _abi_why = _abi_syscall.WHY_NOT
            else:
                _abi_module = _abi_syscall
    return _abi_module


def _need(call: str):
    abi = _abi()
    if abi is None:
        raise Unsupported(f"{call} needs the native core or cffi on the pure-Python path: {_abi_why}")
    return abi


def mempolicy_supported() -> bool:
    """Whether memory-policy syscalls can be made (cffi importable, syscall numbers known)."""
    return _abi() is not None


def _words(nbits: int, word_bits: int) -> int:
    return max(1, (nbits + word_bits - 1) // word_bits)


def set_mempolicy(mode: int, bits: int, nbits: int) -> None:
    """set_mempolicy(2): ``mode`` (with flag bits) over the nodes in ``bits`` (``nbits``: mask width)."""
    abi = _need("set_mempolicy")
    bits = int(bits)
    if bits == 0:
        abi.call("set_mempolicy", abi.slong(mode), abi.ffi.NULL, abi.ulong(0))
        return
    words = _words(max(bits.bit_length(), nbits), abi.WORD_BITS)
    abi.call("set_mempolicy", abi.slong(mode), abi.mask(bits, words), abi.ulong(words * abi.WORD_BITS + 1))


def get_mempolicy(nbits: int = 0, addr: int = 0, flags: int = 0):
    """get_mempolicy(2): ``(mode, node bitmap)``; the mask doubles on ``EINVAL`` (as the native core's)."""
    abi = _need("get_mempolicy")
    words = _words(nbits if nbits > 64 else 64, abi.WORD_BITS)
    while True:
        mode = abi.ffi.new("int *")
        mask = abi.ffi.new("unsigned long[]", words)
        try:
            abi.call("get_mempolicy", mode, mask, abi.ulong(words * abi.WORD_BITS), abi.ffi.cast("void *", addr),
                     abi.ulong(flags))
        except OSError as err:
            if err.errno != 22 or words * abi.WORD_BITS >= _MAX_NODE_BITS:
                raise
            words *= 2
            continue
        return mode[0], abi.mask_value(mask, words)


def _pointer(abi, buf):
    """A cdata pointing at the first byte of writable ``buf`` (release it with ``abi.ffi.release``)."""
    return abi.ffi.from_buffer("unsigned char[]", buf, require_writable=True)


def buffer_address(buf) -> int:
    """Address of the first byte of a writable buffer (an ``mmap``)."""
    abi = _need("buffer addresses")
    view = _pointer(abi, buf)
    try:
        return int(abi.ffi.cast("uintptr_t", view)) if len(view) else 0
    finally:
        abi.ffi.release(view)


def mbind(buf, offset: int, length: int, mode: int, bits: int, nbits: int, flags: int) -> None:
    """mbind(2) on ``buf[offset:offset+length]`` (page aligned; an ``mmap``)."""
    abi = _need("mbind")
    view = _pointer(abi, buf)
    try:
        if offset < 0 or length <= 0 or offset + length > len(view):
            raise ValueError("mbind range outside the buffer")
        bits = int(bits)
        words = _words(max(bits.bit_length(), nbits), abi.WORD_BITS)
        addr = abi.ffi.cast("void *", int(abi.ffi.cast("uintptr_t", view)) + offset)
        if bits == 0:
            nodes, maxnode = abi.ffi.NULL, 0
        else:
            nodes, maxnode = abi.mask(bits, words), words * abi.WORD_BITS + 1
        abi.call("mbind", addr, abi.ulong(length), abi.slong(mode), nodes, abi.ulong(maxnode), abi.ulong(flags))
    finally:
        abi.ffi.release(view)


def migrate_pages(pid: int, old_bits: int, new_bits: int, nbits: int) -> int:
    """migrate_pages(2): move ``pid``'s pages on ``old_bits`` nodes to ``new_bits``; pages not moved."""
    abi = _need("migrate_pages")
    old_bits, new_bits = int(old_bits), int(new_bits)
    words = _words(max(nbits, old_bits.bit_length(), new_bits.bit_length()), abi.WORD_BITS)
    return abi.call("migrate_pages", abi.slong(pid), abi.ulong(words * abi.WORD_BITS + 1),
                    abi.mask(old_bits, words), abi.mask(new_bits, words))


def move_pages(pid: int, addresses, nodes=None, flags: int = 0):
    """move_pages(2): per-page status (node, or -errno) after moving/querying (``nodes`` None queries)."""
    abi = _need("move_pages")
    addresses = list(addresses)
    n = len(addresses)
    if nodes is not None:
        nodes = list(nodes)
        if len(nodes) != n:
            raise ValueError("move_pages: one target node per page")
    if n == 0:
        return []
    ffi = abi.ffi
    pages = ffi.new("void *[]", [ffi.cast("void *", a) for a in addresses])
    status = ffi.new("int[]", n)
    targets = ffi.NULL if nodes is None else ffi.new("int[]", nodes)
    abi.call("move_pages", abi.slong(pid), abi.ulong(n), pages, targets, status, abi.slong(flags))
    return list(status)
