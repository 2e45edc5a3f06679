"""The kubelet's scalar syntaxes for eviction flags: float32 percentages, Go durations, map flags.

>>> parse_duration("1m30s")
90.0
>>> parse_flags("memory.available<1Gi,nodefs.available<10%", "<")
{'memory.available': '1Gi', 'nodefs.available': '10%'}
"""
from __future__ import annotations

import math
import re
import struct
from fractions import Fraction

from ...errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Optional


def float32(x: float) -> float:
    """``x`` rounded to the nearest IEEE single (Go ``float32(x)``); ``OverflowError`` when out of range."""
    return struct.unpack("f", struct.pack("f", x))[0]


_GO_FLOAT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.I)


def parse_percentage(text: str) -> float:
    """``"25.5%"`` -> float32 0.255 (``strconv.ParseFloat(s, 32)`` then ``/100`` in float32)."""
    body = text.rstrip("%")
    if not _GO_FLOAT.fullmatch(body):
        raise InputError(f'strconv.ParseFloat: parsing "{body}": invalid syntax')
    exact = float(body)
    try:
        value = float32(exact)
    except OverflowError:
        value = math.inf
    if math.isinf(value) and not math.isinf(exact):
        raise InputError(f'strconv.ParseFloat: parsing "{body}": value out of range')
    return float32(value / 100.0)


_DURATION_UNITS = {"ns": Fraction(1, 10 ** 9), "us": Fraction(1, 10 ** 6), "µs": Fraction(1, 10 ** 6),
                   "μs": Fraction(1, 10 ** 6), "ms": Fraction(1, 1000), "s": Fraction(1), "m": Fraction(60),
                   "h": Fraction(3600)}
_DURATION_PART = re.compile(r"(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)?")


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string (``"1m30s"``, ``"300ms"``, ``"0"``); ``InputError`` otherwise."""
    s = text
    sign = 1
    if s and s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise InputError(f'time: invalid duration "{text}"')
    total = Fraction(0)
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        number, unit = m.group(1), m.group(2)
        if not number or number == ".":
            raise InputError(f'time: invalid duration "{text}"')
        if unit is None:
            raise InputError(f'time: missing unit in duration "{text}"')
        total += Fraction(number) * _DURATION_UNITS[unit]
        pos = m.end()
    return float(sign * total)


def parse_flags(value: Optional[str], sep: str) -> Optional[Dict[str, str]]:
    """A ``k<v,k2<v2`` (``sep="<"``) or ``k=v`` flag value as a map; ``None`` when the flag is absent.

    Later keys overwrite earlier ones, as the kubelet's map flags do.
    """
    if value is None:
        return None
    out: Dict[str, str] = {}
    for item in value.split(","):
        if not item:
            continue
        if sep not in item:
            raise InputError(f"malformed pair {item!r}, expect string{sep}string")
        k, v = item.split(sep, 1)
        out[k.strip()] = v.strip()
    return out
