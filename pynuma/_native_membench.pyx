# distutils: sources = native/pn_membench.c
# distutils: include_dirs = native
"""Native inner loops of the NUMA memory benchmark (same functions as :mod:`pynuma._pure_membench`).

Buffers are writable buffer objects (an ``mmap``); the loops run with the
GIL released and time themselves, so several benchmark threads can stream
at once.
"""
from libc.stdint cimport uint64_t
import os

cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    int pn_chase_build(void *buf, size_t bytes, size_t stride, uint64_t seed);
    uint64_t pn_chase_run(const void *buf, uint64_t start, uint64_t steps, uint64_t *end);
    uint64_t pn_read_run(const void *buf, size_t bytes, uint64_t reps, uint64_t *sum);
    uint64_t pn_copy_run(void *dst, const void *src, size_t bytes, uint64_t reps);
    """
    int pn_chase_build(void *buf, size_t nbytes, size_t stride, uint64_t seed) nogil
    uint64_t pn_chase_run(const void *buf, uint64_t start, uint64_t steps, uint64_t *end) nogil
    uint64_t pn_read_run(const void *buf, size_t nbytes, uint64_t reps, uint64_t *total) nogil
    uint64_t pn_copy_run(void *dst, const void *src, size_t nbytes, uint64_t reps) nogil


def chase_build(object buf, size_t stride, uint64_t seed):
    """Lay a random single cycle of byte offsets over ``len(buf) // stride`` slots."""
    cdef unsigned char[::1] view = buf
    cdef size_t n = view.shape[0]
    cdef int rc
    if n == 0:
        raise ValueError("chase buffer is empty")
    with nogil:
        rc = pn_chase_build(&view[0], n, stride, seed)
    if rc < 0:
        raise ValueError(f"chase buffer of {n} bytes with stride {stride}: {os.strerror(-rc)}")


def chase_run(object buf, uint64_t start, uint64_t steps):
    """Follow ``steps`` links from offset ``start``: ``(elapsed ns, final offset)``."""
    cdef const unsigned char[::1] view = buf
    cdef uint64_t end = 0, ns
    if view.shape[0] < 8 or start + 8 > <uint64_t>view.shape[0]:
        raise ValueError("chase start outside the buffer")
    with nogil:
        ns = pn_chase_run(&view[0], start, steps, &end)
    return ns, end


def read_run(object buf, uint64_t reps):
    """Read every 64-bit word ``reps`` times: ``(elapsed ns, wrap-around sum of one pass)``."""
    cdef const unsigned char[::1] view = buf
    cdef uint64_t total = 0, ns
    if view.shape[0] == 0:
        raise ValueError("read buffer is empty")
    with nogil:
        ns = pn_read_run(&view[0], view.shape[0], reps, &total)
    return ns, total


def copy_run(object dst, object src, uint64_t reps):
    """Copy ``src`` into ``dst`` (same length) ``reps`` times: elapsed ns."""
    cdef unsigned char[::1] d = dst
    cdef const unsigned char[::1] s = src
    cdef uint64_t ns
    if d.shape[0] != s.shape[0] or d.shape[0] == 0:
        raise ValueError("copy buffers must be non-empty and of equal length")
    with nogil:
        ns = pn_copy_run(&d[0], &s[0], d.shape[0], reps)
    return ns
