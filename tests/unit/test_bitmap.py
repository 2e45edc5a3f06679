"""cpulist / cpumask parsing and formatting: both backends, and native == pure on any input."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma import _impl

IMPLS = _impl.implementations("bitmap")


def bits_of(ids):
    b = 0
    for i in ids:
        b |= 1 << i
    return b


# expectations written from the kernel's bitmap_parselist()/cpumask_parse() rules
CPULISTS = [
    ("0-3,8-11", [0, 1, 2, 3, 8, 9, 10, 11]),
    ("", []),
    ("\n", []),
    ("5\n", [5]),
    ("0-3\n\x00", [0, 1, 2, 3]),
    (" 1 , 2 ", [1, 2]),
    ("0-7:2/4", [0, 1, 4, 5]),
    ("0-6:2/4", [0, 1, 4, 5]),
    ("0-4:2/4", [0, 1, 4]),
    ("3:1/2", [3]),
    ("2-2", [2]),
    ("007", [7]),
    ("8191", [8191]),
    ("8190-8191", [8190, 8191]),
]
BAD_CPULISTS = ["3-1", "x", "1,,2", ",", "1,", "-1", "1-", "1-2-3", "0-7:2", "0-7:0/4", "0-7:5/4",
                "0-7:2/0", "0-7:/4", "0-7:2/4/1", "1 2", "0x1", "+1", "1.0", "4194304", "0-99999999999",
                "٣", "1\x002", "0-3\n4"]
CPUMASKS = [
    ("00000000,0000ffff", 0xFFFF),
    ("ff,00000000", 0xFF << 32),
    ("1,2", (1 << 32) | 2),
    ("0x3", 3),
    ("ffffffff\n", 0xFFFFFFFF),
    ("00000001,00000000,00000000\x00", 1 << 64),
    ("0,,1", 1),
    ("0", 0),
]
BAD_CPUMASKS = ["", "\n", "123456789", "0xg", "g", "1 2", "-1", "1_0", "0x0x1", "ff,0000000000"]


@pytest.mark.parametrize("text, ids", CPULISTS)
def test_parse_cpulist(backend, text, ids):
    assert backend("bitmap").parse_cpulist(text) == bits_of(ids)


@pytest.mark.parametrize("text", BAD_CPULISTS)
def test_parse_cpulist_rejects(backend, text):
    with pytest.raises(ValueError):
        backend("bitmap").parse_cpulist(text)


@pytest.mark.parametrize("text, value", CPUMASKS)
def test_parse_cpumask(backend, text, value):
    assert backend("bitmap").parse_cpumask(text) == value


@pytest.mark.parametrize("text", BAD_CPUMASKS)
def test_parse_cpumask_rejects(backend, text):
    with pytest.raises(ValueError):
        backend("bitmap").parse_cpumask(text)


@pytest.mark.parametrize("ids, text", [([], ""), ([0], "0"), ([0, 1], "0-1"), ([0, 2, 3, 4, 9], "0,2-4,9"),
                                       ([63, 64], "63-64"), ([8192, 8193, 9000], "8192-8193,9000")])
def test_format_cpulist(backend, ids, text):
    assert backend("bitmap").format_cpulist(bits_of(ids)) == text


@pytest.mark.parametrize("value, min_words, text", [
    (0, 1, "00000000"), (0, 0, ""), (0xFFFF, 2, "00000000,0000ffff"),
    (1 << 32, 1, "00000001,00000000"), (0xABC, 3, "00000000,00000000,00000abc")])
def test_format_cpumask(backend, value, min_words, text):
    assert backend("bitmap").format_cpumask(value, min_words) == text


def test_rejects_negative_and_non_int(backend):
    mod = backend("bitmap")
    for fn in (mod.format_cpulist, mod.format_cpumask):
        with pytest.raises(ValueError):
            fn(-1)
        with pytest.raises(TypeError):
            fn("3")
    with pytest.raises(TypeError):
        mod.parse_cpulist(b"0-3")


def test_8192_cpus(backend):
    mod = backend("bitmap")
    every_other = bits_of(range(0, 8192, 2))
    text = mod.format_cpulist(every_other)
    assert text.startswith("0,2,4,") and text.endswith(",8190")
    assert mod.parse_cpulist(text) == every_other
    assert mod.parse_cpumask(mod.format_cpumask(every_other)) == every_other
    assert mod.parse_cpulist("0-8191:1/2") == every_other
    with pytest.raises(ValueError, match="id above 8191"):  # no Linux CPU id is larger (limits.MAX_CPUS)
        mod.parse_cpulist("0-8192")


# -- properties -------------------------------------------------------------------------
id_sets = st.sets(st.integers(min_value=0, max_value=8191), max_size=150)


@settings(max_examples=200, deadline=None)
@given(ids=id_sets, min_words=st.integers(min_value=0, max_value=12))
def test_round_trips_and_backends_agree(ids, min_words):
    bits = bits_of(ids)
    outs = {}
    for name, mod in IMPLS.items():
        text = mod.format_cpulist(bits)
        mask = mod.format_cpumask(bits, min_words)
        assert mod.parse_cpulist(text) == bits
        assert mod.parse_cpumask(mask) == bits if mask else bits == 0
        assert len(mask.split(",")) >= min_words if mask else min_words == 0
        outs[name] = (text, mask)
    assert len(set(outs.values())) == 1


def _outcome(fn, text):
    try:
        return fn(text)
    except ValueError:
        return ValueError


noisy = st.text(alphabet="0123456789-,:/ \t\r\n\x00xXabcdefgABF_+٣", max_size=40)
list_like = st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300), st.integers(0, 9), st.integers(0, 9)),
                     max_size=6).map(lambda items: ",".join(
                         f"{a}-{b}" + (f":{u}/{g}" if u else "") for a, b, u, g in items))


@pytest.mark.skipif("native" not in IMPLS, reason="native bitmap not built")
@settings(max_examples=200, deadline=None)
@given(text=st.one_of(noisy, list_like))
def test_native_and_pure_accept_and_reject_alike(text):
    pure, native = IMPLS["pure"], IMPLS["native"]
    assert _outcome(native.parse_cpulist, text) == _outcome(pure.parse_cpulist, text)
    assert _outcome(native.parse_cpumask, text) == _outcome(pure.parse_cpumask, text)


# the kernel's 8-digit word form, and near misses of it (the native parser takes a short cut for it)
kernel_words = st.lists(st.one_of(st.just("00000000"), st.text(alphabet="0123456789abcdefABCDEF", min_size=8,
                                                                max_size=8),
                                  st.text(alphabet="0123456789afxg ,", min_size=7, max_size=9)),
                        min_size=1, max_size=20).map(",".join)


@pytest.mark.skipif("native" not in IMPLS, reason="native bitmap not built")
@settings(max_examples=300, deadline=None)
@given(text=kernel_words, tail=st.sampled_from(["", "\n", " \n", "\x00"]))
def test_kernel_form_masks_parse_alike(text, tail):
    pure, native = IMPLS["pure"], IMPLS["native"]
    assert _outcome(native.parse_cpumask, text + tail) == _outcome(pure.parse_cpumask, text + tail)
