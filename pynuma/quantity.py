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
            raise InputError(f"invalid quantity {text!r}")
        if isinstance(text, int):
            return cls(text)
        if isinstance(text, float):
            return cls(_fraction(repr(text)))
        if not isinstance(text, str):
            raise InputError(f"invalid quantity {text!r}")
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
        raise InputError(f"invalid quantity {text!r}: no number")
    if not s[:i].isascii():
        raise InputError(f"invalid quantity {text!r}")
    number = int(int_part or "0")
    if frac_part:
        number = _exact(number + _fraction(int(frac_part), 10 ** len(frac_part)))
    suffix = s[i:]
    if suffix in _BINARY:
        return sign * number * (1024 ** _BINARY[suffix]), BINARY_SI
    if suffix in _DECIMAL:
        return sign * _scaled(number, _DECIMAL[suffix]), DECIMAL_SI
    if suffix[:1] in ("e", "E"):
        exp = suffix[1:]
        body = exp[1:] if exp[:1] in "+-" else exp
        if body.isdigit() and body.isascii():
            return sign * _scaled(number, int(exp)), DECIMAL_EXPONENT
    raise InputError(f"invalid quantity {text!r}: unknown suffix {suffix!r}")


def _scaled(number, exp: int):
    """``number * 10**exp`` exactly (a Fraction only when the result is not whole)."""
    if exp >= 0:
        return number * 10 ** exp
    return _exact(_fraction(number) / 10 ** -exp)


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
    exp = -9
    while nanos % 10 == 0 and nanos:
        nanos //= 10
        exp += 1
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
