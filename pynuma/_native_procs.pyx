# distutils: sources = native/pn_procs.c native/pn_fsread.c
# distutils: include_dirs = native
# cython: language_level=3
"""Native per-process reader (twin of :mod:`pynuma._pure_procs`).

``read_processes`` reads each process in C with the GIL released (see
native/pn_procs.c) and hands back raw texts and counts; what they mean is
decided in :mod:`pynuma.procs`.
"""
import os

from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memset
from libc.stdlib cimport calloc, free
from cpython.unicode cimport PyUnicode_DecodeUTF8

cdef extern from "<sys/types.h>":
    ctypedef long ssize_t

cdef extern from "pn_procs.h" nogil:
    ctypedef struct pn_buf:
        char *data
        size_t len, cap
    ctypedef struct pn_maps_count:
        uint64_t page_kb
        int huge
        int64_t node
        uint64_t pages
    ctypedef struct pn_policy_count:
        size_t off, len
        uint64_t lines
    ctypedef struct pn_thread_info:
        int tid
        int processor
        ssize_t allowed_len
        size_t allowed_off
    ctypedef struct pn_proc_out:
        pn_buf text
        ssize_t stat_len, status_len
        size_t stat_off, status_off
        int maps_rc
        uint64_t maps_lines, maps_bad
        pn_maps_count *maps
        size_t nmaps
        pn_policy_count *pols
        size_t npols
        ssize_t threads_rc
        pn_thread_info *threads
        size_t nthreads
    ctypedef struct pn_proc_scratch:
        pass
    int pn_read_proc(int rootfd, int pid, int flags, pn_proc_out *out, pn_proc_scratch *scratch)
    void pn_proc_free(pn_proc_out *out)
    void pn_proc_scratch_free(pn_proc_scratch *scratch)
    enum:
        PN_PROC_STAT, PN_PROC_STATUS, PN_PROC_MAPS, PN_PROC_THREADS
        PN_PROC_LINE_MAX, PN_PROC_POLICY_MAX, PN_PROC_POLICIES_MAX
    unsigned PN_PROC_TEXT_LIMIT, PN_PROC_MAPS_LIMIT, PN_PROC_THREADS_MAX
    unsigned long long PN_PROC_PAGES_MAX, PN_PROC_PAGE_KB_MAX

STAT = PN_PROC_STAT
STATUS = PN_PROC_STATUS
MAPS = PN_PROC_MAPS
THREADS = PN_PROC_THREADS


def limits():
    """The reader's bounds (shared with the pure twin)."""
    return {"text": PN_PROC_TEXT_LIMIT, "maps": PN_PROC_MAPS_LIMIT, "line": PN_PROC_LINE_MAX,
            "policy": PN_PROC_POLICY_MAX, "policies": PN_PROC_POLICIES_MAX, "classes": 16, "nodes": 1024,
            "pages": PN_PROC_PAGES_MAX, "page_kb": PN_PROC_PAGE_KB_MAX, "threads": PN_PROC_THREADS_MAX}


cdef inline object _text(pn_proc_out *o, ssize_t length, size_t off):
    if length < 0:
        return <object>length
    return PyUnicode_DecodeUTF8(o.text.data + off, length, "replace")


cdef object _one(pn_proc_out *o):
    cdef size_t i
    maps = [(o.maps[i].page_kb, o.maps[i].huge, o.maps[i].node, o.maps[i].pages) for i in range(o.nmaps)]
    policies = [(_text(o, <ssize_t>o.pols[i].len, o.pols[i].off), o.pols[i].lines) for i in range(o.npols)]
    threads = [(o.threads[i].tid, o.threads[i].processor,
                _text(o, o.threads[i].allowed_len, o.threads[i].allowed_off)) for i in range(o.nthreads)]
    return (_text(o, o.stat_len, o.stat_off), _text(o, o.status_len, o.status_off), o.maps_rc,
            o.maps_lines, o.maps_bad, maps, policies, o.threads_rc, threads)


# processes read per stretch without the GIL: long enough that a thread running Python meanwhile
# (psutil, in pynuma.procs) rarely makes this one wait for the GIL, short enough to bound the memory held
DEF _BATCH = 128


def read_processes(int rootfd, pids, int flags):
    """Per pid: a negative errno when ``/proc/PID`` cannot be opened, else
    ``(stat, status, maps_rc, maps_lines, maps_bad, maps, policies, threads_rc, threads)``.

    ``stat``/``status`` are texts or a negative errno (``-ENODATA`` when not
    asked for); ``maps`` is ``[(page_kb, huge, node, pages)]`` (classes in
    order of first use, nodes ascending), ``policies`` ``[(word, lines)]``,
    ``threads`` ``[(tid, processor or -1, Cpus_allowed_list text or -errno)]``.
    The GIL is released while a batch of processes is read.
    """
    cdef list todo = [int(p) for p in pids]
    cdef Py_ssize_t total = len(todo), start, i, n
    cdef pn_proc_out *outs = <pn_proc_out *>calloc(_BATCH, sizeof(pn_proc_out))
    cdef int cpids[_BATCH]
    cdef int rcs[_BATCH]
    cdef pn_proc_scratch scratch
    cdef bint short = False
    cdef list result = []
    if outs == NULL:
        raise MemoryError()
    memset(&scratch, 0, sizeof(scratch))
    try:
        for start in range(0, total, _BATCH):
            n = min(_BATCH, total - start)
            for i in range(n):
                p = todo[start + i]
                cpids[i] = p if 0 < p <= 0x7FFFFFFF else 0
            with nogil:
                for i in range(n):
                    rcs[i] = pn_read_proc(rootfd, cpids[i], flags, &outs[i], &scratch)
                    if rcs[i] == -12:
                        short = True
                        break
            if short:
                raise MemoryError()
            for i in range(n):
                result.append(rcs[i] if rcs[i] < 0 else _one(&outs[i]))
    finally:
        for i in range(_BATCH):
            pn_proc_free(&outs[i])
        free(outs)
        pn_proc_scratch_free(&scratch)
    return result
