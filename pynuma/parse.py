"""Strict pure parsers for sysfs/procfs text: text in, value out, or ``ValueError``.

No I/O here: discovery reads a file through ``FsRoot`` and turns a
``ValueError`` into a :class:`pynuma.errors.ParseError` naming that file (or
into a warning, when the item is optional).  Sysfs files may end with stray
whitespace or NUL bytes, which every parser ignores.

>>> parse_int("3\\n"), parse_cache_size("32K"), parse_distance_row("10 21\\n")
(3, 32768, (10, 21))
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import Dict, List, Optional, Tuple

    from .cpuset import CPUSet

from .limits import MAX_CPUS, PID_MAX_LIMIT

_STRIP = " \t\r\n\x00"


def parse_int(text: str) -> int:
    """A decimal integer, possibly negative (``physical_package_id`` may be -1)."""
    s = text.strip(_STRIP)
    body = s[1:] if s[:1] in "-+" else s
    if not body or not body.isdigit() or not body.isascii():
        raise ValueError(f"expected an integer, got {_show(s)}")
    return int(s)


def ascii_uint(text: str, max_digits: int = 20) -> "Optional[int]":
    """``text`` as a non-negative integer when it is only ASCII digits, at most ``max_digits`` of them
    (a u64 has 20); ``None`` otherwise (``"²"`` and ``"٣"`` are digits to :meth:`str.isdigit`)."""
    if text.isascii() and text.isdigit() and len(text) <= max_digits:
        return int(text)
    return None


def parse_pid(text: str) -> int:
    """A process id as a user writes it: decimal digits, 1 to the largest Linux allows."""
    if not (text.isascii() and text.isdigit() and len(text) <= 7 and 0 < int(text) <= PID_MAX_LIMIT):
        raise ValueError(f"expected a process id from 1 to {PID_MAX_LIMIT}")
    return int(text)


def parse_cpulist(text: str) -> "CPUSet":
    """A Linux cpulist (``"0-3,8"``; empty text is the empty set)."""
    from .cpuset import CPUSet  # here: the name and count parsers serve commands that need no CPU sets

    return CPUSet.parse(text)


def parse_cpumask(text: str) -> "CPUSet":
    """A Linux cpumask (``"0000,00000fff"``: comma-separated 32-bit hex words, most significant first)."""
    from .cpuset import CPUSet

    return CPUSet.parse_mask(text)


def parse_online_flag(text: str) -> bool:
    """``cpuN/online``: ``1`` online, ``0`` offline."""
    s = text.strip(_STRIP)
    if s not in ("0", "1"):
        raise ValueError(f"expected 0 or 1, got {_show(s)}")
    return s == "1"


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_cache_size(text: str) -> int:
    """A cache ``size`` file (``"32K"``, ``"8192K"``, ``"1M"``) in bytes."""
    s = text.strip(_STRIP)
    unit = s[-1:].upper() if s[-1:].isalpha() else ""
    digits = s[:-1] if unit else s
    if unit not in _UNITS or not digits.isdigit() or not digits.isascii():
        raise ValueError(f"expected a size like 32K, got {_show(s)}")
    return int(digits) * _UNITS[unit]


_CACHE_TYPES = {"data": "Data", "instruction": "Instruction", "unified": "Unified"}


def parse_cache_type(text: str) -> str:
    """A cache ``type`` file: ``Data``, ``Instruction`` or ``Unified``."""
    s = text.strip(_STRIP)
    found = _CACHE_TYPES.get(s.lower())
    if found is None:
        raise ValueError(f"unknown cache type {_show(s)}")
    return found


def parse_distance_row(text: str) -> "Tuple[int, ...]":
    """A ``nodeN/distance`` row: space-separated distances to every node directory, by position."""
    parts = text.strip(_STRIP).split()
    if not parts:
        raise ValueError("empty distance row")
    row = []
    for p in parts:
        if not p.isdigit() or not p.isascii():
            raise ValueError(f"invalid distance {_show(p)}")
        row.append(int(p))
    return tuple(row)


def parse_meminfo(text: str) -> "Dict[str, int]":
    """``/proc/meminfo`` or ``nodeN/meminfo`` as ``{key: value}``, ``kB`` values turned into bytes.

    Node files prefix each line with ``Node N``; that prefix is dropped.
    Counts without a unit (``HugePages_Total``) stay counts.
    """
    out: Dict[str, int] = {}
    for line in text.split("\n"):
        line = line.strip(_STRIP)
        if not line:
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"meminfo line without ':': {_show(line)}")
        key = key.split()
        if len(key) == 3 and key[0] == "Node":
            key = key[2:]
        if len(key) != 1:
            raise ValueError(f"bad meminfo key in {_show(line)}")
        fields = value.split()
        if not fields or ascii_uint(fields[0]) is None or len(fields) > 2 or (len(fields) == 2 and fields[1] != "kB"):
            raise ValueError(f"bad meminfo value in {_show(line)}")
        out[key[0]] = int(fields[0]) * (1024 if len(fields) == 2 else 1)
    if "MemTotal" not in out:
        raise ValueError("no MemTotal line")
    return out


def _meminfo_value(text: str, key: str) -> "Optional[int]":
    at = text.find(key)
    while at > 0 and text[at - 1] not in " \n":
        at = text.find(key, at + 1)  # "MemTotal:" inside a longer key
    if at < 0:
        return None
    end = text.find("\n", at)
    fields = text[at + len(key):end if end >= 0 else len(text)].split()
    if len(fields) != 2 or fields[1] != "kB" or not fields[0].isdigit() or not fields[0].isascii():
        raise ValueError(f"bad meminfo value in {_show(text[at:end if end >= 0 else len(text)])}")
    return int(fields[0]) * 1024


def parse_memory_totals(text: str) -> "Tuple[int, int]":
    """``(MemTotal, MemFree)`` in bytes from a ``meminfo`` file, reading only those two lines.

    Discovery's fast path (node meminfo files have ~30 lines); a missing
    ``MemTotal`` is a ``ValueError``, a missing ``MemFree`` counts as 0.
    """
    total = _meminfo_value(text, "MemTotal:")
    if total is None:
        raise ValueError("no MemTotal line")
    return total, _meminfo_value(text, "MemFree:") or 0


def parse_prefixed_id(name: str, prefix: str, below: int = MAX_CPUS) -> "Optional[int]":
    """``"cpu12"`` with prefix ``"cpu"`` -> 12; ``None`` for any other name (``cpufreq``, ``cpu01``).

    Ids from ``below`` up are no id Linux can have (``node2147483648``): ``None``
    too, so a listing never sizes anything beyond :mod:`pynuma.limits`.
    """
    if not name.startswith(prefix):
        return None
    digits = name[len(prefix):]
    if not digits.isdigit() or not digits.isascii() or (len(digits) > 1 and digits[0] == "0") or len(digits) > 9:
        return None
    value = int(digits)
    return value if value < below else None


def parse_hugepage_dirname(name: str) -> "Optional[int]":
    """``"hugepages-2048kB"`` -> 2048; ``None`` for any other name or a size no Linux page has."""
    from .limits import MAX_HUGEPAGE_KB

    if not (name.startswith("hugepages-") and name.endswith("kB")):
        return None
    digits = name[len("hugepages-"):-2].lstrip("0")
    if not (digits.isdigit() and digits.isascii()) or len(digits) > len(str(MAX_HUGEPAGE_KB)):
        return None
    kb = int(digits)
    return kb if kb <= MAX_HUGEPAGE_KB else None


def _unescape_mount(field: str) -> str:
    # /proc/mounts escapes space, tab, newline and backslash as \ooo octal
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        ch = field[i]
        octal = field[i + 1:i + 4]
        if ch == "\\" and len(octal) == 3 and all(c in "01234567" for c in octal):
            out.append(chr(int(octal, 8)))
            i += 4
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _canonical_mount_point(path: str) -> bool:
    """Whether ``path`` is what the kernel writes for a mount point: absolute, no NUL, no ``.``/``..`` names."""
    return path.startswith("/") and "\x00" not in path and not any(
        name in (".", "..") for name in path.split("/"))


def parse_mounts(text: str) -> "List[Tuple[str, str, str, Tuple[str, ...]]]":
    """``/proc/mounts`` as ``(device, mount point, fs type, options)``.

    Short lines are skipped, and so are mount points no kernel writes
    (relative, with a NUL byte, or with ``.``/``..`` names).
    """
    out = []
    for line in text.split("\n"):
        fields = line.strip(_STRIP).split()
        if len(fields) < 4:
            continue
        point = _unescape_mount(fields[1])
        if not _canonical_mount_point(point):
            continue
        out.append((_unescape_mount(fields[0]), point, fields[2], tuple(fields[3].split(","))))
    return out


def parse_proc_cgroup(text: str) -> "List[Tuple[str, Tuple[str, ...], str]]":
    """``/proc/PID/cgroup`` as ``(hierarchy id, controllers, path)``; ``0::/x`` is the v2 line."""
    out = []
    for line in text.split("\n"):
        line = line.strip(_STRIP)
        if not line:
            continue
        parts = line.split(":", 2)
        if len(parts) != 3:
            raise ValueError(f"bad cgroup line {_show(line)}")
        out.append((parts[0], tuple(c for c in parts[1].split(",") if c), parts[2]))
    return out


def parse_cgroup_path(text: str) -> str:
    """``/proc/self/cpuset``: one absolute cgroup path."""
    s = text.strip(_STRIP)
    if not s.startswith("/") or "\n" in s:
        raise ValueError(f"expected an absolute cgroup path, got {_show(s)}")
    return s


def shown(text) -> str:
    """``repr(text)``, shortened when long: an error names the value in one readable line."""
    if not isinstance(text, str):
        text_repr = repr(text)
        return text_repr if len(text_repr) <= 48 else text_repr[:40] + "..."
    if len(text) <= 48:
        return repr(text)
    return f"{text[:40]!r}... ({len(text)} characters)"


def _show(s: str) -> str:
    return repr(s if len(s) <= 40 else s[:37] + "...")


class _Memo(dict):
    """Results by input; a miss computes (and keeps) one, the cache emptied at ``limit`` entries."""

    __slots__ = ("parser", "limit")

    def __missing__(self, text: str):
        if len(self) >= self.limit:
            self.clear()
        value = self[text] = self.parser(text)
        return value


def memoized(parser, limit: int = 4096):
    """``parser`` with its results kept by input text (sysfs values repeat a lot: core ids, sizes),
    or by any hashable input (discovery shares equal CPU sets by their bitmap this way).

    Failures are not kept: each bad text raises again.  The cache is
    emptied when it reaches ``limit`` entries, so memory stays bounded.
    A hit is one dict lookup, with no Python frame.
    """
    memo = _Memo()
    memo.parser, memo.limit = parser, limit
    return memo.__getitem__
