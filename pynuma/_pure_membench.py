"""Pure-Python twin of :mod:`pynuma._native_membench`: slow but identical results.

Meant for tiny buffers (tests, machines without a compiler): the same
splitmix64 + Sattolo layout as the C code, so both build byte-identical
chase buffers from one seed.  Times are the thread's CPU time, as in C.
The times it reports measure the Python interpreter, not the memory.
"""
from __future__ import annotations

import time

_M64 = (1 << 64) - 1


def _splitmix64(state: int):
    state = (state + 0x9E3779B97F4A7C15) & _M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return state, z ^ (z >> 31)


def chase_build(buf, stride: int, seed: int) -> None:
    """Lay a random single cycle of byte offsets over ``len(buf) // stride`` slots."""
    if len(buf) == 0:
        raise ValueError("chase buffer is empty")
    n = len(buf) // stride if stride else 0
    if stride < 8 or stride % 8 or n < 2:
        raise ValueError(f"chase buffer of {len(buf)} bytes with stride {stride}: Invalid argument")
    words = memoryview(buf).cast("B")[: (len(buf) // 8) * 8].cast("Q")
    step = stride // 8
    slots = list(range(n))
    state = seed & _M64
    for i in range(n - 1, 0, -1):
        state, r = _splitmix64(state)
        j = r % i
        slots[i], slots[j] = slots[j], slots[i]
    for i, nxt in enumerate(slots):
        words[i * step] = nxt * stride


def chase_run(buf, start: int, steps: int):
    """Follow ``steps`` links from offset ``start``: ``(elapsed ns, final offset)``."""
    if len(buf) < 8 or start + 8 > len(buf):
        raise ValueError("chase start outside the buffer")
    words = memoryview(buf).cast("B")[: (len(buf) // 8) * 8].cast("Q")
    off = start
    t0 = time.thread_time_ns()
    for _ in range(steps):
        off = words[off >> 3]
    return time.thread_time_ns() - t0, off


def read_run(buf, reps: int):
    """Read every 64-bit word ``reps`` times: ``(elapsed ns, wrap-around sum of one pass)``."""
    if len(buf) == 0:
        raise ValueError("read buffer is empty")
    view = memoryview(buf).cast("B")
    words = view[: (len(view) // 8) * 8].cast("Q")  # trailing bytes are not read, as in C
    total = 0
    t0 = time.thread_time_ns()
    for _ in range(reps):
        total = sum(words) & _M64
    ns = time.thread_time_ns() - t0
    return ns, total


def copy_run(dst, src, reps: int) -> int:
    """Copy ``src`` into ``dst`` (same length) ``reps`` times: elapsed ns."""
    if len(dst) != len(src) or len(dst) == 0:
        raise ValueError("copy buffers must be non-empty and of equal length")
    d = memoryview(dst).cast("B")
    s = memoryview(src).cast("B")
    t0 = time.thread_time_ns()
    for _ in range(reps):
        d[:] = s
    return time.thread_time_ns() - t0
