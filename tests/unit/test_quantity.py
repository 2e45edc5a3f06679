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


# -- the numerator/denominator arithmetic agrees with fractions.Fraction --------------------------
from hypothesis import given, strategies as st  # noqa: E402

_amounts = st.fractions(min_value=-(10 ** 12), max_value=10 ** 12, max_denominator=10 ** 9) | \
    st.integers(min_value=-(1 << 62), max_value=1 << 62)


@given(_amounts, _amounts)
def test_arithmetic_and_order_agree_with_fraction(a, b):
    qa, qb = Quantity(a), Quantity(b)
    fa, fb = Fraction(a), Fraction(b)
    assert (qa + qb).amount == fa + fb and (qa - qb).amount == fa - fb and (-qa).amount == -fa
    assert (qa < qb, qa <= qb, qa > qb, qa >= qb) == (fa < fb, fa <= fb, fa > fb, fa >= fb)
    assert (qa == qb) == (fa == fb) and (qa == fb) == (fa == fb)
    assert (qa < fb, qa > b) == (fa < fb, fa > fb)  # against plain numbers too
    assert hash(qa) == hash(fa)  # equal quantities, ints and Fractions hash alike
    assert qa.value() == -((-fa.numerator) // fa.denominator)
    assert qa.milli_value() == -((-fa.numerator * 1000) // fa.denominator)
    assert float(qa) == float(fa)
    assert str(qa) == format_quantity(fa) and qa.is_zero() == (fa == 0) and qa.is_integer() == (fa.denominator == 1)
    assert type(qa.amount) is (int if fa.denominator == 1 else Fraction)


def test_fractional_quantity_pickles_and_takes_any_rational():
    import pickle

    q = Quantity.parse("500m")
    assert pickle.loads(pickle.dumps(q)) == q and str(pickle.loads(pickle.dumps(q))) == "500m"
    assert Quantity(Fraction(2, 4)) == q == Quantity(0.5) == Fraction(1, 2)
    assert Quantity(True).amount == 1 and Quantity(Fraction(4, 2)).amount == 2


def test_parsing_and_printing_a_fractional_quantity_does_not_import_fractions():
    import subprocess
    import sys

    code = ("import sys\nfrom pynuma.quantity import Quantity\nq = Quantity.parse('500m') + Quantity.parse('1.5')\n"
            "assert str(q) == '2' and q.value() == 2 and q > Quantity.parse('1900m')\n"
            "print('fractions' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": str(__import__("pathlib").Path(__file__).resolve().parents[2])})
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("text", [" 1", "1 ", "2Mi\n", "\t100m", "1 Gi"])
def test_whitespace_is_not_part_of_a_quantity(text):
    # resource.ParseQuantity trims nothing: " 1" in a manifest or a config file is refused
    with pytest.raises(InputError):
        Quantity.parse(text)


def test_a_hugepage_resource_name_with_whitespace_has_no_size():
    from pynuma.hugepages.resources import page_size_from_resource_name

    assert page_size_from_resource_name("hugepages-2Mi").value() == 2 << 20
    with pytest.raises(InputError):
        page_size_from_resource_name("hugepages-2Mi ")
