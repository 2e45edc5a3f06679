"""Kubernetes resource quantities (``500m``, ``2Gi``, ``1e3``, ``100M``).

Values are exact: ``amount`` is an ``int`` when whole, else a
``fractions.Fraction`` (so whole quantities -- bytes, pages, CPUs -- never
import ``fractions``, which costs a command ~10 ms).  ``Quantity.value()``
rounds up to an integer as Kubernetes' ``Value()`` does; ``milli_value()`` likewise.
``str()`` gives the canonical form the kubelet prints (``1536Mi``, ``2Gi``,
``500m``).
"""
from __future__ import annotations

import sys

from .errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from fractions import Fraction
    from typing import Union

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DEC_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BIN_SUFFIX = {v: k for k, v in _BINARY.items()}

BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


def _fraction(*args):
    """``fractions.Fraction(*args)``, importing fractions on first need."""
    from fractions import Fraction

    return Fraction(*args)


def _exact(amount):
    """``amount`` as an exact number: an int when whole, else a Fraction (bool counts as int)."""
    if type(amount) is int:
        return amount
    if isinstance(amount, int):
        return int(amount)
    amount = _fraction(amount)
    return amount.numerator if amount.denominator == 1 else amount


def _ratio(numerator: int, denominator: int):
    """``numerator / denominator`` exactly: an int when it divides, else a Fraction."""
    whole, rest = divmod(numerator, denominator)
    return whole if rest == 0 else _fraction(numerator, denominator)


def _is_fraction(x) -> bool:
    # a Fraction exists only once fractions was imported: no need to import it to ask
    fractions = sys.modules.get("fractions")
    return fractions is not None and isinstance(x, fractions.Fraction)


class Quantity:
    """An exact Kubernetes quantity with the format it was written in."""

    __slots__ = ("amount", "format")

    def __init__(self, amount: Union[int, Fraction], format: str = DECIMAL_SI) -> None:
        object.__setattr__(self, "amount", _exact(amount))
        object.__setattr__(self, "format", format)

    def __setattr__(self, name, value):
        raise AttributeError("Quantity is immutable")

    @classmethod
    def parse(cls, text: Union[str, int, float, "Quantity"]) -> "Quantity":
        """Parse a quantity string; ``InputError`` naming it when malformed."""
        if isinstance(text, Quantity):
            return text
        if isinstance(text, bool):
            raise InputError(f"invalid quantity {_shown(text)}")
        if isinstance(text, int):
            if abs(text) > MAX_MAGNITUDE:
                raise _too_large(str(text) if text.bit_length() < 4096 else f"<integer of {text.bit_length()} bits>")
            return cls(text)
        if isinstance(text, float):
            # repr() is the shortest text of the float; nan and inf are not numbers a quantity holds
            amount, _fmt = _parse(repr(text))
            return cls(amount)
        if not isinstance(text, str):
            raise InputError(f"invalid quantity {_shown(text)}")
        amount, fmt = _parse(text.strip())
        return cls(amount, fmt)

    # -- numbers --------------------------------------------------------
    def value(self) -> int:
        """Integer value, rounded up (Kubernetes ``Value()``)."""
        return _ceil(self.amount)

    def milli_value(self) -> int:
        """Value in thousandths, rounded up (Kubernetes ``MilliValue()``)."""
        return _ceil(self.amount * 1000)

    def __int__(self) -> int:
        return self.value()

    def __float__(self) -> float:
        return float(self.amount)

    def is_zero(self) -> bool:
        return self.amount == 0

    def __eq__(self, other):
        if isinstance(other, Quantity):
            return self.amount == other.amount
        if isinstance(other, int) or _is_fraction(other):
            return self.amount == other
        return NotImplemented

    def __hash__(self):
        return hash(self.amount)

    def __lt__(self, other):
        return self.amount < _amount(other)

    def __le__(self, other):
        return self.amount <= _amount(other)

    def __gt__(self, other):
        return self.amount > _amount(other)

    def __ge__(self, other):
        return self.amount >= _amount(other)

    def __add__(self, other):
        return Quantity(self.amount + _amount(other), self.format)

    def __sub__(self, other):
        return Quantity(self.amount - _amount(other), self.format)

    def __neg__(self):
        return Quantity(-self.amount, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __str__(self) -> str:
        return format_quantity(self.amount, self.format)


def _amount(other) -> Fraction:
    if isinstance(other, Quantity):
        return other.amount
    return _exact(other)


#: The largest magnitude: 2^63 - 1, apimachinery's ``maxAllowed``.  ``ParseQuantity`` caps a
#: BinarySI amount there (``100Ei`` is 9223372036854775807), and so does this parser.  A larger
#: decimal amount Kubernetes keeps as an unbounded decimal whose ``Value()`` (int64) overflows;
#: pynuma refuses it, naming the value, rather than compute with numbers of any size.
MAX_MAGNITUDE = (1 << 63) - 1
#: An ``e`` exponent must fit apimachinery's ``Scale`` (int32; it parses int64 and truncates).
_EXP_LIMIT = 1 << 31
_NANO_DIGITS = 9  # amounts are rounded up to nano units (``1n``) as ``ParseQuantity`` does
_MAX_DIGITS = len(str(MAX_MAGNITUDE)) + _NANO_DIGITS  # digits of the largest amount in nano units
_CHUNK = 18  # digits multiplied at a time: one small int operation per chunk keeps parsing linear


def _shown(text) -> str:
    """``repr(text)``, shortened when long: an error names the value in one readable line."""
    if not isinstance(text, str):
        shown = repr(text)
        return shown if len(shown) <= 48 else shown[:40] + "..."
    if len(text) <= 48:
        return repr(text)
    return f"{text[:40]!r}... ({len(text)} characters)"


def _too_large(text: str) -> InputError:
    return InputError(f"invalid quantity {_shown(text)}: magnitude above {MAX_MAGNITUDE} (2^63-1, "
                      f"the most a Kubernetes quantity holds)")


class _TooLarge(Exception):
    pass


def _nanos(digits: str, exp10: int, factor: int) -> int:
    """``ceil(int(digits) * 10**exp10 * factor * 10**9)`` in time linear in ``len(digits)``.

    ``digits`` has no leading or trailing zeros (non-empty), ``factor`` is
    1 or a power of 1024 (< 10**19).  Amounts above the limit are refused
    before any big number is built: ``len(digits) + exp10`` bounds the
    magnitude from the digits alone.
    """
    if len(digits) + exp10 > len(str(MAX_MAGNITUDE)) + 1:  # >= 10**20 > 2**63 even with factor 1
        raise _TooLarge()
    shift = exp10 + _NANO_DIGITS
    if shift >= 0:
        return int(digits) * factor * 10 ** shift
    cut = len(digits) + shift  # digits[:cut] are whole nanos, digits[cut:] the fraction below 1n
    high = int(digits[:cut]) if cut > 0 else 0
    low = digits[max(cut, 0):]
    # floor(0.<low digits> * factor) and whether anything is left: multiply the decimal string by
    # the small factor right to left, a chunk of digits at a time, keeping only the carry.
    carry, rest = 0, False
    for end in range(len(low), 0, -_CHUNK):
        chunk = low[max(end - _CHUNK, 0):end]
        t = int(chunk) * factor + carry
        scale = 10 ** len(chunk)
        carry, part = divmod(t, scale)
        rest = rest or part != 0
    zeros = -cut if cut < 0 else 0  # the fraction starts this many zeros below 1n
    if zeros:
        if zeros > _MAX_DIGITS + 1:
            carry, rest = 0, True  # carry < factor < 10**19: shifted away entirely
        else:
            carry, part = divmod(carry, 10 ** zeros)
            rest = rest or part != 0
    return high * factor + carry + (1 if rest else 0)


def _parse(text: str):
    if not text:
        raise InputError("invalid quantity '': empty")
    s = text
    sign = 1
    if s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    i = 0
    while i < len(s) and s[i].isdigit():
        i += 1
    int_part = s[:i]
    frac_part = ""
    if i < len(s) and s[i] == ".":
        j = i + 1
        while j < len(s) and s[j].isdigit():
            j += 1
        frac_part = s[i + 1:j]
        i = j
    if not int_part and not frac_part:
        raise InputError(f"invalid quantity {_shown(text)}: no number")
    if not s[:i].isascii():
        raise InputError(f"invalid quantity {_shown(text)}")
    suffix = s[i:]
    factor, exp10 = 1, 0
    if suffix in _BINARY:
        fmt, factor = BINARY_SI, 1024 ** _BINARY[suffix]
    elif suffix in _DECIMAL:
        fmt, exp10 = DECIMAL_SI, _DECIMAL[suffix]
    else:
        exp = suffix[1:]
        body = exp[1:] if exp[:1] in "+-" else exp
        if suffix[:1] not in ("e", "E") or not (body.isdigit() and body.isascii()):
            raise InputError(f"invalid quantity {_shown(text)}: unknown suffix {_shown(suffix)}")
        body = body.lstrip("0") or "0"
        if len(body) > 10 or int(body) >= _EXP_LIMIT:
            raise InputError(f"invalid quantity {_shown(text)}: exponent beyond +-2^31 (a Kubernetes quantity's scale)")
        fmt, exp10 = DECIMAL_EXPONENT, -int(body) if exp[:1] == "-" else int(body)
    # the number as significant digits times a power of ten, without building it
    digits = (int_part + frac_part).lstrip("0")
    exp10 -= len(frac_part)
    stripped = digits.rstrip("0")
    exp10 += len(digits) - len(stripped)
    if not stripped:
        return 0, fmt
    try:
        nanos = _nanos(stripped, exp10, factor)
        if nanos > MAX_MAGNITUDE * 10 ** _NANO_DIGITS:
            raise _TooLarge()
    except _TooLarge:
        if fmt != BINARY_SI:
            raise _too_large(text) from None
        nanos = MAX_MAGNITUDE * 10 ** _NANO_DIGITS  # apimachinery's cap
    return _ratio(sign * nanos, 10 ** _NANO_DIGITS), fmt


def format_quantity(amount: Fraction, fmt: str = DECIMAL_SI) -> str:
    """Canonical Kubernetes text of an exact amount in the given format."""
    amount = _exact(amount)
    if amount == 0:
        return "0"
    sign = "-" if amount < 0 else ""
    mag = abs(amount)
    if fmt == BINARY_SI and mag.denominator == 1 and mag >= 1024:
        n, power = mag.numerator, 0
        while n % 1024 == 0 and power < 6:
            n //= 1024
            power += 1
        return f"{sign}{n}{_BIN_SUFFIX.get(power, '')}"
    # Decimal: round up to nano precision (Kubernetes' smallest unit), then
    # pick the largest exponent (multiple of 3) that keeps an integer mantissa.
    nanos = _ceil(mag * 10 ** 9)
    text = str(nanos)  # trailing zeros counted on the text: one pass, not a division per digit
    kept = text.rstrip("0")
    exp = -9 + len(text) - len(kept)
    nanos = int(kept)
    shift = exp % 3
    mantissa = nanos * 10 ** shift
    exp -= shift
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{mantissa}" + (f"e{exp}" if exp else "")
    if exp > 18:
        mantissa *= 10 ** (exp - 18)
        exp = 18
    return f"{sign}{mantissa}{_DEC_SUFFIX[exp]}"


def parse_quantity(text) -> Quantity:
    """Shorthand for :meth:`Quantity.parse`."""
    return Quantity.parse(text)
