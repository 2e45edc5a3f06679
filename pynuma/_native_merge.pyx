# distutils: sources = native/pn_merge.c
# distutils: include_dirs = native
# cython: language_level=3
"""Native hint-merge core (twin of ``pynuma._pure_merge``; see its docstring for the contract).

Masks are Python ints of at most 64 bits (``-1`` = nil affinity);
``pynuma.policy.topologymanager.merge`` relabels wider node ids before calling.
"""
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    int pn_merge(uint64_t def, const uint64_t *masks, const uint8_t *flags, const size_t *offs, size_t nlists,
                 int closest, const uint32_t *dist, uint64_t budget, int mode, uint64_t *out_mask,
                 int *out_pref, int *out_exact);
    """
    int pn_merge(uint64_t default, const uint64_t *masks, const uint8_t *flags, const size_t *offs,
                 size_t nlists, int closest, const uint32_t *dist, uint64_t budget, int mode,
                 uint64_t *out_mask, int *out_pref, int *out_exact) nogil

cdef enum:
    PREFERRED = 1
    NIL = 2


cdef int _fill(list ml, bytes pb, uint64_t *masks, uint8_t *flags) except -1:
    """Copy one list's masks (Python ints, -1 = nil) and preferred flags into C arrays."""
    cdef Py_ssize_t j, n = len(ml)
    cdef const unsigned char *pp = pb
    cdef object v
    for j in range(n):
        v = ml[j]
        if v is None or v < 0:
            masks[j] = 0
            flags[j] = NIL | (PREFERRED if pp[j] else 0)
        else:
            try:
                masks[j] = v
            except OverflowError:
                raise ValueError("native merge core takes masks of at most 64 bits") from None
            flags[j] = PREFERRED if pp[j] else 0
    return 0


_MODES = {"auto": 0, "sparse": 1, "dense": 2}


def merge(default, lists, closest, dist, budget, strategy="auto"):
    """The kubelet's merged best hint as ``(mask, preferred, exact)``."""
    lists = [(list(m), bytes(p)) for m, p in lists]
    for m, p in lists:
        if len(m) != len(p):
            raise ValueError("masks and preferred flags differ in length")
    return _run(default, lists, None, closest, dist, budget, strategy)


def merge_hints(default, hint_lists, closest, dist, budget, strategy="auto"):
    """:func:`merge` straight from lists of hints (``.numa_affinity`` None = nil, ``.preferred``).

    One pass over the hints, no intermediate lists; ``OverflowError`` when a mask is
    wider than 64 bits (the caller relabels and uses :func:`merge`).
    """
    return _run(default, None, [lst if isinstance(lst, list) else list(lst) for lst in hint_lists],
                closest, dist, budget, strategy)


cdef int _fill_hints(list hl, uint64_t *masks, uint8_t *flags) except -1:
    """Copy one list of hints into C arrays (OverflowError for a mask over 64 bits)."""
    cdef Py_ssize_t j, n = len(hl)
    cdef object h, aff
    cdef uint8_t pref
    for j in range(n):
        h = hl[j]
        aff = h.numa_affinity
        pref = PREFERRED if h.preferred else 0
        if aff is None:
            masks[j] = 0
            flags[j] = NIL | pref
        else:
            masks[j] = aff._bits
            flags[j] = pref
    return 0


cdef _run(default, list lists, list hint_lists, closest, dist, budget, strategy):
    cdef list src = lists if lists is not None else hint_lists
    cdef size_t nlists = len(src), total = 0, i = 0, l
    cdef uint64_t c_default, out_mask = 0, c_budget = budget
    cdef int out_pref = 0, out_exact = 1, rc, c_closest = 1 if closest else 0
    cdef int mode = _MODES[strategy]
    cdef uint64_t *masks = NULL
    cdef uint8_t *flags = NULL
    cdef size_t *offs = NULL
    cdef uint32_t *cdist = NULL
    if closest and dist is None:
        raise ValueError("closest comparison needs a distance matrix")
    try:
        c_default = default
    except OverflowError:
        raise ValueError("native merge core takes masks of at most 64 bits") from None
    for item in src:
        total += len(item[0]) if lists is not None else len(item)
    try:
        masks = <uint64_t *>malloc((total + 1) * sizeof(uint64_t))
        flags = <uint8_t *>malloc(total + 1)
        offs = <size_t *>malloc((nlists + 1) * sizeof(size_t))
        if masks == NULL or flags == NULL or offs == NULL:
            raise MemoryError()
        for l in range(nlists):
            offs[l] = i
            if lists is not None:
                ml, pb = lists[l]
                _fill(<list>ml, <bytes>pb, masks + i, flags + i)
                i += len(ml)
            else:
                _fill_hints(<list>hint_lists[l], masks + i, flags + i)
                i += len(<list>hint_lists[l])
        offs[nlists] = i
        if c_closest:
            cdist = <uint32_t *>malloc(64 * 64 * sizeof(uint32_t))
            if cdist == NULL:
                raise MemoryError()
            for r in range(64 * 64):
                cdist[r] = 0
            if len(dist) > 64:
                raise ValueError("distance matrix wider than 64 nodes")
            for r, row in enumerate(dist):
                for col, d in enumerate(row):
                    if col < 64:
                        cdist[r * 64 + col] = d
        with nogil:
            rc = pn_merge(c_default, masks, flags, offs, nlists, c_closest, cdist, c_budget, mode,
                          &out_mask, &out_pref, &out_exact)
        if rc == -12:
            raise MemoryError()
        if rc < 0:
            raise ValueError(f"pn_merge failed ({rc})")
        return int(out_mask), bool(out_pref), bool(out_exact)
    finally:
        free(masks)
        free(flags)
        free(offs)
        free(cdist)
