# distutils: sources = native/pn_acpi.c
# distutils: include_dirs = native
# cython: language_level=3
"""Native ACPI SLIT/SRAT parsers (twin of ``pynuma._pure_acpi``)."""
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE


cdef extern from "pn.h" nogil:
    enum:
        PN_ACPI_OK, PN_ACPI_TRUNCATED, PN_ACPI_SIGNATURE, PN_ACPI_LENGTH, PN_ACPI_CHECKSUM
        PN_ACPI_COUNT, PN_ACPI_SUBTABLE, PN_ACPI_SUBTABLE_SHORT
    ctypedef struct pn_srat_entry:
        uint32_t type, domain, hwid, flags
        uint64_t base, length
    int pn_slit_parse(const uint8_t *data, size_t len, uint64_t *count, size_t *entries_off)
    int pn_slit_valid(const uint8_t *entries, size_t n, size_t *bad_i, size_t *bad_j)
    int pn_srat_parse(const uint8_t *data, size_t len, pn_srat_entry *out, size_t cap,
                      size_t *count, size_t *bad_off, unsigned *revision)

LOCAL_DISTANCE = 10
_MIN = {"SLIT": 44, "SRAT": 48}
_SRAT_MIN = (16, 40, 24, 18, 12, 32, 32)


cdef object _header_error(int rc, bytes d, str name):
    cdef size_t n = len(d)
    if rc == PN_ACPI_TRUNCATED:
        return ValueError(f"{name}: truncated table ({n} bytes, at least {_MIN[name]} needed)")
    if rc == PN_ACPI_SIGNATURE:
        return ValueError(f"{name}: bad signature {bytes(d[:4])!r}")
    if rc == PN_ACPI_LENGTH:
        length = int.from_bytes(d[4:8], "little")  # unsigned, as the pure twin reads it
        return ValueError(f"{name}: length field says {length} bytes, table has {n}")
    if rc == PN_ACPI_CHECKSUM:
        return ValueError(f"{name}: bad checksum (bytes sum to {sum(d) & 0xFF:#04x}, not 0)")
    return None


cdef bytes _view(data):
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("ACPI table must be bytes")
    return bytes(data)


cdef inline const uint8_t *_ptr(bytes b):
    return <const uint8_t *>PyBytes_AS_STRING(b)


def parse_slit(data) -> list:
    """Distance matrix ``[[int]]`` (rows = ACPI proximity domains) of a raw SLIT table."""
    cdef bytes d = _view(data)
    cdef uint64_t count = 0
    cdef size_t off = 0, n = len(d), i
    cdef int rc = pn_slit_parse(_ptr(d), n, &count, &off) if n >= 44 else PN_ACPI_TRUNCATED
    if rc == PN_ACPI_COUNT:
        need = 44 + <object>count * <object>count  # Python ints: the product overflows 64 bits
        raise ValueError(f"SLIT: {count} localities need {need} bytes, table has {n}")
    if rc != PN_ACPI_OK:
        raise _header_error(rc, d, "SLIT")
    body = d[off:]
    return [list(body[i * count:(i + 1) * count]) for i in range(count)]


def slit_is_valid(matrix) -> tuple:
    """``(True, "")`` when the kernel would use ``matrix``, else ``(False, reason)``."""
    cdef size_t n = len(matrix), i, j, bi = 0, bj = 0
    cdef uint8_t *flat
    for i, row in enumerate(matrix):
        if len(row) != n:
            return False, f"row {i} has {len(row)} entries, expected {n}"
    flat = <uint8_t *>malloc(n * n + 1)
    if flat == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            row = matrix[i]
            for j in range(n):
                v = row[j]
                # values outside a byte cannot come from a SLIT; keep the verdict of the
                # plain rule (diagonal == 10, others > 10) when squeezing them into one
                flat[i * n + j] = v if 0 <= v <= 255 else (255 if v > 255 and i != j else 0)
        if pn_slit_valid(flat, n, &bi, &bj):
            return True, ""
        v = matrix[bi][bj]
        if bi == bj:
            return False, f"diagonal entry [{bi}][{bi}] is {v}, not {LOCAL_DISTANCE}"
        return False, f"entry [{bi}][{bj}] is {v}, not above {LOCAL_DISTANCE}"
    finally:
        free(flat)


def parse_srat(data) -> dict:
    """Affinity entries of a raw SRAT table (see ``pynuma._pure_acpi.parse_srat``)."""
    cdef bytes d = _view(data)
    cdef size_t n = len(d), count = 0, bad = 0, cap = 0, i
    cdef unsigned rev = 0
    cdef pn_srat_entry *out = NULL
    cdef int rc
    if n < 48:
        raise _header_error(PN_ACPI_TRUNCATED, d, "SRAT")
    try:
        while True:
            rc = pn_srat_parse(_ptr(d), n, out, cap, &count, &bad, &rev)
            if rc != PN_ACPI_OK or count <= cap:
                break
            cap = count
            free(out)
            out = <pn_srat_entry *>malloc(cap * sizeof(pn_srat_entry))
            if out == NULL:
                raise MemoryError()
        if rc == PN_ACPI_SUBTABLE:
            if n - bad < 2:
                raise ValueError(f"SRAT: truncated subtable at offset {bad}")
            raise ValueError(f"SRAT: subtable at offset {bad} has bad length {d[bad + 1]}")
        if rc == PN_ACPI_SUBTABLE_SHORT:
            raise ValueError(f"SRAT: type {d[bad]} subtable at offset {bad} is {d[bad + 1]} bytes, "
                             f"expected {_SRAT_MIN[d[bad]]}")
        if rc != PN_ACPI_OK:
            raise _header_error(rc, d, "SRAT")
        entries = [(out[i].type, out[i].domain, out[i].hwid, out[i].base, out[i].length, out[i].flags)
                   for i in range(count)]
        return {"revision": rev, "entries": entries}
    finally:
        free(out)
