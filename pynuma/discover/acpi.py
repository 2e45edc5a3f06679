"""NUMA distances from the firmware's ACPI SLIT, mapped to Linux node ids.

SLIT rows are ACPI *proximity domains*, not Linux node ids.  Linux gives
node ids in the order proximity domains first appear in SRAT: one pass over
the enabled CPU entries (local APIC, x2APIC, GICC, generic initiator), then
one over the enabled memory entries (``acpi_numa_init`` in
drivers/acpi/numa/srat.c; each ``acpi_map_pxm_to_node`` takes the first
unused id).  Without a readable SRAT the mapping is *assumed* (domain i is
node i) and the result says so.

>>> from pynuma.fsroot import FsRoot
>>> res = slit_distances(FsRoot("/"), [0, 1])      # doctest: +SKIP
>>> res.matrix, res.mapping, res.valid               # doctest: +SKIP
(((10, 21), (21, 10)), 'srat', True)
"""
from __future__ import annotations

import errno
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from .. import _impl

_acpi = _impl.select("acpi")

SLIT_PATH = "/sys/firmware/acpi/tables/SLIT"
SRAT_PATH = "/sys/firmware/acpi/tables/SRAT"
UNREACHABLE = 255

# SRAT entry types that give a proximity domain a node id, per pass (see module doc).
_CPU_PASS = (0, 2, 3, 5)
_MEMORY_PASS = (1,)
_ENABLED = 1  # bit 0 of the flags of every affinity subtable

parse_slit = _acpi.parse_slit
parse_srat = _acpi.parse_srat
slit_is_valid = _acpi.slit_is_valid


@dataclass(frozen=True)
class SlitResult:
    """What the SLIT says about the distances between ``nodes``.

    ``matrix[i][j]`` is the distance from ``nodes[i]`` to ``nodes[j]`` (255
    means unreachable), or ``None`` when the table is unusable (invalid,
    unreadable, or its domains cannot be matched to ``nodes``; ``reason``
    says why).  ``mapping`` is ``"srat"`` when domains were mapped to node
    ids through SRAT, ``"assumed"`` when SRAT was missing or unusable.
    ``domains`` maps each node id to the SLIT row used for it.
    """

    nodes: Tuple[int, ...]
    matrix: Optional[Tuple[Tuple[int, ...], ...]]
    mapping: str
    valid: bool
    reason: str = ""
    domains: Dict[int, int] = field(default_factory=dict)
    warnings: Tuple[str, ...] = ()
    raw: Optional[Tuple[Tuple[int, ...], ...]] = None

    @property
    def unreachable(self) -> List[Tuple[int, int]]:
        """``(from_node, to_node)`` pairs the firmware marks unreachable (255)."""
        if self.matrix is None:
            return []
        return [(a, b) for i, a in enumerate(self.nodes) for j, b in enumerate(self.nodes)
                if self.matrix[i][j] == UNREACHABLE]


def srat_node_order(entries: Sequence[tuple]) -> List[int]:
    """Proximity domains in Linux node-id order (index = node id) from ``parse_srat`` entries."""
    order: List[int] = []
    seen = set()
    for kinds in (_CPU_PASS, _MEMORY_PASS):
        for kind, domain, _hwid, _base, _length, flags in entries:
            if kind in kinds and flags & _ENABLED and domain not in seen:
                seen.add(domain)
                order.append(domain)
    return order


def _read(fs, path: str):
    """(bytes or None, warning) -- None without warning when the table is absent."""
    try:
        return fs.read_bytes(path), ""
    except OSError as err:
        if err.errno in (errno.ENOENT, errno.ENOTDIR):
            return None, ""
        return None, f"{fs.host_path(path)}: {err.strerror or 'unreadable'}"


def _srat_domains(fs, warnings: List[str]) -> Optional[List[int]]:
    data, warn = _read(fs, SRAT_PATH)
    if warn:
        warnings.append(warn + "; proximity domains assumed to be node ids")
    if data is None:
        return None
    try:
        entries = parse_srat(data)["entries"]
    except ValueError as err:
        warnings.append(f"{fs.host_path(SRAT_PATH)}: {err}; proximity domains assumed to be node ids")
        return None
    order = srat_node_order(entries)
    if not order:
        warnings.append(f"{fs.host_path(SRAT_PATH)}: no enabled affinity entries; "
                        "proximity domains assumed to be node ids")
        return None
    return order


def _assumed_domains(nodes: Sequence[int], count: int, warnings: List[str]) -> Optional[Dict[int, int]]:
    if all(n < count for n in nodes):
        return {n: n for n in nodes}
    if len(nodes) == count:
        warnings.append(f"SLIT has {count} localities and node ids {list(nodes)} are sparse; "
                        "rows assumed to follow ascending node ids")
        return {n: i for i, n in enumerate(sorted(nodes))}
    return None


def slit_distances(fs, node_ids: Sequence[int]) -> Optional[SlitResult]:
    """Distances between ``node_ids`` from the SLIT under ``fs`` (a :class:`~pynuma.fsroot.FsRoot`).

    ``None`` when the root has no SLIT.  Otherwise a :class:`SlitResult`;
    never raises for bad firmware data (that is reported in ``reason`` and
    ``warnings``, as discovery is tolerant).
    """
    nodes = tuple(int(n) for n in node_ids)
    warnings: List[str] = []
    data, warn = _read(fs, SLIT_PATH)
    if data is None:
        if not warn:
            return None
        return SlitResult(nodes, None, "assumed", False, warn, warnings=(warn,))
    where = fs.host_path(SLIT_PATH)
    try:
        full = parse_slit(data)
    except ValueError as err:
        reason = f"{where}: {err}"
        return SlitResult(nodes, None, "assumed", False, reason, warnings=(reason + "; not used",))
    raw = tuple(tuple(r) for r in full)
    ok, why = slit_is_valid(full)
    order = _srat_domains(fs, warnings)
    mapping = "srat" if order is not None else "assumed"
    if not ok:
        reason = f"{where}: {why} (the kernel ignores such a table)"
        return SlitResult(nodes, None, mapping, False, reason, warnings=tuple(warnings) + (reason,), raw=raw)
    count = len(full)
    if order is not None:
        missing = [n for n in nodes if n >= len(order)]
        domains = None if missing else {n: order[n] for n in nodes}
        if missing:
            warnings.append(f"{fs.host_path(SRAT_PATH)}: no proximity domain for node(s) {missing}")
    else:
        domains = _assumed_domains(nodes, count, warnings)
    if domains is not None:
        beyond = sorted(d for d in domains.values() if d >= count)
        if beyond:
            warnings.append(f"{where}: {count} localities, but domain(s) {beyond} are used")
            domains = None
    if domains is None:
        reason = f"{where}: cannot match {count} localities to nodes {list(nodes)}"
        warnings.append(reason + "; not used")
        return SlitResult(nodes, None, mapping, True, reason, warnings=tuple(warnings), raw=raw)
    matrix = tuple(tuple(full[domains[a]][domains[b]] for b in nodes) for a in nodes)
    return SlitResult(nodes, matrix, mapping, True, "", dict(domains), tuple(warnings), raw)


# -- table builders (fixtures, tests and dumps of synthetic machines) --------
def _table(signature: bytes, body: bytes, revision: int) -> bytes:
    length = 36 + len(body)
    head = bytearray(signature + length.to_bytes(4, "little") + bytes([revision, 0])
                     + b"PYNUMA" + b"PYNUMATB" + (1).to_bytes(4, "little") + b"PNUM"
                     + (1).to_bytes(4, "little"))
    table = head + body
    table[9] = (-sum(table)) & 0xFF
    return bytes(table)


def build_slit(matrix: Sequence[Sequence[int]]) -> bytes:
    """Raw SLIT bytes (valid header and checksum) for a square distance matrix."""
    n = len(matrix)
    body = n.to_bytes(8, "little") + bytes(v for row in matrix for v in row)
    return _table(b"SLIT", body, 1)


def build_srat(cpus: Sequence[Tuple[int, int]] = (), memory: Sequence[Tuple[int, int, int]] = (),
               disabled_domains: Sequence[int] = (), revision: int = 3) -> bytes:
    """Raw SRAT bytes: x2APIC entries ``(domain, apic_id)`` then memory ``(domain, base, length)``.

    Entries of ``disabled_domains`` get a clear enabled flag.
    """
    body = bytearray((1).to_bytes(4, "little") + bytes(8))
    for dom, apic in cpus:
        flags = 0 if dom in disabled_domains else 1
        body += bytes([2, 24, 0, 0]) + dom.to_bytes(4, "little") + apic.to_bytes(4, "little") \
            + flags.to_bytes(4, "little") + bytes(8)
    for dom, base, length in memory:
        flags = 0 if dom in disabled_domains else 1
        body += bytes([1, 40]) + dom.to_bytes(4, "little") + bytes(2) + base.to_bytes(8, "little") \
            + length.to_bytes(8, "little") + bytes(4) + flags.to_bytes(4, "little") + bytes(8)
    return _table(b"SRAT", bytes(body), revision)
