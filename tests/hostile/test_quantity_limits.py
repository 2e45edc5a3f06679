"""Quantities: exact as apimachinery parses them, bounded like it, and never slow.

The reference below is the definition (an exact fraction, rounded up to
nano units as ``ParseQuantity`` does); the parser under test never builds
such a number from untrusted text.  Hang guards are a SIGALRM per case, not
timings: a case that took 45 s before now takes milliseconds.
"""
from __future__ import annotations

import re
import signal
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from pynuma.errors import InputError
from pynuma.quantity import MAX_MAGNITUDE, Quantity, format_quantity

_BIN = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def reference(text: str):
    """The exact amount (Fraction) or "too large", computed the slow obvious way (short texts only)."""
    sign, ip, fp, suf = re.fullmatch(r"([+-]?)(\d*)(?:\.(\d*))?(.*)", text).groups()
    fp = fp or ""
    v = Fraction(int(ip or "0")) + (Fraction(int(fp), 10 ** len(fp)) if fp else 0)
    if suf in _BIN:
        v *= 1024 ** _BIN[suf]
    elif suf in _DEC:
        v *= Fraction(10) ** _DEC[suf]
    else:
        v *= Fraction(10) ** int(suf[1:])
    nanos = -((-v * 10 ** 9).numerator // (v * 10 ** 9).denominator)
    if nanos > MAX_MAGNITUDE * 10 ** 9:
        if suf in _BIN:  # apimachinery caps BinarySI at maxAllowed
            return (-1 if sign == "-" else 1) * MAX_MAGNITUDE
        return "too large"
    return (-1 if sign == "-" else 1) * Fraction(nanos, 10 ** 9)


@pytest.fixture(autouse=True)
def no_hang():
    def expire(*_):
        raise TimeoutError("quantity parsing or formatting ran away")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


digits = st.text("0123456789", max_size=24)
suffixes = st.sampled_from(list(_BIN) + list(_DEC) + ["e3", "e-5", "e-20", "E18", "e-40", "e+2", "e0"])


@given(st.sampled_from(["", "-", "+"]), digits, st.none() | st.text("0000123456789", max_size=40), suffixes)
def test_parse_matches_the_exact_definition(sign, ip, fp, suf):
    if not ip and not fp:
        return
    text = sign + ip + ("" if fp is None else "." + fp) + suf
    want = reference(text)
    if want == "too large":
        with pytest.raises(InputError, match="magnitude above"):
            Quantity.parse(text)
    else:
        assert Quantity.parse(text).amount == want


@pytest.mark.parametrize("text", [
    "1e9999999", "9" * 5000, "1" + "0" * 19, "9223372036854775808", "10E", "9223372036854775807001m",
    "1e19", "-1e19", "1e2147483647",
], ids=lambda v: v[:30])
def test_beyond_int64_is_refused_in_one_line_naming_the_value(text):
    with pytest.raises(InputError) as info:
        Quantity.parse(text)
    msg = str(info.value)
    assert "\n" not in msg and len(msg) < 200
    assert text[:20] in msg


@pytest.mark.parametrize("text", ["1e2147483648", "1e-2147483649", "1e" + "9" * 5000, "1e-" + "9" * 5000], ids=lambda v: v[:20])
def test_exponents_beyond_kubernetes_scale_are_refused(text):
    with pytest.raises(InputError, match="exponent"):
        Quantity.parse(text)


@pytest.mark.parametrize("text, amount", [
    ("9223372036854775807", MAX_MAGNITUDE),
    ("8Ei", MAX_MAGNITUDE),  # BinarySI above maxAllowed is capped, as ParseQuantity does
    ("-100Ei", -MAX_MAGNITUDE),
    ("9" * 5000 + "Ki", MAX_MAGNITUDE),
    ("7Ei", 7 * 1024 ** 6),
    ("1e-9999999", Fraction(1, 10 ** 9)),  # rounded up to 1n, as Kubernetes does
    ("-1e-12", Fraction(-1, 10 ** 9)),
    ("1" + "0" * 200000 + "e-200000", 1),
    ("0." + "0" * 500000 + "1Ki", Fraction(1, 10 ** 9)),
    ("0" * 300000 + "5", 5),
    ("1e0000000000000000000000000003", 1000),
], ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_long_texts_parse_exactly(text, amount):
    assert Quantity.parse(text).amount == amount


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), 1e308, 10 ** 19, -(10 ** 30), 10 ** 5000],
                         ids=["nan", "inf", "-inf", "1e308", "10**19", "-10**30", "10**5000"])
def test_yaml_numbers_beyond_limits_are_input_errors(value):
    with pytest.raises(InputError):
        Quantity.parse(value)


def test_floats_parse_through_their_shortest_text():
    assert Quantity.parse(2.5).amount == Fraction(5, 2)
    assert Quantity.parse(1e-308).amount == Fraction(1, 10 ** 9)
    assert Quantity.parse(1e18).amount == 10 ** 18


def test_formatting_large_amounts_stays_cheap():
    # sums of many quantities may exceed one quantity's limit; printing them must stay linear
    assert format_quantity(Fraction(10 ** 4000)) == "1" + "0" * (4000 - 18) + "E"
    assert format_quantity(Fraction(3 * 10 ** 3000 + 1, 10 ** 9)) .endswith("n")


@pytest.mark.parametrize("flag_value", ["memory.available<" + "x" * 3000, "y" * 3000 + "<1Gi",
                                        "nodefs.available<" + "9" * 3000 + "%"])
def test_eviction_flag_errors_cut_long_values(flag_value):
    from pynuma.policy.eviction.thresholds import ThresholdError, parse_flags, parse_threshold_config

    with pytest.raises(ThresholdError) as info:
        parse_threshold_config([], parse_flags(flag_value, "<"), None, None, None)
    line = info.value.describe(None)
    assert "\n" not in line and len(line) < 400 and re.search(r"\(300[01] characters\)", line), line
