# distutils: sources = native/pn_affinity.c native/pn_mempolicy.c
# distutils: include_dirs = native
"""Native binding syscalls: CPU affinity and NUMA memory policy.

Same functions as :mod:`pynuma._pure_sys`.  Bitmaps are Python ints (bit i
= CPU or node i); masks are sized from the highest bit, so there is no cap
on CPU or node ids.  Errors are ``OSError`` naming the syscall; the GIL is
released around every syscall.
"""
from libc.stdlib cimport calloc, free
from cpython.buffer cimport PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.string cimport memcpy
import os
import sys

cdef extern from *:
    """
    #include <stddef.h>
    long pn_sched_getaffinity(int tid, unsigned long *mask, size_t bytes);
    int pn_sched_setaffinity(int tid, const unsigned long *mask, size_t bytes);
    int pn_gettid(void);
    int pn_set_mempolicy(int mode, const unsigned long *nodemask, unsigned long maxnode);
    int pn_get_mempolicy(int *mode, unsigned long *nodemask, unsigned long maxnode,
                         void *addr, unsigned long flags);
    int pn_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask,
                 unsigned long maxnode, unsigned int flags);
    long pn_migrate_pages(int pid, unsigned long maxnode, const unsigned long *old_nodes,
                          const unsigned long *new_nodes);
    long pn_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
                       int *status, int flags);
    """
    long pn_sched_getaffinity(int tid, unsigned long *mask, size_t nbytes) nogil
    int pn_sched_setaffinity(int tid, const unsigned long *mask, size_t nbytes) nogil
    int pn_gettid() nogil
    int pn_set_mempolicy(int mode, const unsigned long *nodemask, unsigned long maxnode) nogil
    int pn_get_mempolicy(int *mode, unsigned long *nodemask, unsigned long maxnode,
                         void *addr, unsigned long flags) nogil
    int pn_mbind(void *addr, unsigned long length, int mode, const unsigned long *nodemask,
                 unsigned long maxnode, unsigned int flags) nogil
    long pn_migrate_pages(int pid, unsigned long maxnode, const unsigned long *old_nodes,
                          const unsigned long *new_nodes) nogil
    long pn_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
                       int *status, int flags) nogil

# Linux refuses masks larger than a page of bits for the mempolicy calls.
DEF _MAX_NODE_BITS = 4096 * 8
cdef size_t _WORD_BITS = sizeof(unsigned long) * 8
cdef size_t _WORD = sizeof(unsigned long)


cdef _raise(long rc, str syscall):
    """The one place -errno becomes an OSError subclass naming the syscall."""
    cdef int code = <int>(-rc)
    raise OSError(code, os.strerror(code), syscall)


cdef size_t _words_for(size_t nbits):
    if nbits == 0:
        nbits = 1
    return (nbits + _WORD_BITS - 1) // _WORD_BITS


# Kernel masks are arrays of unsigned long: on a little-endian host their
# bytes are exactly int.to_bytes(..., "little"), so one memcpy converts.
cdef bint _LITTLE = sys.byteorder == "little"


cdef unsigned long *_mask_from_int(object bits, size_t words) except NULL:
    """A calloc'ed mask of ``words`` unsigned longs holding ``bits`` (caller frees)."""
    cdef unsigned long *mask = <unsigned long *>calloc(words, _WORD)
    cdef size_t i
    cdef bytes raw
    if mask == NULL:
        raise MemoryError()
    raw = int(bits).to_bytes(words * _WORD, "little")
    if _LITTLE:
        memcpy(mask, <const char *>raw, words * _WORD)
    else:
        for i in range(words):
            mask[i] = <unsigned long>int.from_bytes(raw[i * _WORD:(i + 1) * _WORD], "little")
    return mask


cdef unsigned long *_nodemask(object bits, size_t nbits, size_t *words) except NULL:
    """A calloc'ed node mask for ``bits``, at least ``nbits`` wide (caller frees); sets ``words``."""
    cdef size_t need = bits.bit_length()
    words[0] = _words_for(need if need > nbits else nbits)
    return _mask_from_int(bits, words[0])


cdef object _int_from_mask(const unsigned long *mask, size_t words):
    cdef size_t i
    if _LITTLE:
        return int.from_bytes(PyBytes_FromStringAndSize(<const char *>mask, words * _WORD), "little")
    result = 0
    for i in range(words):
        if mask[i]:
            result |= (<object>mask[i]) << (i * _WORD_BITS)
    return result


def gettid():
    """The calling thread's kernel thread id."""
    return pn_gettid()


# A "get a mask" syscall, adapted to one shape so one loop can grow its mask.
cdef struct _getargs:
    int tid           # sched_getaffinity
    int mode          # get_mempolicy: out
    size_t addr       # get_mempolicy
    unsigned long flags

ctypedef long (*_getter)(_getargs *a, unsigned long *mask, size_t words) noexcept nogil


cdef long _getaffinity(_getargs *a, unsigned long *mask, size_t words) noexcept nogil:
    return pn_sched_getaffinity(a.tid, mask, words * _WORD)


cdef long _getmempolicy(_getargs *a, unsigned long *mask, size_t words) noexcept nogil:
    return pn_get_mempolicy(&a.mode, mask, words * _WORD_BITS, <void *>a.addr, a.flags)


cdef object _get_growing(_getter get, _getargs *args, size_t words, size_t max_bits, str syscall):
    """Call ``get`` with a zeroed mask of ``words``, doubling it on ``EINVAL`` up to ``max_bits``."""
    cdef unsigned long *mask
    cdef long rc
    while True:
        mask = <unsigned long *>calloc(words, _WORD)
        if mask == NULL:
            raise MemoryError()
        with nogil:
            rc = get(args, mask, words)
        if rc >= 0:
            try:
                return _int_from_mask(mask, words)
            finally:
                free(mask)
        free(mask)
        if rc != -22 or words * _WORD_BITS >= max_bits:
            _raise(rc, syscall)
        words *= 2


def sched_getaffinity(int tid, size_t nbits=0):
    """Affinity bitmap of thread ``tid`` (0 = caller); ``nbits`` is a size hint.

    Starts from ``nbits`` (the machine's possible CPUs) and doubles the mask
    on ``EINVAL`` until the kernel's cpumask fits.
    """
    cdef _getargs args
    args.tid = tid
    return _get_growing(_getaffinity, &args, _words_for(nbits if nbits > 1024 else 1024), 1 << 22,
                        "sched_getaffinity")


def sched_setaffinity(int tid, object bits):
    """Set the affinity of thread ``tid`` (0 = caller) to the CPUs in ``bits``."""
    bits = int(bits)
    if bits < 0:
        raise ValueError("negative CPU bitmap")
    cdef size_t words = _words_for(bits.bit_length())
    cdef unsigned long *mask = _mask_from_int(bits, words)
    cdef int rc
    try:
        with nogil:
            rc = pn_sched_setaffinity(tid, mask, words * _WORD)
    finally:
        free(mask)
    if rc < 0:
        _raise(rc, "sched_setaffinity")


def set_mempolicy(int mode, object bits, size_t nbits):
    """set_mempolicy(2): ``mode`` (with flag bits) over the nodes in ``bits``.

    ``nbits`` is the mask width (the machine's possible nodes); the kernel
    reads ``maxnode - 1`` bits, hence the ``+ 1``.
    """
    bits = int(bits)
    cdef size_t words
    cdef unsigned long *mask = _nodemask(bits, nbits, &words)
    cdef unsigned long maxnode = words * _WORD_BITS + 1
    cdef int rc
    try:
        with nogil:
            if bits == 0:
                rc = pn_set_mempolicy(mode, NULL, 0)
            else:
                rc = pn_set_mempolicy(mode, mask, maxnode)
    finally:
        free(mask)
    if rc < 0:
        _raise(rc, "set_mempolicy")


def get_mempolicy(size_t nbits=0, size_t addr=0, unsigned long flags=0):
    """get_mempolicy(2): ``(mode, node bitmap)``; grows the mask on ``EINVAL``.

    With ``MPOL_F_NODE|MPOL_F_ADDR`` in ``flags`` the mode is the node of
    the page at ``addr``.
    """
    cdef _getargs args
    args.mode = 0
    args.addr = addr
    args.flags = flags
    bits = _get_growing(_getmempolicy, &args, _words_for(nbits if nbits > 64 else 64), _MAX_NODE_BITS,
                        "get_mempolicy")
    return args.mode, bits


# Buffers are taken with the buffer protocol, not typed memoryviews: Cython's memoryview
# support imports collections.abc when the module loads (~3 ms for every `pynuma run`).
def buffer_address(object buf):
    """Address of the first byte of a writable buffer (an ``mmap``)."""
    cdef Py_buffer view
    PyObject_GetBuffer(buf, &view, PyBUF_WRITABLE)
    try:
        return 0 if view.len == 0 else <size_t>view.buf
    finally:
        PyBuffer_Release(&view)


def mbind(object buf, size_t offset, size_t length, int mode, object bits, size_t nbits,
          unsigned int flags):
    """mbind(2) on ``buf[offset:offset+length]`` (page aligned; an ``mmap``)."""
    cdef Py_buffer view
    cdef size_t words
    cdef unsigned long *mask = NULL
    cdef unsigned long maxnode
    cdef void *addr
    cdef int rc
    PyObject_GetBuffer(buf, &view, PyBUF_WRITABLE)  # held until the call is over: the map stays put
    try:
        if offset + length > <size_t>view.len or length == 0:
            raise ValueError("mbind range outside the buffer")
        addr = <void *>(<unsigned char *>view.buf + offset)
        bits = int(bits)
        mask = _nodemask(bits, nbits, &words)
        maxnode = words * _WORD_BITS + 1
        with nogil:
            if bits == 0:
                rc = pn_mbind(addr, length, mode, NULL, 0, flags)
            else:
                rc = pn_mbind(addr, length, mode, mask, maxnode, flags)
    finally:
        free(mask)
        PyBuffer_Release(&view)
    if rc < 0:
        _raise(rc, "mbind")


def migrate_pages(int pid, object old_bits, object new_bits, size_t nbits):
    """migrate_pages(2): move ``pid``'s pages on ``old_bits`` nodes to ``new_bits``.

    Returns the number of pages that could not be moved.
    """
    old_bits = int(old_bits)
    new_bits = int(new_bits)
    cdef size_t width = max(nbits, old_bits.bit_length(), new_bits.bit_length())
    cdef size_t words = _words_for(width)
    cdef unsigned long *old_mask = _mask_from_int(old_bits, words)
    cdef unsigned long *new_mask = NULL
    cdef long rc
    try:
        new_mask = _mask_from_int(new_bits, words)
        with nogil:
            rc = pn_migrate_pages(pid, words * _WORD_BITS + 1, old_mask, new_mask)
    finally:
        free(old_mask)
        free(new_mask)
    if rc < 0:
        _raise(rc, "migrate_pages")
    return rc


def move_pages(int pid, object addresses, object nodes=None, int flags=0):
    """move_pages(2): per-page status (node, or -errno) after moving/querying.

    ``nodes`` None queries where the pages are; otherwise one target node per
    address.
    """
    addresses = list(addresses)
    cdef size_t n = len(addresses)
    cdef size_t i
    if nodes is not None:
        nodes = list(nodes)
        if <size_t>len(nodes) != n:
            raise ValueError("move_pages: one target node per page")
    if n == 0:
        return []
    cdef void **pages = <void **>calloc(n, sizeof(void *))
    cdef int *status = <int *>calloc(n, sizeof(int))
    cdef int *targets = NULL
    cdef long rc
    try:
        if pages == NULL or status == NULL:
            raise MemoryError()
        for i in range(n):
            pages[i] = <void *><size_t>addresses[i]
        if nodes is not None:
            targets = <int *>calloc(n, sizeof(int))
            if targets == NULL:
                raise MemoryError()
            for i in range(n):
                targets[i] = nodes[i]
        with nogil:
            rc = pn_move_pages(pid, n, pages, targets, status, flags)
        if rc < 0:
            _raise(rc, "move_pages")
        return [status[i] for i in range(n)]
    finally:
        free(pages)
        free(status)
        free(targets)


def mempolicy_supported():
    """True: this module makes the memory-policy syscalls."""
    return True
