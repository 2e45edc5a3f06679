# distutils: sources = native/pn_bitmap.c
# distutils: include_dirs = native
# cython: language_level=3
"""Native cpulist/cpumask core (twin of ``pynuma._pure_bitmap``).

The C side works on uint64 word arrays; this layer converts them to and
from Python ints with ``int.from_bytes`` / ``int.to_bytes`` (little-endian
words); parsed ids are bounded by ``PN_MAX_ID`` (no CPU id is larger on Linux).
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE


cdef extern from "pn.h" nogil:
    ctypedef struct pn_parse_err:
        size_t pos, end
        int why
    enum:
        PN_E_ITEM, PN_E_EMPTY_ITEM, PN_E_RANGE, PN_E_STRIDE, PN_E_TOO_BIG
        PN_E_EMPTY_MASK, PN_E_WORD_LONG, PN_E_WORD, PN_E_MASK_TOO_BIG
        PN_MAX_ID
    int pn_cpulist_parse(const char *s, size_t len, uint64_t **words, size_t *nwords, pn_parse_err *err)
    size_t pn_cpulist_format(const uint64_t *words, size_t nwords, char *buf, size_t cap)
    int pn_cpumask_parse(const char *s, size_t len, uint64_t **words, size_t *nwords, pn_parse_err *err)
    size_t pn_cpumask_format(const uint64_t *words, size_t nwords, size_t min_words, char *buf)
    void pn_words_le(uint64_t *words, size_t nwords)

MAX_ID = PN_MAX_ID

_int_from_bytes = int.from_bytes


cdef bytes _encode(text):
    if not isinstance(text, str):
        raise TypeError(f"expected str, not {type(text).__name__}")
    return (<str>text).encode("utf-8", "surrogatepass")


# pn_parse_err.why -> message; the same texts as the pure twin's.
_MESSAGES = {
    PN_E_EMPTY_ITEM: "empty item in cpulist",
    PN_E_RANGE: "invalid cpulist range {item!r}: end before start",
    PN_E_STRIDE: "invalid cpulist stride {item!r}",
    PN_E_TOO_BIG: "cpulist item {item!r}: id above {max}",
    PN_E_EMPTY_MASK: "empty cpumask",
    PN_E_WORD_LONG: "cpumask word {item!r} longer than 32 bits",
    PN_E_WORD: "invalid cpumask word {item!r}",
    PN_E_MASK_TOO_BIG: "cpumask {item!r}: bit above {max}",
}


cdef object _error(bytes raw, pn_parse_err *err, int rc, str what):
    if rc == -12:
        return MemoryError()
    item = raw[err.pos:err.end].decode("utf-8", "replace")
    if len(item) > 40:  # as the pure twin shows it: a message stays one short line
        item = item[:32] + "..."
    msg = _MESSAGES.get(err.why, "invalid {what} item {item!r}")
    return ValueError(msg.format(item=item, what=what, max=PN_MAX_ID))


cdef object _to_int(uint64_t *words, size_t n):
    if n == 0:
        return 0
    pn_words_le(words, n)
    return _int_from_bytes(PyBytes_FromStringAndSize(<char *>words, n * 8), "little")


cdef bytes _from_int(bits):
    """Little-endian uint64 words of a non-negative int, as bytes."""
    if not isinstance(bits, int):
        raise TypeError(f"bitmap must be an int, not {type(bits).__name__}")
    if bits < 0:
        raise ValueError("negative bitmap")
    cdef Py_ssize_t nbytes = ((bits.bit_length() + 63) // 64) * 8
    return bits.to_bytes(nbytes, "little")


ctypedef int (*_parse_fn)(const char *s, size_t len, uint64_t **words, size_t *nwords,
                         pn_parse_err *err) nogil


cdef object _parse(text, _parse_fn parse, str what):
    """Run one of the C parsers on ``text``: the bitmap as an int, or the ``ValueError`` it names."""
    cdef bytes raw = _encode(text)
    cdef uint64_t *words = NULL
    cdef size_t n = 0
    cdef pn_parse_err err
    cdef const char *s = PyBytes_AS_STRING(raw)
    cdef size_t ln = <size_t>PyBytes_GET_SIZE(raw)
    cdef int rc
    with nogil:
        rc = parse(s, ln, &words, &n, &err)
    if rc < 0:
        raise _error(raw, &err, rc, what)
    try:
        return _to_int(words, n)
    finally:
        free(words)


def parse_cpulist(text):
    """Parse a Linux cpulist (``"0-3,8,10-15:2/4"``) into a bitmap."""
    if isinstance(text, str) and not (<str>text).isascii():
        from . import _pure_bitmap  # never a list: the twin words the error (characters, not UTF-8 bytes)
        return _pure_bitmap.parse_cpulist(text)
    return _parse(text, pn_cpulist_parse, "cpulist")


def format_cpulist(bits):
    """Canonical cpulist of a bitmap: ascending, runs of 2+ as ``a-b``."""
    cdef bytes raw = _from_int(bits)
    cdef size_t nw = <size_t>PyBytes_GET_SIZE(raw) // 8
    cdef uint64_t *words
    cdef char stackbuf[512]
    cdef char *big
    cdef size_t need
    if nw == 0:
        return ""
    words = <uint64_t *>malloc(nw * 8)
    if words == NULL:
        raise MemoryError()
    try:
        memcpy_words(words, raw, nw)
        need = pn_cpulist_format(words, nw, stackbuf, sizeof(stackbuf))
        if need < sizeof(stackbuf):
            return stackbuf[:need].decode("ascii")
        big = <char *>malloc(need + 1)
        if big == NULL:
            raise MemoryError()
        try:
            pn_cpulist_format(words, nw, big, need + 1)
            return big[:need].decode("ascii")
        finally:
            free(big)
    finally:
        free(words)


cdef inline void memcpy_words(uint64_t *words, bytes raw, size_t nw):
    cdef const char *src = PyBytes_AS_STRING(raw)
    cdef size_t i
    for i in range(nw * 8):
        (<char *>words)[i] = src[i]
    pn_words_le(words, nw)  # little-endian bytes -> host order (a no-op on x86/arm64)


def parse_cpumask(text):
    """Parse a Linux cpumask (``"00000000,0000ffff"``: 32-bit hex words, most significant first)."""
    if isinstance(text, str) and not (<str>text).isascii():
        # never a mask; C would measure words in UTF-8 bytes, the twin in characters: one wording
        from . import _pure_bitmap
        return _pure_bitmap.parse_cpumask(text)
    return _parse(text, pn_cpumask_parse, "cpumask")


def format_cpumask(bits, min_words=1):
    """Linux cpumask text of a bitmap: 8-digit hex words, most significant first."""
    cdef bytes raw = _from_int(bits)
    cdef size_t nw = <size_t>PyBytes_GET_SIZE(raw) // 8
    cdef Py_ssize_t mw = min_words
    if mw < 0:
        mw = 0
    cdef size_t n32 = nw * 2 if nw * 2 > <size_t>mw else <size_t>mw
    cdef uint64_t *words = <uint64_t *>malloc(nw * 8 + 8)
    cdef char *buf = <char *>malloc(n32 * 9 + 1)
    cdef size_t ln
    try:
        if words == NULL or buf == NULL:
            raise MemoryError()
        memcpy_words(words, raw, nw)
        ln = pn_cpumask_format(words, nw, <size_t>mw, buf)
        return buf[:ln].decode("ascii")
    finally:
        free(words)
        free(buf)
