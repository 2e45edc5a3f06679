# distutils: sources = native/pn_fsread.c native/pn_groups.c native/pn_bitmap.c native/pn_scan.c
# distutils: include_dirs = native
# distutils: extra_compile_args = -pthread
# distutils: extra_link_args = -pthread
# cython: language_level=3
"""Native root-relative reader (twin of ``pynuma._pure_fsread``).

Paths are resolved inside an open root directory with
``openat2(RESOLVE_IN_ROOT)`` or an equivalent O_NOFOLLOW walk (see
native/pn_fsread.c).  C returns -errno; :func:`_oserror` is the one place
that turns it into the matching ``OSError`` subclass.
"""
import os

from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from libc.stdint cimport int64_t, uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from posix.unistd cimport close


cdef extern from "Python.h":
    object PyUnicode_DecodeFSDefaultAndSize(const char *s, Py_ssize_t size)
from posix.fcntl cimport O_RDONLY, O_WRONLY


cdef extern from "<fcntl.h>":
    int O_DIRECTORY


cdef extern from "<string.h>" nogil:
    size_t c_strlen "strlen"(const char *s)


cdef extern from "<sys/types.h>":
    ctypedef long ssize_t


cdef extern from "pn.h" nogil:
    ctypedef struct pn_buf:
        char *data
        size_t len, cap
    int pn_open_root(const char *path)
    int pn_open_in_root(int rootfd, const char *path, int flags)
    int pn_open_file(int rootfd, int dirfd, size_t dirlen, const char *path, int flags)
    ssize_t pn_read_fd(int fd, char *buf, size_t cap)
    int pn_read_many(int rootfd, const char *const *paths, size_t n, size_t limit,
                     pn_buf *out, ssize_t *results, size_t *offsets)
    ctypedef struct pn_walk_out:
        size_t count, cap
        size_t *leaders
        ssize_t *results
        size_t *offsets
        uint64_t *groups
        pn_buf text
    int pn_group_walk(int rootfd, const char *prefix, const char *suffix, const char *const *names,
                      size_t nnames, size_t mask_index, const uint64_t *reported, uint64_t *remaining,
                      size_t nwords, pn_walk_out *out)
    void pn_words_le(uint64_t *words, size_t nwords)
    ctypedef struct pn_scan_out:
        int64_t *values
        size_t len, cap
        int record
        pn_buf recorded
        char *cpuinfo
        ssize_t cpuinfo_len
        int have_pre
        pn_buf pre
        ssize_t pre_len[8]
        size_t pre_off[8]
    int pn_scan(int rootfd, const uint64_t *reported, size_t nwords, const uint64_t *mems, size_t mems_words,
                int want_cpuinfo, int threads, pn_scan_out *out)
    enum:
        PN_SCAN_IRREGULAR
        PN_SCAN_PRE
    int64_t PN_SCAN_NONE
    ssize_t pn_list_at(int rootfd, const char *path, pn_buf *out)
    int pn_kind_at(int rootfd, const char *path)
    ssize_t pn_write_at(int rootfd, const char *path, const char *data, size_t len)
    int pn_openat2_works(int rootfd)
    void pn_fsread_walk_only(int on)
    enum:
        PN_HAS_OPENAT2, PN_HAS_O_PATH, PN_HAS_STATX, PN_HAS_PIDFD_OPEN
        PN_HAS_SET_MEMPOLICY_HOME_NODE, PN_HAS_MOVE_PAGES, PN_HAS_GETCPU


_fsencode = os.fsencode
_fsdecode = os.fsdecode
_strerror = os.strerror


_ENXIO = 6
_EINVAL = 22
NOT_REGULAR = "not a regular file (a FIFO, socket or device)"
NUL_IN_PATH = "path holds a NUL byte"


cdef object _oserror(long rc, path):
    """``OSError(errno, strerror, path)`` for a -errno; Python picks the subclass
    (FileNotFoundError, PermissionError, NotADirectoryError, ...)."""
    cdef int code = <int>(-rc)
    if code == 12:
        return MemoryError()
    # pn_open_file's answer for a FIFO, socket or device where a file is expected
    return OSError(code, NOT_REGULAR if code == _ENXIO else _strerror(code), path)


cdef bytes _encode(path):
    """``os.fsencode(path)``, refusing an embedded NUL (C would silently read a shorter path)."""
    cdef bytes p = _fsencode(path)
    if b"\0" in p:
        raise OSError(_EINVAL, NUL_IN_PATH, path)
    return p


def open_root(path) -> int:
    """Open ``path`` as a root directory fd."""
    cdef bytes p = _encode(path)
    cdef int fd = pn_open_root(p)
    if fd < 0:
        raise _oserror(fd, path)
    return fd


def close_root(int fd) -> None:
    os.close(fd)


def read_at(int rootfd, path, Py_ssize_t limit=1 << 20) -> bytes:
    """Bytes of the file at ``path`` under the root (at most ``limit``)."""
    cdef bytes p = _encode(path)
    cdef const char *cp = p
    cdef char small[8192]
    cdef char *big = NULL
    cdef char *nb
    cdef size_t cap, got
    cdef ssize_t r
    cdef int fd
    if limit < 0:
        limit = 0
    with nogil:
        fd = pn_open_file(rootfd, -1, 0, cp, O_RDONLY)
    if fd < 0:
        raise _oserror(fd, path)
    try:
        # sysfs attributes are at most a page: one buffer on the stack covers them
        cap = <size_t>limit if limit < <Py_ssize_t>sizeof(small) else sizeof(small)
        with nogil:
            r = pn_read_fd(fd, small, cap)
        if r < 0:
            raise _oserror(r, path)
        if <size_t>r < cap or <size_t>limit == cap:
            return PyBytes_FromStringAndSize(small, r)
        got = <size_t>r
        while True:
            cap = cap * 4 if cap * 4 < <size_t>limit else <size_t>limit
            nb = <char *>realloc_or_null(big, cap)
            if nb == NULL:
                raise MemoryError()
            if big == NULL:
                copy_bytes(nb, small, got)
            big = nb
            with nogil:
                r = pn_read_fd(fd, big + got, cap - got)
            if r < 0:
                raise _oserror(r, path)
            got += <size_t>r
            if got < cap or cap == <size_t>limit:
                return PyBytes_FromStringAndSize(big, got)
    finally:
        free(big)
        close(fd)


cdef extern from "<stdlib.h>" nogil:
    void *realloc_or_null "realloc"(void *p, size_t n)


cdef inline void copy_bytes(char *dst, const char *src, size_t n) noexcept:
    cdef size_t i
    for i in range(n):
        dst[i] = src[i]


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL
    object PyUnicode_DecodeUTF8(const char *s, Py_ssize_t size, const char *errors)


cdef list _mark_nul(list nul, size_t i, const char **cpaths):
    """Note path ``i`` as holding a NUL (its result becomes -EINVAL) and read an empty path in its place."""
    cpaths[i] = b""
    if nul is None:
        nul = []
    nul.append(i)
    return nul


cdef list _read_batch(int rootfd, paths, Py_ssize_t limit, bint as_text):
    """One ``pn_read_many`` call over ``paths``; bytes (or text) per file.

    Failures are the negative errno for bytes and ``None`` for text.  A str's
    UTF-8 form is used in place; other paths (bytes, surrogate escapes) go
    through ``os.fsencode`` and are kept alive for the C call.
    """
    cdef size_t n = len(paths), i
    cdef pn_buf buf
    cdef int rc
    cdef const char **cpaths
    cdef ssize_t *results
    cdef size_t *offsets
    cdef list keep = None  # encoded bytes that must outlive the C call
    cdef list nul = None  # paths holding a NUL byte: failed with EINVAL, never truncated
    cdef list out
    cdef object p
    cdef Py_ssize_t ln
    if limit < 0:
        limit = 0
    if n == 0:
        return []
    memset(&buf, 0, sizeof(buf))
    cpaths = <const char **>malloc(n * sizeof(char *))
    results = <ssize_t *>malloc(n * sizeof(ssize_t))
    offsets = <size_t *>malloc(n * sizeof(size_t))
    try:
        if cpaths == NULL or results == NULL or offsets == NULL:
            raise MemoryError()
        for i in range(n):
            p = paths[i]
            if type(p) is str:
                try:
                    cpaths[i] = PyUnicode_AsUTF8AndSize(p, &ln)
                    if c_strlen(cpaths[i]) != <size_t>ln:
                        nul = _mark_nul(nul, i, cpaths)
                    continue
                except UnicodeEncodeError:
                    pass
            p = _fsencode(p)
            if keep is None:
                keep = []
            keep.append(p)
            cpaths[i] = PyBytes_AS_STRING(p)
            if c_strlen(cpaths[i]) != <size_t>PyBytes_GET_SIZE(p):
                nul = _mark_nul(nul, i, cpaths)
        with nogil:
            rc = pn_read_many(rootfd, cpaths, n, <size_t>limit, &buf, results, offsets)
        if rc < 0:
            raise MemoryError()
        if nul is not None:
            for i in nul:
                results[i] = -_EINVAL
        out = [None] * n
        for i in range(n):
            if results[i] < 0:
                if not as_text:
                    out[i] = results[i]
            elif as_text:
                out[i] = PyUnicode_DecodeUTF8(buf.data + offsets[i], results[i], "replace")
            else:
                out[i] = PyBytes_FromStringAndSize(buf.data + offsets[i], results[i])
        return out
    finally:
        free(cpaths)
        free(results)
        free(offsets)
        free(buf.data)


def read_many(int rootfd, paths, Py_ssize_t limit=1 << 16) -> list:
    """Contents of each path (bytes), or a negative errno where it failed.

    All files are opened, read and closed in one C call with the GIL released.
    """
    return _read_batch(rootfd, list(paths), limit, False)


def read_many_text(int rootfd, list paths, Py_ssize_t limit=1 << 16) -> list:
    """Texts of each path (UTF-8, undecodable bytes replaced), ``None`` where one failed."""
    return _read_batch(rootfd, paths, limit, True)


cdef uint64_t *_words_of(bits, size_t nwords) except NULL:
    """A malloc'd copy of a non-negative int as ``nwords`` host-order words."""
    cdef bytes raw = bits.to_bytes(nwords * 8, "little")
    cdef uint64_t *w = <uint64_t *>malloc(nwords * 8 if nwords else 8)
    if w == NULL:
        raise MemoryError()
    memcpy(w, PyBytes_AS_STRING(raw), nwords * 8)
    pn_words_le(w, nwords)
    return w


def group_walk(int rootfd, str prefix, str suffix, tuple names, Py_ssize_t mask_index, reported, remaining):
    """The groups among ``remaining`` (bitmap), leader by leader: ``(entries, complete)``.

    The lowest unplaced CPU leads; its files are ``prefix + cpu + suffix +
    name`` for each of ``names``, and ``names[mask_index]`` is a cpumask whose
    CPUs, limited to ``reported`` and still unplaced, join the leader.
    ``entries`` is ``[(leader, texts, group bitmap)]`` (a text is ``None``
    where its file could not be read).  ``complete`` is False when the last
    leader's mask was missing or did not parse: its group is then ``None``
    and the walk stopped there.
    """
    cdef size_t nnames = len(names), i, k, f
    cdef size_t nwords = (max(reported.bit_length(), remaining.bit_length()) + 63) // 64
    cdef bytes bprefix = prefix.encode("utf-8", "surrogateescape")
    cdef bytes bsuffix = suffix.encode("utf-8", "surrogateescape")
    cdef list bnames = [n.encode("utf-8", "surrogateescape") for n in names]
    cdef const char **cnames = NULL
    cdef uint64_t *creported = NULL
    cdef uint64_t *cremaining = NULL
    cdef const char *cprefix = bprefix
    cdef const char *csuffix = bsuffix
    cdef pn_walk_out out
    cdef int rc
    cdef list entries = []
    cdef list texts
    cdef ssize_t got
    if mask_index < 0 or <size_t>mask_index >= nnames:
        raise ValueError("mask_index out of range")
    if reported < 0 or remaining < 0:
        raise ValueError("negative bitmap")
    if not remaining:
        return entries, True
    if any(b"\0" in b for b in [bprefix, bsuffix] + bnames):
        # no file of the leader can be opened (as the pure twin finds): its mask is missing
        return [((remaining & -remaining).bit_length() - 1, [None] * nnames, None)], False
    memset(&out, 0, sizeof(out))
    try:
        cnames = <const char **>malloc(nnames * sizeof(char *))
        if cnames == NULL:
            raise MemoryError()
        for i in range(nnames):
            cnames[i] = PyBytes_AS_STRING(bnames[i])
        creported = _words_of(reported, nwords)
        cremaining = _words_of(remaining, nwords)
        with nogil:
            rc = pn_group_walk(rootfd, cprefix, csuffix, cnames, nnames, <size_t>mask_index,
                               creported, cremaining, nwords, &out)
        if rc == -12:
            raise MemoryError()
        if rc < 0 and rc != -11:
            raise _oserror(rc, prefix)
        for k in range(out.count):
            texts = [None] * nnames
            for f in range(nnames):
                got = out.results[k * nnames + f]
                if got >= 0:
                    texts[f] = PyUnicode_DecodeUTF8(out.text.data + out.offsets[k * nnames + f], got, "replace")
            if rc == -11 and k == out.count - 1:
                entries.append((out.leaders[k], texts, None))
            else:
                pn_words_le(out.groups + k * nwords, nwords)
                entries.append((out.leaders[k], texts, _int_from_bytes(
                    PyBytes_FromStringAndSize(<char *>(out.groups + k * nwords), nwords * 8), "little")))
        return entries, rc == 0
    finally:
        free(cnames)
        free(creported)
        free(cremaining)
        free(out.leaders)
        free(out.results)
        free(out.offsets)
        free(out.groups)
        free(out.text.data)


_int_from_bytes = int.from_bytes
_CACHE_TYPES = ("Data", "Instruction", "Unified")


cdef class _Stream:
    """Reads pn_scan's answer value by value."""
    cdef int64_t *v
    cdef size_t at, W

    cdef inline int64_t next(self):
        self.at += 1
        return self.v[self.at - 1]

    cdef object opt(self):
        cdef int64_t x = self.next()
        return None if x == PN_SCAN_NONE else x

    cdef object bits(self):
        cdef bytes raw = PyBytes_FromStringAndSize(<char *>(self.v + self.at), self.W * 8)
        pn_words_le(<uint64_t *>PyBytes_AS_STRING(raw), self.W)  # host words -> little-endian bytes
        self.at += self.W
        return _int_from_bytes(raw, "little")


def scan(int rootfd, reported, mems, bint want_cpuinfo, bint record, int threads=0):
    """A regular machine's topology in one pass: ``(status, answer, pre, recorded)``.

    ``reported``: the CPUs to report (bitmap), or ``None`` to read the CPU
    sets and resolve the cpuset cgroup here too (the online CPUs it allows
    are then reported, and its memory nodes stand for ``mems``); ``mems``:
    the allowed memory nodes (bitmap) or ``None``.  ``status`` is ``"ok"``
    or ``"irregular"`` (the tree needs the general path).  ``pre`` is
    ``None`` or, when irregular, the texts of
    cpu/{online,possible,present,isolated,offline} and
    /proc/{mounts,self/cpuset,self/cgroup} (``None`` where unreadable), for
    the general path to reuse; ``recorded`` is ``(files, dirs)`` read
    and listed when ``record``, else ``None``.  ``threads``: how many
    threads may read (0: one per usable CPU, up to 4, on machines of 16
    CPUs or more); the answer and the record do not depend on it.

    ``answer`` (status ``"ok"``): ``(sets, cpus, cores, packages, caches,
    node_dir, nodes, distances, slit, devices_present, cpuinfo_head)``: sets
    ``None`` or ``(possible, present, reported, offline, isolated)`` bitmaps;
    cpus ``[(id, package, die, cluster, core_id, core index)]``; cores
    ``[members]``; packages ``[(id, cpus)]``; caches ``[(level, type, size,
    id, cpus)]``; nodes ``[(id, MemTotal, MemFree, cpus, [(size kB, total,
    free, surplus, reserved)])]``; distances ``None`` or the square tuple of
    sysfs rows; slit whether an ACPI SLIT is there to consult (2+ nodes);
    cpuinfo_head ``None`` unless asked for.  Whenever it answers, the
    answer is the general path's (``pynuma/_pure_fsread.py``).
    """
    cdef size_t W = 1
    cdef size_t MW = 0
    cdef uint64_t *creported = NULL
    cdef uint64_t *cmems = NULL
    cdef pn_scan_out out
    cdef int rc
    cdef _Stream st
    cdef size_t i, k, n, pos, ln
    if (reported is not None and reported < 0) or (mems is not None and mems < 0):
        raise ValueError("negative bitmap")
    memset(&out, 0, sizeof(out))
    out.record = record
    try:
        if reported is not None:
            W = (reported.bit_length() + 63) // 64 if reported > 0 else 1
            creported = _words_of(reported, W)
        if mems is not None:
            MW = (mems.bit_length() + 63) // 64 if mems > 0 else 1
            cmems = _words_of(mems, MW)
        with nogil:
            rc = pn_scan(rootfd, creported, W, cmems, MW, want_cpuinfo, threads, &out)
        if rc == -12:
            raise MemoryError()
        if rc < 0:
            raise _oserror(rc, "/")
        pre = None
        if out.have_pre and rc == PN_SCAN_IRREGULAR:  # only the general path reuses them
            pre = tuple(PyUnicode_DecodeUTF8(out.pre.data + out.pre_off[k], out.pre_len[k], "replace")
                        if out.pre_len[k] >= 0 else None for k in range(PN_SCAN_PRE))
        recorded = None
        if record:
            files, dirs = [], []
            pos = 0
            while pos < out.recorded.len:
                ln = c_strlen(out.recorded.data + pos)
                entry = PyUnicode_DecodeUTF8(out.recorded.data + pos + 1, ln - 1, "surrogateescape")
                (files if out.recorded.data[pos] == b'F' else dirs).append(entry)
                pos += ln + 1
            recorded = (files, dirs)
        if rc == PN_SCAN_IRREGULAR:
            return "irregular", None, pre, recorded
        st = _Stream()
        st.v = out.values
        st.W = <size_t>st.next()
        sets = None
        if st.next():
            sets = (st.bits(), st.bits(), st.bits(), st.bits(), st.bits())
        n = <size_t>st.next()
        cpus = [(st.next(), st.opt(), st.opt(), st.opt(), st.opt(), st.next()) for i in range(n)]
        n = <size_t>st.next()
        cores = [st.bits() for i in range(n)]
        n = <size_t>st.next()
        packages = [(st.next(), st.bits()) for i in range(n)]
        node_dir = bool(st.next())
        n = <size_t>st.next()
        nodes = []
        for i in range(n):
            node = (st.next(), st.next(), st.next(), st.bits())
            k = <size_t>st.next()
            nodes.append(node + ([(st.next(), st.next(), st.next(), st.next(), st.opt()) for _ in range(k)],))
        n = <size_t>st.next()
        distances = tuple(tuple(st.next() for _ in range(n)) for _ in range(n)) if n else None
        slit = bool(st.next())
        n = <size_t>st.next()
        caches = [(st.next(), _CACHE_TYPES[st.next()], st.opt(), st.opt(), st.bits()) for i in range(n)]
        devices_present = bool(st.next())
        cpuinfo = None
        if out.cpuinfo_len >= 0:
            cpuinfo = PyUnicode_DecodeUTF8(out.cpuinfo, out.cpuinfo_len, "replace")
        answer = (sets, cpus, cores, packages, caches, node_dir, nodes, distances, slit, devices_present, cpuinfo)
        return "ok", answer, pre, recorded
    finally:
        free(creported)
        free(cmems)
        free(out.values)
        free(out.recorded.data)
        free(out.cpuinfo)
        free(out.pre.data)


cdef extern from "Python.h":
    int PyObject_GenericSetAttr(object o, object name, object value) except -1

_object_new = object.__new__


def make_records(type cls, rows) -> list:
    """One ``cls`` (a slotted, frozen :class:`pynuma._record.Record`) per row of all its field values.

    The scan's bulk builder: rows come from the scan itself, so there are no
    argument checks (``cls._make`` is the same one record at a time).
    """
    cdef tuple fields = cls._fields
    cdef Py_ssize_t n = len(fields), i
    cdef list out = []
    cdef tuple values
    cdef object obj
    for row in rows:
        values = tuple(row)
        if len(values) != n:
            raise ValueError(f"{cls.__name__} takes {n} values, got {len(values)}")
        obj = _object_new(cls)
        for i in range(n):
            PyObject_GenericSetAttr(obj, fields[i], values[i])
        out.append(obj)
    return out


cdef object _list(int rootfd, path, bint raise_errors):
    """Names in the directory at ``path`` (unsorted); a failure raises, or is returned as -errno."""
    cdef bytes p
    cdef const char *cp
    cdef pn_buf buf
    cdef ssize_t count
    cdef size_t pos = 0, ln
    cdef list names = []
    try:
        p = _encode(path)
    except OSError:
        if raise_errors:
            raise
        return -_EINVAL
    cp = p
    memset(&buf, 0, sizeof(buf))
    try:
        with nogil:
            count = pn_list_at(rootfd, cp, &buf)
        if count < 0:
            if raise_errors or count == -12:
                raise _oserror(count, path)
            return count
        while pos < buf.len:
            ln = c_strlen(buf.data + pos)
            names.append(PyUnicode_DecodeFSDefaultAndSize(buf.data + pos, <Py_ssize_t>ln))
            pos += ln + 1
        return names
    finally:
        free(buf.data)


def list_at(int rootfd, path) -> list:
    """Names in the directory at ``path`` under the root (unsorted)."""
    return _list(rootfd, path, True)


def list_names(int rootfd, path):
    """:func:`list_at`, but a negative errno instead of raising (a missing directory is common)."""
    return _list(rootfd, path, False)


def kind_at(int rootfd, path) -> int:
    """0 missing, 1 regular file (or other non-directory), 2 directory."""
    cdef bytes p
    try:
        p = _encode(path)
    except OSError:
        return 0
    cdef const char *cp = p
    cdef int k
    with nogil:
        k = pn_kind_at(rootfd, cp)
    return k


def write_at(int rootfd, path, data) -> int:
    """Write ``data`` to an existing file under the root; returns bytes written."""
    cdef bytes p = _encode(path)
    cdef bytes d = bytes(data)
    cdef const char *cp = p
    cdef const char *cd = d
    cdef size_t ln = <size_t>PyBytes_GET_SIZE(d)
    cdef ssize_t r
    with nogil:
        r = pn_write_at(rootfd, cp, cd, ln)
    if r < 0:
        raise _oserror(r, path)
    return r


def _walk_only(bint on) -> None:
    """Tests: force (or stop forcing) the O_NOFOLLOW walk used without openat2."""
    pn_fsread_walk_only(on)


def features(int rootfd=-1) -> dict:
    """Interfaces compiled in (``PN_HAS_*``) and whether openat2 works on this kernel."""
    cdef int fd = rootfd
    cdef int works
    if fd < 0:
        fd = pn_open_root(b"/")
    works = pn_openat2_works(fd) if fd >= 0 else 0
    if rootfd < 0 and fd >= 0:
        close(fd)
    return {
        "native": True,
        "openat2": bool(PN_HAS_OPENAT2) and bool(works),
        "compiled": {
            "PN_HAS_OPENAT2": bool(PN_HAS_OPENAT2),
            "PN_HAS_O_PATH": bool(PN_HAS_O_PATH),
            "PN_HAS_STATX": bool(PN_HAS_STATX),
            "PN_HAS_PIDFD_OPEN": bool(PN_HAS_PIDFD_OPEN),
            "PN_HAS_SET_MEMPOLICY_HOME_NODE": bool(PN_HAS_SET_MEMPOLICY_HOME_NODE),
            "PN_HAS_MOVE_PAGES": bool(PN_HAS_MOVE_PAGES),
            "PN_HAS_GETCPU": bool(PN_HAS_GETCPU),
        },
    }
