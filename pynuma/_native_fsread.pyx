# distutils: sources = native/pn_fsread.c
# distutils: include_dirs = native
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


cdef extern from "<string.h>" nogil:
    size_t c_strlen "strlen"(const char *s)


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
