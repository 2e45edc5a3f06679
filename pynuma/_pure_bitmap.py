"""Pure-Python twin of the native bitmap core: cpulist/cpumask text <-> int bitmap.

A bitmap is a non-negative Python ``int`` whose bit ``i`` means CPU (or
node) ``i`` is in the set; there is no size cap.  Parsers raise
``ValueError`` with a short reason; callers name the file.
"""
from __future__ import annotations

from .limits import MAX_CPUS

_STRIP = " \t\r\n\x00"
# Largest id a cpulist may name: no CPU (nor node) id can be larger on Linux, and it bounds
# the memory a hostile "0-999999999" could make us allocate.  Same as PN_MAX_ID in native/pn.h.
MAX_ID = MAX_CPUS - 1


def _short(item: str) -> str:
    """An item as error messages show it: long ones cut (a message stays one short line)."""
    return item if len(item) <= 40 else item[:32] + "..."


def _number(text: str, item: str) -> int:
    if not text or not text.isdigit() or not text.isascii():
        raise ValueError(f"invalid cpulist item {_short(item)!r}")
    if len(text.lstrip("0")) > 7 or int(text) > MAX_ID:
        raise ValueError(f"cpulist item {_short(item)!r}: id above {MAX_ID}")
    return int(text)


def parse_cpulist(text: str) -> int:
    """Parse a Linux cpulist (``"0-3,8,10-15:2/4"``) into a bitmap."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, not {type(text).__name__}")
    text = text.strip(_STRIP)
    bits = 0
    if not text:
        return 0
    for item in text.split(","):
        item = item.strip(" \t")
        if not item:
            raise ValueError("empty item in cpulist")
        rng, sep, stride = item.partition(":")
        lo_s, dash, hi_s = rng.partition("-")
        used_s, slash, group_s = stride.partition("/")
        # the item's syntax before any number's size, as the native parser reports them
        for part in (lo_s, hi_s if dash else "0", used_s if sep else "0", group_s if slash else "0"):
            if not part or not part.isdigit() or not part.isascii():
                raise ValueError(f"invalid cpulist item {_short(item)!r}")
        # then every number's size, then the range, then the stride (the native order)
        lo = _number(lo_s, item)
        hi = _number(hi_s, item) if dash else lo
        used = _number(used_s, item) if sep else 0
        group = _number(group_s, item) if slash else 0
        if hi < lo:
            raise ValueError(f"invalid cpulist range {_short(item)!r}: end before start")
        if sep:
            if not slash or used == 0 or group == 0 or used > group:
                raise ValueError(f"invalid cpulist stride {_short(item)!r}")
            # one group's pattern, doubled until it spans the range: log(n) shifts, not n/group
            pattern, width = (1 << used) - 1, group
            while width < hi - lo + 1:
                pattern |= pattern << width
                width *= 2
            bits |= (pattern & ((1 << (hi - lo + 1)) - 1)) << lo
        else:
            bits |= ((1 << (hi - lo + 1)) - 1) << lo
    return bits


def format_cpulist(bits: int) -> str:
    """Canonical cpulist of a bitmap: ascending, runs of 2+ as ``a-b``."""
    if not isinstance(bits, int):
        raise TypeError(f"bitmap must be an int, not {type(bits).__name__}")
    if bits < 0:
        raise ValueError("negative bitmap")
    parts = []
    pos = 0
    while bits:
        low = (bits & -bits).bit_length() - 1
        bits >>= low
        pos += low
        run = (~bits & (bits + 1)).bit_length() - 1  # number of trailing ones
        parts.append(str(pos) if run == 1 else f"{pos}-{pos + run - 1}")
        bits >>= run
        pos += run
    return ",".join(parts)


def parse_cpumask(text: str) -> int:
    """Parse a Linux cpumask (``"00000000,0000ffff"``: 32-bit hex words, most significant first)."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, not {type(text).__name__}")
    text = text.strip(_STRIP)
    if not text:
        raise ValueError("empty cpumask")
    digits = []
    # words checked least significant (last) first, as the native parser reports the first bad one
    for word in reversed(text.split(",")):
        word = word.strip(" \t")
        if word[:2] in ("0x", "0X"):
            word = word[2:]
        if len(word) > 8:
            raise ValueError(f"cpumask word {_short(word)!r} longer than 32 bits")
        if word.lstrip("0123456789abcdefABCDEF"):
            raise ValueError(f"invalid cpumask word {_short(word)!r}")
        digits.append(word.rjust(8, "0"))
    # one conversion of the whole hex text: linear, where shifting word by word is quadratic
    bits = int("".join(reversed(digits)), 16)
    if bits >> (MAX_ID + 1):
        raise ValueError(f"cpumask {_short(text)!r}: bit above {MAX_ID}")
    return bits


def format_cpumask(bits: int, min_words: int = 1) -> str:
    """Linux cpumask text of a bitmap: 8-digit hex words, most significant first."""
    if not isinstance(bits, int):
        raise TypeError(f"bitmap must be an int, not {type(bits).__name__}")
    if bits < 0:
        raise ValueError("negative bitmap")
    words = []
    while bits or len(words) < min_words:
        words.append(f"{bits & 0xFFFFFFFF:08x}")
        bits >>= 32
    return ",".join(reversed(words))
