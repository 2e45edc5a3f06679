"""The kubelet's scalar syntaxes for eviction flags: float32 percentages, Go durations, map flags.

>>> parse_duration("1m30s")
90.0
>>> parse_flags("memory.available<1Gi,nodefs.available<10%", "<")
{'memory.available': '1Gi', 'nodefs.available': '10%'}
"""
from __future__ import annotations

from ...errors import InputError
from ..gotext import strconv_quote as _strconv_quote

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Optional


_INF = float("inf")


def float32(x: float) -> float:
    """``x`` rounded to the nearest IEEE single (Go ``float32(x)``), as ``struct``'s ``"f"`` rounds it:
    a finite value out of range is infinity, or ``OverflowError`` on a Python that refuses it."""
    single = memoryview(bytearray(4)).cast("f")  # struct's "f" rounding, without loading struct
    single[0] = x
    return single[0]


_GO_FLOAT = r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)"


def _plain_decimal(s: str) -> bool:
    """ASCII digits with at most one dot and at least one digit: what _GO_FLOAT matches without ``re``."""
    return s.isascii() and s.replace(".", "", 1).isdigit()


def _go_float(body: str) -> bool:
    if _plain_decimal(body):
        return True
    import re  # the rarer forms (signs, exponents, inf, nan); re costs a command ~8 ms

    return re.fullmatch(_GO_FLOAT, body, re.I) is not None


def parse_percentage(text: str) -> float:
    """``"25.5%"`` -> float32 0.255 (``strconv.ParseFloat(s, 32)`` then ``/100`` in float32)."""
    body = text.rstrip("%")
    if not _go_float(body):
        raise InputError(f"strconv.ParseFloat: parsing {_strconv_quote(body)}: invalid syntax")
    exact = float(body)
    try:
        value = float32(exact)
    except OverflowError:
        value = _INF
    if value in (_INF, -_INF) and exact not in (_INF, -_INF):
        raise InputError(f"strconv.ParseFloat: parsing {_strconv_quote(body)}: value out of range")
    return float32(value / 100.0)


# seconds per unit as (numerator, denominator)
_DURATION_UNITS = {"ns": (1, 10 ** 9), "us": (1, 10 ** 6), "µs": (1, 10 ** 6), "μs": (1, 10 ** 6),
                   "ms": (1, 1000), "s": (1, 1), "m": (60, 1), "h": (3600, 1)}
_DURATION_PART = r"(\d*)(\.\d*)?(ns|us|µs|μs|ms|s|m|h)?"
#: Go's time.Duration is an int64 count of nanoseconds: ParseDuration refuses anything longer
_MAX_DURATION_NS = (1 << 63) - 1
# Fraction digits past this many change nothing a float can hold (Go drops them once its int64 overflows)
_FRACTION_DIGITS = 30


def _go_quote(text: str) -> str:
    """Go's ``time.quote``: control and non-ASCII characters as ``\\xNN`` per UTF-8 byte, ``"`` and ``\\`` escaped."""
    out = []
    for ch in text:
        if ch < " " or ch >= "\x80":
            raw = ch.encode("utf-8", "surrogateescape" if "\udc80" <= ch <= "\udcff" else "surrogatepass")
            out.append("".join(f"\\x{b:02x}" for b in raw))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    return '"' + "".join(out) + '"'


def _quoted(text: str) -> str:
    """``"text"`` as Go quotes it in its error, cut when long (an error stays one short line)."""
    return _go_quote(text) if len(text) <= 48 else f'{_go_quote(text[:40])[:-1]}..." ({len(text)} characters)'


def _whole_seconds(s: str):
    """Seconds of ``s`` when it is only ASCII integers with s, m or h units (``5m``, ``1h30m``) and fits
    Go's int64 nanoseconds, else None: the usual flag values, read without ``re`` and ``fractions``;
    anything else (and every error) takes the full parser."""
    if not s.isascii():
        return None
    total, number = 0, ""
    for i, ch in enumerate(s):
        if ch.isdigit():
            number += ch
        elif ch in "smh" and number and s[i + 1:i + 2] != "s":  # "ms" is milliseconds
            if len(number) > 18:  # past int64 nanoseconds whatever the unit: the full parser's error
                return None
            total += int(number) * _DURATION_UNITS[ch][0]
            number = ""
        else:
            return None
    if number or total * 10 ** 9 > _MAX_DURATION_NS:
        return None
    return total


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string (``"1m30s"``, ``"300ms"``, ``"0"``); ``InputError`` otherwise.

    As ``time.ParseDuration``: the whole duration must fit an int64 of
    nanoseconds (about 292 years).  Time is linear in the text's length.
    """
    s = text
    sign = 1
    if s and s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise InputError(f"time: invalid duration {_quoted(text)}")
    whole = _whole_seconds(s)
    if whole is not None:
        return float(sign * whole)
    import re
    from fractions import Fraction

    part = re.compile(_DURATION_PART)
    total = Fraction(0)
    pos = 0
    while pos < len(s):
        m = part.match(s, pos)
        whole, frac, unit = m.group(1), m.group(2) or "", m.group(3)
        if not whole and len(frac) <= 1:
            raise InputError(f"time: invalid duration {_quoted(text)}")
        if unit is None:
            raise InputError(f"time: missing unit in duration {_quoted(text)}")
        whole = whole.lstrip("0")
        if len(whole) > 19:  # >= 10**19 of any unit overflows int64 nanoseconds
            raise InputError(f"time: invalid duration {_quoted(text)}")
        frac = frac[1:_FRACTION_DIGITS + 1]
        total += (int(whole or "0") + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)) * \
            Fraction(*_DURATION_UNITS[unit])
        if total * 10 ** 9 > _MAX_DURATION_NS:
            raise InputError(f"time: invalid duration {_quoted(text)}")
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
            shown = repr(item) if len(item) <= 60 else f"{item[:48]!r}... ({len(item)} characters)"
            raise InputError(f"malformed pair {shown}, expect string{sep}string")
        k, v = item.split(sep, 1)
        out[k.strip()] = v.strip()
    return out
