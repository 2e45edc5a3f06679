"""Kubernetes quantity parsing, values and canonical text."""
from fractions import Fraction

import pytest

from pynuma.errors import InputError
from pynuma.quantity import Quantity, format_quantity, BINARY_SI


@pytest.mark.parametrize("text, amount", [
    ("500m", Fraction(1, 2)),
    ("2Gi", 2 * 1024 ** 3),
    ("1e3", 1000),
    ("1E3", 1000),
    ("100M", 100 * 10 ** 6),
    ("1.5Gi", 3 * 1024 ** 3 // 2),
    ("0", 0),
    ("-1Ki", -1024),
    ("+7", 7),
    (".5", Fraction(1, 2)),
    ("12e-3", Fraction(12, 1000)),
    ("1n", Fraction(1, 10 ** 9)),
])
def test_parse_values(text, amount):
    assert Quantity.parse(text).amount == amount


@pytest.mark.parametrize("text", ["1.5.3Gi", "x", "", "1Gb", "Mi", "1 Gi", "1e", "1e+", "--1", "１"])
def test_malformed_quantities_are_input_errors_naming_the_text(text):
    with pytest.raises(InputError) as err:
        Quantity.parse(text)
    assert repr(text) in str(err.value)


@pytest.mark.parametrize("text, canonical", [
    ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("1.5Gi", "1536Mi"), ("0.5", "500m"),
    ("2000", "2k"), ("1500", "1500"), ("100Ki", "100Ki"), ("1000Mi", "1000Mi"),
    ("512", "512"), ("1e3", "1e3"), ("0.1", "100m"), ("-2Gi", "-2Gi"),
])
def test_canonical_text(text, canonical):
    assert str(Quantity.parse(text)) == canonical


def test_value_rounds_up_like_kubernetes():
    assert Quantity.parse("500m").value() == 1
    assert Quantity.parse("1.5").value() == 2
    assert Quantity.parse("-1.5").value() == -1
    assert Quantity.parse("1m").milli_value() == 1
    assert Quantity.parse("1n").milli_value() == 1


def test_comparison_and_arithmetic_by_value():
    assert Quantity.parse("1Gi") == Quantity.parse("1024Mi")
    assert Quantity.parse("1Gi") > Quantity.parse("1000Mi")
    assert (Quantity.parse("1Gi") - Quantity.parse("512Mi")) == Quantity.parse("512Mi")
    assert hash(Quantity.parse("1Gi")) == hash(Quantity.parse("1024Mi"))


def test_binary_format_falls_back_to_decimal_for_small_or_fractional_amounts():
    assert format_quantity(Fraction(512), BINARY_SI) == "512"
    assert format_quantity(Fraction(3, 2), BINARY_SI) == "1500m"


def test_numbers_are_accepted():
    assert Quantity.parse(3).value() == 3
    assert Quantity.parse(0.25).milli_value() == 250
    with pytest.raises(InputError):
        Quantity.parse(True)
