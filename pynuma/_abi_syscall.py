"""Memory-policy syscalls without a compiler: libc's ``syscall(2)`` through cffi in ABI mode.

The pure-Python twin (:mod:`pynuma._pure_sys`) imports this module only
when a memory-policy call is made, so cffi stays off every other path.
cffi's ABI mode opens the already-loaded C library (``dlopen(None)``) and
calls its variadic ``syscall`` entry: no compiler, no libnuma.  Syscall
numbers are per architecture; where this module does not know them (or
the interpreter is 32-bit on a 64-bit kernel, where the numbers differ),
:data:`WHY_NOT` says so and the twin raises ``Unsupported``.  Calls release
the GIL (cffi does for every call) and errors are ``OSError`` naming the
syscall, as the native core's.
"""
from __future__ import annotations

import os
from typing import Optional

from cffi import FFI

# include/uapi/asm-generic/unistd.h (arm64, riscv64, loongarch64 use the generic table)
_GENERIC = {"mbind": 235, "get_mempolicy": 236, "set_mempolicy": 237, "migrate_pages": 238, "move_pages": 239}
NUMBERS = {
    # arch/x86/entry/syscalls/syscall_64.tbl
    "x86_64": {"mbind": 237, "set_mempolicy": 238, "get_mempolicy": 239, "migrate_pages": 256, "move_pages": 279},
    "aarch64": _GENERIC,
    "riscv64": _GENERIC,
    "loongarch64": _GENERIC,
}

ffi = FFI()
ffi.cdef("long syscall(long number, ...);")


def _why_not() -> Optional[str]:
    machine = os.uname().machine
    if machine not in NUMBERS:
        return f"no syscall numbers known for {machine} (known: {', '.join(sorted(NUMBERS))})"
    if ffi.sizeof("void *") != 8:
        return f"a 32-bit interpreter on {machine} uses another syscall table"
    return None


#: why these calls cannot be made here, or None when they can
WHY_NOT = _why_not()
_numbers = NUMBERS.get(os.uname().machine, {})
_libc = ffi.dlopen(None) if WHY_NOT is None else None


def call(name: str, *args) -> int:
    """``syscall(number of name, *args)`` (each arg a cdata: cffi passes variadic arguments only as C values);
    the result, or ``OSError(errno, strerror, name)``."""
    rc = _libc.syscall(ffi.cast("long", _numbers[name]), *args)
    if rc < 0:
        code = ffi.errno
        raise OSError(code, os.strerror(code), name)
    return rc


def ulong(value: int):
    return ffi.cast("unsigned long", value)


def slong(value: int):
    return ffi.cast("long", value)


WORD = ffi.sizeof("unsigned long")
WORD_BITS = WORD * 8


def mask(bits: int, words: int):
    """An ``unsigned long[words]`` holding ``bits`` (bit i of word i // WORD_BITS is node i)."""
    out = ffi.new("unsigned long[]", words)
    for i in range(words):
        out[i] = (bits >> (i * WORD_BITS)) & ((1 << WORD_BITS) - 1)
    return out


def mask_value(arr, words: int) -> int:
    value = 0
    for i in range(words):
        if arr[i]:
            value |= int(arr[i]) << (i * WORD_BITS)
    return value
