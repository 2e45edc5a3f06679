"""Pure-Python twin of the native ACPI table parsers (SLIT and SRAT).

Both parsers take the raw bytes of ``/sys/firmware/acpi/tables/<SIG>`` and
return plain values or raise ``ValueError`` naming what is wrong; the
native module ``pynuma._native_acpi`` returns identical values and rejects
identical inputs.

Layouts follow the ACPI specification (section 5.2.16 SRAT, 5.2.17 SLIT):
a 36-byte common header (signature, length, revision, checksum, ...).
"""
from __future__ import annotations

HEADER_LEN = 36
SLIT_MIN_LEN = HEADER_LEN + 8
SRAT_MIN_LEN = HEADER_LEN + 12  # + table revision (4) + reserved (8)
LOCAL_DISTANCE = 10
UNREACHABLE = 255

# SRAT subtable types (ACPI 6.5 table 5.xx) and the minimum length we read of each.
SRAT_CPU, SRAT_MEMORY, SRAT_X2APIC, SRAT_GICC, SRAT_GIC_ITS, SRAT_GENERIC, SRAT_GENERIC_PORT = range(7)
_SRAT_MIN = {SRAT_CPU: 16, SRAT_MEMORY: 40, SRAT_X2APIC: 24, SRAT_GICC: 18,
             SRAT_GIC_ITS: 12, SRAT_GENERIC: 32, SRAT_GENERIC_PORT: 32}


def _u32(data: bytes, off: int) -> int:
    return int.from_bytes(data[off:off + 4], "little")


def _u64(data: bytes, off: int) -> int:
    return int.from_bytes(data[off:off + 8], "little")


def _check_header(data: bytes, signature: bytes, minimum: int) -> None:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("ACPI table must be bytes")
    name = signature.decode()
    if len(data) < minimum:
        raise ValueError(f"{name}: truncated table ({len(data)} bytes, at least {minimum} needed)")
    if bytes(data[:4]) != signature:
        raise ValueError(f"{name}: bad signature {bytes(data[:4])!r}")
    length = _u32(data, 4)
    if length != len(data):
        raise ValueError(f"{name}: length field says {length} bytes, table has {len(data)}")
    if sum(data) & 0xFF:
        raise ValueError(f"{name}: bad checksum (bytes sum to {sum(data) & 0xFF:#04x}, not 0)")


def parse_slit(data: bytes) -> list:
    """Distance matrix ``[[int]]`` (rows = ACPI proximity domains) of a raw SLIT table."""
    _check_header(data, b"SLIT", SLIT_MIN_LEN)
    count = _u64(data, HEADER_LEN)
    need = SLIT_MIN_LEN + count * count
    if need != len(data):
        raise ValueError(f"SLIT: {count} localities need {need} bytes, table has {len(data)}")
    body = bytes(data[SLIT_MIN_LEN:])
    return [list(body[i * count:(i + 1) * count]) for i in range(count)]


def slit_is_valid(matrix) -> tuple:
    """``(True, "")`` when the kernel would use ``matrix``, else ``(False, reason)``.

    Linux ignores the whole SLIT when a diagonal entry is not 10 or an
    off-diagonal entry is 10 or less (drivers/acpi/numa/srat.c ``slit_valid``).
    """
    n = len(matrix)
    for i, row in enumerate(matrix):
        if len(row) != n:
            return False, f"row {i} has {len(row)} entries, expected {n}"
        for j, val in enumerate(row):
            if i == j:
                if val != LOCAL_DISTANCE:
                    return False, f"diagonal entry [{i}][{i}] is {val}, not {LOCAL_DISTANCE}"
            elif val <= LOCAL_DISTANCE:
                return False, f"entry [{i}][{j}] is {val}, not above {LOCAL_DISTANCE}"
    return True, ""


def parse_srat(data: bytes) -> dict:
    """Affinity entries of a raw SRAT table.

    Returns ``{"revision": int, "entries": [(type, domain, hwid, base, length, flags)]}``
    in table order, for subtable types 0-6 (unknown types are skipped):
    ``hwid`` is the APIC id / x2APIC id / ACPI processor UID / ITS id (0 for
    memory and generic initiators), ``base``/``length`` the memory range
    (0 for other types).  Proximity domains are widened the way Linux does
    for the table revision (8-bit for memory entries of revision 1 tables).
    """
    _check_header(data, b"SRAT", SRAT_MIN_LEN)
    revision = data[8]
    entries = []
    off = SRAT_MIN_LEN
    end = len(data)
    while off < end:
        if end - off < 2:
            raise ValueError(f"SRAT: truncated subtable at offset {off}")
        kind, sublen = data[off], data[off + 1]
        if sublen < 2 or off + sublen > end:
            raise ValueError(f"SRAT: subtable at offset {off} has bad length {sublen}")
        minimum = _SRAT_MIN.get(kind)
        if minimum is not None:
            if sublen < minimum:
                raise ValueError(f"SRAT: type {kind} subtable at offset {off} is {sublen} bytes, "
                                 f"expected {minimum}")
            entries.append(_srat_entry(data, off, kind, revision))
        off += sublen
    return {"revision": revision, "entries": entries}


def _srat_entry(d: bytes, off: int, kind: int, revision: int) -> tuple:
    if kind == SRAT_CPU:
        dom = d[off + 2]
        if revision >= 2:
            dom |= (d[off + 9] | d[off + 10] << 8 | d[off + 11] << 16) << 8
        return (kind, dom, d[off + 3], 0, 0, _u32(d, off + 4))
    if kind == SRAT_MEMORY:
        dom = _u32(d, off + 2)
        if revision <= 1:
            dom &= 0xFF
        return (kind, dom, 0, _u64(d, off + 8), _u64(d, off + 16), _u32(d, off + 28))
    if kind == SRAT_X2APIC:
        return (kind, _u32(d, off + 4), _u32(d, off + 8), 0, 0, _u32(d, off + 12))
    if kind == SRAT_GICC:
        return (kind, _u32(d, off + 2), _u32(d, off + 6), 0, 0, _u32(d, off + 10))
    if kind == SRAT_GIC_ITS:
        return (kind, _u32(d, off + 2), _u32(d, off + 8), 0, 0, 0)
    # generic initiator / generic port: domain at 4, flags at 24
    return (kind, _u32(d, off + 4), 0, 0, 0, _u32(d, off + 24))
