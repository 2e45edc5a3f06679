"""Kubernetes resource quantities (``500m``, ``2Gi``, ``1e3``, ``100M``).

Values are exact: ``amount`` is an ``int`` when whole, else a
``fractions.Fraction``.  A quantity keeps its value as a numerator and
denominator, so parsing, comparing, adding and printing quantities never
import ``fractions`` (with ``re``, ``decimal`` and ``enum`` it costs a
command ~10 ms); only reading the ``amount`` of a fractional one does.  ``Quantity.value()``
rounds up to an integer as Kubernetes' ``Value()`` does; ``milli_value()`` likewise.
``str()`` gives the canonical form the kubelet prints (``1536Mi``, ``2Gi``,
``500m``).
"""
from __future__ import annotations

import sys

from .errors import InputError
from .parse import shown as _shown

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from fractions import Fraction
    from typing import Optional, Tuple, Union

_set = object.__setattr__
_new = object.__new__

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DEC_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BIN_SUFFIX = {v: k for k, v in _BINARY.items()}

BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"


def _fraction(*args):
    """``fractions.Fraction(*args)``, importing fractions on first need."""
    from fractions import Fraction

    return Fraction(*args)


def _gcd(a: int, b: int) -> int:
    """Greatest common divisor of ``a`` and ``b`` > 0 (``math.gcd``: loading math costs a command ~0.5 ms)."""
    while b:
        a, b = b, a % b
    return a if a >= 0 else -a


def _lowest(num: int, den: int) -> Tuple[int, int]:
    """``num / den`` (``den`` > 0) in lowest terms."""
    if den == 1:
        return num, 1
    g = _gcd(num, den)
    return (num // g, den // g) if g > 1 else (num, den)


def _pair(amount) -> Tuple[int, int]:
    """An exact amount as ``(numerator, denominator > 0)`` in lowest terms.

    ints (bool counts as one) and rationals (``Fraction``) are taken as they
    are; anything else ``Fraction`` accepts (float, Decimal, ``"1/3"``)
    goes through it.
    """
    if type(amount) is int:
        return amount, 1
    if isinstance(amount, int):
        return int(amount), 1
    num, den = getattr(amount, "numerator", None), getattr(amount, "denominator", None)
    if type(num) is not int or type(den) is not int or den == 0:
        amount = _fraction(amount)
        num, den = amount.numerator, amount.denominator
    if den < 0:
        num, den = -num, -den
    return _lowest(num, den)


def _pair_of(other) -> Tuple[int, int]:
    if isinstance(other, Quantity):
        return other._num, other._den
    return _pair(other)


def _is_fraction(x) -> bool:
    # a Fraction exists only once fractions was imported: no need to import it to ask
    fractions = sys.modules.get("fractions")
    return fractions is not None and isinstance(x, fractions.Fraction)


def _hash(num: int, den: int) -> int:
    """``hash(Fraction(num, den))`` without importing fractions (the numeric hash of the language reference)."""
    modulus = sys.hash_info.modulus
    while num % modulus == 0 and den % modulus == 0:
        num, den = num // modulus, den // modulus
    if den % modulus == 0:
        value = sys.hash_info.inf
    else:
        value = (abs(num) % modulus) * pow(den, modulus - 2, modulus) % modulus
    if num < 0:
        value = -value
    return -2 if value == -1 else value


class Quantity:
    """An exact Kubernetes quantity with the format it was written in.

    ``amount`` is an ``int`` when whole, else a ``fractions.Fraction``;
    comparisons, sums, ``value()`` and ``str()`` are exact without it.
    """

    __slots__ = ("_num", "_den", "format")

    def __init__(self, amount: Union[int, Fraction], format: str = DECIMAL_SI) -> None:
        num, den = _pair(amount)
        _set(self, "_num", num)
        _set(self, "_den", den)
        _set(self, "format", format)

    @classmethod
    def _from_lowest(cls, num: int, den: int, format: str) -> "Quantity":
        """From ``num / den`` (``den`` > 0) in lowest terms."""
        q = _new(cls)
        _set(q, "_num", num)
        _set(q, "_den", den)
        _set(q, "format", format)
        return q

    def __setattr__(self, name, value):
        raise AttributeError("Quantity is immutable")

    def __reduce__(self):
        return (Quantity._from_lowest, (self._num, self._den, self.format))

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
            num, den, _fmt = _parse(repr(text))
            return cls._from_lowest(num, den, DECIMAL_SI)
        if not isinstance(text, str):
            raise InputError(f"invalid quantity {_shown(text)}")
        num, den, fmt = _parse(text)
        return cls._from_lowest(num, den, fmt)

    # -- numbers --------------------------------------------------------
    @property
    def amount(self) -> Union[int, Fraction]:
        """The exact amount: an ``int`` when whole, else a ``Fraction``."""
        return self._num if self._den == 1 else _fraction(self._num, self._den)

    def value(self) -> int:
        """Integer value, rounded up (Kubernetes ``Value()``)."""
        return -((-self._num) // self._den)

    def milli_value(self) -> int:
        """Value in thousandths, rounded up (Kubernetes ``MilliValue()``)."""
        return -((-self._num * 1000) // self._den)

    def __int__(self) -> int:
        return self.value()

    def __float__(self) -> float:
        return self._num / self._den

    def as_int64(self) -> Optional[int]:
        """The value as Go's ``Quantity.AsInt64`` gives it: a whole number that fits int64, else None."""
        if self._den != 1 or not -(1 << 63) <= self._num < 1 << 63:
            return None
        return self._num

    def is_zero(self) -> bool:
        return self._num == 0

    def is_integer(self) -> bool:
        """A whole number (``amount`` is an ``int``)."""
        return self._den == 1

    def __eq__(self, other):
        if isinstance(other, Quantity):
            return self._num == other._num and self._den == other._den
        if isinstance(other, int) or _is_fraction(other):
            return (self._num, self._den) == _pair(other)
        return NotImplemented

    def __hash__(self):
        return hash(self._num) if self._den == 1 else _hash(self._num, self._den)

    def _cmp(self, other) -> int:
        """``self - other`` scaled by both (positive) denominators: its sign orders them."""
        num, den = _pair_of(other)
        return self._num * den - num * self._den

    def __lt__(self, other):
        return self._cmp(other) < 0

    def __le__(self, other):
        return self._cmp(other) <= 0

    def __gt__(self, other):
        return self._cmp(other) > 0

    def __ge__(self, other):
        return self._cmp(other) >= 0

    def __add__(self, other):
        num, den = _pair_of(other)
        return Quantity._from_lowest(*_lowest(self._num * den + num * self._den, self._den * den), self.format)

    def __sub__(self, other):
        num, den = _pair_of(other)
        return Quantity._from_lowest(*_lowest(self._num * den - num * self._den, self._den * den), self.format)

    def __neg__(self):
        return Quantity._from_lowest(-self._num, self._den, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __str__(self) -> str:
        return _format(self._num, self._den, self.format)


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
        return 0, 1, fmt
    try:
        nanos = _nanos(stripped, exp10, factor)
        if nanos > MAX_MAGNITUDE * 10 ** _NANO_DIGITS:
            raise _TooLarge()
    except _TooLarge:
        if fmt != BINARY_SI:
            raise _too_large(text) from None
        nanos = MAX_MAGNITUDE * 10 ** _NANO_DIGITS  # apimachinery's cap
    return (*_lowest(sign * nanos, 10 ** _NANO_DIGITS), fmt)


def format_quantity(amount: Union[int, Fraction], fmt: str = DECIMAL_SI) -> str:
    """Canonical Kubernetes text of an exact amount in the given format."""
    return _format(*_pair(amount), fmt)


def _format(num: int, den: int, fmt: str) -> str:
    if num == 0:
        return "0"
    sign = "-" if num < 0 else ""
    mag = abs(num)
    if fmt == BINARY_SI and den == 1 and mag >= 1024:
        n, power = mag, 0
        while n % 1024 == 0 and power < 6:
            n //= 1024
            power += 1
        return f"{sign}{n}{_BIN_SUFFIX.get(power, '')}"
    # Decimal: round up to nano precision (Kubernetes' smallest unit), then
    # pick the largest exponent (multiple of 3) that keeps an integer mantissa.
    nanos = -((-mag * 10 ** 9) // den)
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
