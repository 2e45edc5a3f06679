# distutils: sources = native/pn_minplus.c
# distutils: include_dirs = native
# cython: language_level=3
"""Native suffix tables of a layered min-plus program (twin of ``pynuma._pure_minplus``; see its docstring)."""
from cpython cimport array
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc

import array as _array

cdef extern from *:
    """
    #include <stdint.h>
    int pn_minplus_suffix(int32_t n, const int32_t *off, const uint8_t *join, const int32_t *groups,
                          const uint8_t *kind, const int64_t *cost, int32_t J, int32_t X, int32_t j_least,
                          int64_t *tab);
    """
    int pn_minplus_suffix(int32_t n, const int32_t *off, const uint8_t *join, const int32_t *groups,
                          const uint8_t *kind, const int64_t *cost, int32_t J, int32_t X, int32_t j_least,
                          int64_t *tab) nogil

INF = 1 << 62
cdef array.array _TEMPLATE = _array.array("q")


def suffix_tables(opts, int J, int X, int j_least=-1):
    """The flat table of ``pynuma._pure_minplus.suffix_tables`` (an ``array('q')``)."""
    cdef Py_ssize_t n = len(opts), total = 0, i, o = 0
    cdef int32_t *off = NULL
    cdef uint8_t *join = NULL
    cdef uint8_t *kind = NULL
    cdef int32_t *groups = NULL
    cdef int64_t *cost = NULL
    cdef array.array tab
    cdef int rc
    if J < 0 or X < 0 or J > 4096 or X > 4096:
        raise ValueError("table dimensions out of range")
    opts = [list(p) for p in opts]
    for p in opts:
        total += len(p)
    try:
        off = <int32_t *>malloc((n + 1) * sizeof(int32_t))
        join = <uint8_t *>malloc(total + 1)
        kind = <uint8_t *>malloc(total + 1)
        groups = <int32_t *>malloc((total + 1) * sizeof(int32_t))
        cost = <int64_t *>malloc((total + 1) * sizeof(int64_t))
        if off == NULL or join == NULL or kind == NULL or groups == NULL or cost == NULL:
            raise MemoryError()
        for i in range(n):
            off[i] = o
            for dj, dx, c, k in opts[i]:
                if dj not in (0, 1) or dx < 0 or c < 0 or c >= INF // 2 or k not in (0, 1, 2):
                    raise ValueError(f"bad option {(dj, dx, c, k)}")
                join[o] = dj
                groups[o] = dx
                cost[o] = c
                kind[o] = k
                o += 1
        off[n] = o
        tab = array.clone(_TEMPLATE, (n + 1) * 2 * (J + 1) * (X + 1), zero=False)
        with nogil:
            rc = pn_minplus_suffix(<int32_t>n, off, join, groups, kind, cost, J, X, j_least,
                                   <int64_t *>tab.data.as_longlongs)
        if rc < 0:
            raise ValueError(f"pn_minplus_suffix failed ({rc})")
        return tab
    finally:
        free(off)
        free(join)
        free(kind)
        free(groups)
        free(cost)
