"""What the walkers read from each cgroup: value slots and file specs (shared by v1 and v2).

A walker fills, per cgroup, a fixed row of integer *slots* from a list of
*file specs*; the v1 and v2 modules differ only in which files feed which
slot.  ``None`` in a slot = the file is absent (controller not enabled);
a set bit in the row's ``bad`` mask = the file was unreadable or held garbage.
"""
from __future__ import annotations

from .._dataclass import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import List, Protocol, Sequence, Tuple
else:
    Protocol = object  # CgroupVersion below documents a protocol; nothing checks it at run time

# Slot indices of one cgroup's row.
USAGE, LIMIT, ANON, FILE, INACTIVE_FILE, PIDS_CURRENT, PIDS_MAX, CPU_NS = range(8)
HUGETLB0 = 8                      # first hugetlb slot; one per page size after it
MAX_HUGE_SIZES = 8
NSLOTS = HUGETLB0 + MAX_HUGE_SIZES

# "max" in a limit file: no limit.  Kept as the largest int64, like the kernel's own.
UNLIMITED = (1 << 63) - 1

INT, KEYED = 0, 1


class FileSpec(NamedTuple):
    """One file to read in each cgroup.

    ``base``: index of the hierarchy (0 = primary, where pods are listed).
    ``kind``: INT (one number or ``max`` into ``slot``) or KEYED (``key value``
    lines; ``keys`` = ((key, slot, multiplier), ...)).
    """

    base: int
    name: str
    kind: int
    slot: int = -1
    keys: Tuple[Tuple[str, int, int], ...] = ()


def parse_int(text: str) -> int:
    """A cgroup value file: a non-negative integer, or ``max`` (= UNLIMITED)."""
    s = text.strip()
    if s == "max":
        return UNLIMITED
    if not s.isdigit() or not s.isascii():
        raise ValueError(f"not a number: {s[:40]!r}")
    return _int64(int(s))


def _int64(v: int) -> int:
    # The native walker keeps int64 slots: both twins call anything larger garbage.
    if v > UNLIMITED:
        raise ValueError("number out of range")
    return v


def parse_keyed(text: str, keys: Sequence[Tuple[str, int, int]]) -> dict:
    """``{slot: value * multiplier}`` for the wanted keys of a ``key value`` file; garbage -> ValueError."""
    wanted = {k: (slot, mult) for k, slot, mult in keys}
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2:
            if not parts:
                continue
            raise ValueError(f"malformed line {line[:60]!r}")
        hit = wanted.get(parts[0])
        if hit is not None:
            if not parts[1].isdigit() or not parts[1].isascii():
                raise ValueError(f"{parts[0]}: not a number: {parts[1][:40]!r}")
            out[hit[0]] = _int64(_int64(int(parts[1])) * hit[1])
    return out


def working_set(usage, inactive_file):
    """usage - inactive_file floored at 0 (cAdvisor); usage alone when inactive_file is unknown."""
    if usage is None:
        return None
    if inactive_file is None:
        return usage
    return usage - inactive_file if inactive_file < usage else 0


def huge_size_name(kb: int) -> str:
    """hugetlb file-name form of a page size in kB: 2048 -> ``2MB``, 1048576 -> ``1GB``."""
    for unit, scale in (("GB", 1 << 20), ("MB", 1 << 10)):
        if kb >= scale and kb % scale == 0:
            return f"{kb // scale}{unit}"
    return f"{kb}KB"


def huge_sizes_from_listing(names: List[str]) -> List[str]:
    """hugetlb size names from ``/sys/kernel/mm/hugepages`` entries (``hugepages-2048kB``), smallest first."""
    from ..parse import parse_hugepage_dirname

    kbs = [kb for kb in map(parse_hugepage_dirname, names) if kb is not None]
    return [huge_size_name(k) for k in sorted(kbs)][:MAX_HUGE_SIZES]


class CgroupVersion(Protocol):
    """What :mod:`pynuma.cgroups.v1` and :mod:`pynuma.cgroups.v2` both provide."""

    VERSION: int

    def controllers(self) -> Tuple[str, ...]:
        """Hierarchies to open, primary (where pods are listed) first."""

    def file_specs(self, huge_sizes: List[str]) -> List[FileSpec]:
        """Files read in each cgroup and the slots they fill."""


# Record kinds a walker yields, in walk order.
BASE, TIER, POD, CONTAINER = 0, 1, 2, 3
