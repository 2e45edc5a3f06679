"""The kubelet's cpuset text parser (``k8s.io/utils/cpuset.Parse``), for restoring checkpoints.

:meth:`pynuma.cpuset.CPUSet.parse` reads Linux cpulists leniently (spaces,
strides) with its own messages.  A checkpoint restore must accept and refuse
exactly what the kubelet does, with its error texts:

* the text is split on ``,``; each part on the first ``-`` (so ``"1-2-3"`` is
  the range 1 .. ``"2-3"``); each bound goes through Go's ``strconv.Atoi``
  (optional ``+``/``-`` sign, ASCII digits only, 64-bit): ``strconv.Atoi:
  parsing "1.3": invalid syntax``, ``... value out of range``;
* an empty part (``"1,,2"``, a trailing ``,``) is ``strconv.Atoi: parsing "":
  invalid syntax``; only the whole text being ``""`` means the empty set;
* a descending range is ``invalid range "3-1" (3 > 1)``.

One deliberate difference: the kubelet adds every id of a range to a map, so
``"0-999999999"`` costs it gigabytes; here an id above
:data:`~pynuma.limits.MAX_CPUS` - 1 (no Linux machine has more CPUs) is
refused with an error naming it, once the whole text has parsed as the
kubelet parses it (so every text the kubelet refuses gets the kubelet's text).

>>> str(parse("0-2,+5"))
'0-2,5'
>>> parse("1.3")
Traceback (most recent call last):
...
ValueError: strconv.Atoi: parsing "1.3": invalid syntax
"""
from __future__ import annotations

from ..cpuset import CPUSet
from ..limits import MAX_CPUS

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import List, Tuple

MAX_ID = MAX_CPUS - 1
_MAX_UINT64 = (1 << 64) - 1
_INT64_CUT = 1 << 63
#: ``%q`` of a longer text is cut (the message stays one readable line)
QUOTE_LIMIT = 128


def go_quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """Go's ``strconv.Quote`` (what ``%q`` prints); when the quoted text would pass ``limit`` characters
    (escapes count: a raw byte is 4) it is cut there, with the original's length."""
    from ..policy.gotext import strconv_quote  # exact for up to 48 characters: quote in pieces

    if len(text) <= limit:
        body = "".join(strconv_quote(text[i:i + 48])[1:-1] for i in range(0, len(text), 48))
        if len(body) <= limit:
            return f'"{body}"'
    body, room = "", limit - 8
    for ch in text:  # one character at a time: a cut never splits an escape
        piece = strconv_quote(ch)[1:-1]
        if len(body) + len(piece) > room:
            break
        body += piece
    return f'"{body}..." ({len(text)} characters)'


def _num_error(num: str, reason: str) -> ValueError:
    return ValueError(f"strconv.Atoi: parsing {go_quote(num)}: {reason}")


def atoi(s: str) -> int:
    """Go's ``strconv.Atoi`` (64-bit ``int``); ``ValueError`` with Go's text."""
    digits, neg = s, False
    if s[:1] in ("+", "-"):
        digits, neg = s[1:], s[0] == "-"
    if not digits:
        raise _num_error(s, "invalid syntax")
    n = 0
    for ch in digits:  # as ParseUint: the first bad character or the first overflow decides
        if not "0" <= ch <= "9":
            raise _num_error(s, "invalid syntax")
        n = n * 10 + (ord(ch) - 48)
        if n > _MAX_UINT64:
            raise _num_error(s, "value out of range")
    if n >= _INT64_CUT + (1 if neg else 0):
        raise _num_error(s, "value out of range")
    return -n if neg else n


def parse(text: str) -> CPUSet:
    """``cpuset.Parse(text)``: a :class:`CPUSet`, or ``ValueError`` with the kubelet's text."""
    if text == "":
        return CPUSet()
    ranges: List[Tuple[int, int]] = []
    for part in text.split(","):
        bounds = part.split("-", 1)
        if len(bounds) == 1:
            cpu = atoi(bounds[0])
            ranges.append((cpu, cpu))
            continue
        start, end = atoi(bounds[0]), atoi(bounds[1])
        if start > end:
            raise ValueError(f"invalid range {go_quote(part)} ({start} > {end})")
        ranges.append((start, end))
    bits = 0
    for start, end in ranges:  # start >= 0: a "-" never reaches a start; a negative end fails above
        if end > MAX_ID:
            raise ValueError(f"CPU id {end} is above {MAX_ID} (no Linux machine has more CPUs)")
        bits |= ((1 << (end - start + 1)) - 1) << start
    return CPUSet.from_bits(bits)
