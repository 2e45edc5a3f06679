"""Threshold parsing: kubelet flag syntax, percentages in float32, durations, defaults, derived thresholds."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.errors import InputError
from pynuma.policy.eviction.thresholds import (
    DEFAULT_EVICTION_HARD, LEGACY_DEFAULT_EVICTION_HARD, Threshold, ThresholdValue, add_allocatable_thresholds,
    float32, parse_duration, parse_flags, parse_percentage, parse_threshold_config, update_containerfs_thresholds,
)
from pynuma.quantity import Quantity


def test_percentage_is_float32_and_resolves_like_the_kubelet():
    p = parse_percentage("5%")
    assert p == struct.unpack("f", struct.pack("f", 0.05))[0]
    assert p != 0.05  # float32 skew on purpose
    # 5% of 10Gi is 536870920 in the kubelet, not 536870912.
    assert ThresholdValue(percentage=p).resolve(10 * 2 ** 30) == 536870920


@pytest.mark.parametrize("text", ["blah", "", "1_0%", "0x%", "--5%"])
def test_bad_percentage(text):
    with pytest.raises(InputError):
        parse_percentage(text)


def _struct_float32(x: float):
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return OverflowError


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False) | st.floats(min_value=-3.5e38, max_value=3.5e38) | st.just(float("nan")))
def test_float32_rounds_as_struct_does(x):
    try:
        got = float32(x)
    except OverflowError:
        got = OverflowError
    want = _struct_float32(x)
    assert got == want or (got != got and want != want)  # nan is nan


def test_percentage_out_of_float32_range():
    with pytest.raises(InputError, match="out of range"):
        parse_percentage("1e40%")


@pytest.mark.parametrize("text,seconds", [("30s", 30), ("1m30s", 90), ("1.5h", 5400), ("300ms", 0.3),
                                          ("0", 0), ("-1s", -1), ("2us", 2e-6), ("10ns", 1e-8)])
def test_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "30", "s", "1x", "1.s.", "abc"])
def test_bad_duration(text):
    with pytest.raises(InputError):
        parse_duration(text)


def test_flags_later_key_wins_and_whitespace_trimmed():
    assert parse_flags(" memory.available < 1Gi ,memory.available<2Gi", "<") == {"memory.available": "2Gi"}
    assert parse_flags(None, "<") is None
    assert parse_flags("", "=") == {}
    with pytest.raises(InputError, match="malformed pair"):
        parse_flags("memory.available=1Gi", "<")


def test_defaults_apply_only_when_hard_is_absent():
    default = parse_threshold_config([], None, None, None, None)
    assert {t.signal for t in default} == set(DEFAULT_EVICTION_HARD)
    user = parse_threshold_config([], {"memory.available": "1Gi"}, None, None, None)
    assert [t.signal for t in user] == ["memory.available"]
    legacy = parse_threshold_config([], None, None, None, None, defaults=LEGACY_DEFAULT_EVICTION_HARD)
    assert "imagefs.inodesFree" not in {t.signal for t in legacy}


def test_zero_and_full_percentages_are_dropped_without_error():
    assert parse_threshold_config([], {"memory.available": "0%"}, {"nodefs.available": "100%"}, None, None) == []


@pytest.mark.parametrize("hard,message", [
    ({"swap.available": "1Gi"}, "unsupported eviction signal swap.available"),
    ({"memory.available": "0"}, "eviction threshold memory.available must be positive: 0"),
    ({"memory.available": "-5%"}, "eviction percentage threshold memory.available must be >= 0%: -5%"),
    ({"memory.available": "150%"}, "eviction percentage threshold memory.available must be <= 100%: 150%"),
])
def test_hard_errors(hard, message):
    with pytest.raises(InputError) as err:
        parse_threshold_config([], hard, None, None, None)
    assert str(err.value) == message


def test_grace_and_min_reclaim_errors():
    with pytest.raises(InputError, match="must be a positive value"):
        parse_threshold_config([], {}, {"memory.available": "1Gi"}, {"memory.available": "-1s"}, None)
    with pytest.raises(InputError, match="negative eviction minimum reclaim specified for memory.available"):
        parse_threshold_config([], {}, None, None, {"memory.available": "-1Mi"})
    with pytest.raises(InputError, match="minimum reclaim memory.available must be positive"):
        parse_threshold_config([], {}, None, None, {"memory.available": "0.0%"})


def test_min_reclaim_attaches_to_hard_and_soft_and_allocatable_copy():
    ts = parse_threshold_config(["pods"], {"memory.available": "1Gi"}, {"memory.available": "2Gi"},
                                {"memory.available": "1m"}, {"memory.available": "500Mi"})
    assert len(ts) == 3
    assert all(t.min_reclaim == ThresholdValue(Quantity.parse("500Mi")) for t in ts)
    alloc = [t for t in ts if t.signal == "allocatableMemory.available"]
    assert len(alloc) == 1 and alloc[0].is_hard and alloc[0].value.quantity == Quantity.parse("1Gi")
    soft = [t for t in ts if not t.is_hard]
    assert soft[0].grace_period == 60


def test_allocatable_copies_only_hard_memory():
    ts = [Threshold("memory.available", ThresholdValue(Quantity(1)), 5.0),
          Threshold("nodefs.available", ThresholdValue(Quantity(1)))]
    assert add_allocatable_thresholds(ts) == ts


def _t(sig, q, grace=0.0):
    return Threshold(sig, ThresholdValue(Quantity.parse(q)), grace)


@pytest.mark.parametrize("dedicated,split,source,hard_inodes", [
    (False, False, "nodefs", "1k"),
    (True, True, "nodefs", "1k"),  # split layout: the writable layers' fs is nodefs, as upstream
    (True, False, "imagefs", "2k"),
])
def test_containerfs_copies_the_right_filesystem(dedicated, split, source, hard_inodes):
    ts = [_t("nodefs.available", "1Gi"), _t("nodefs.inodesFree", "1k"), _t("imagefs.available", "2Gi"),
          _t("imagefs.inodesFree", "2k"), _t("nodefs.available", "3Gi", 30)]
    out, err = update_containerfs_thresholds(ts, dedicated, split)
    assert err is None
    derived = {(t.signal, t.is_hard): t for t in out if t.signal.startswith("containerfs.")}
    want_bytes = "1Gi" if source == "nodefs" else "2Gi"
    assert derived[("containerfs.available", True)].value.quantity == Quantity.parse(want_bytes)
    assert derived[("containerfs.inodesFree", True)].value.quantity == Quantity.parse(hard_inodes)
    soft = derived.get(("containerfs.available", False))
    assert (soft is not None) == (source == "nodefs") and (soft is None or soft.grace_period == 30)


def test_user_containerfs_threshold_is_overwritten_and_reported():
    ts = [_t("nodefs.available", "1Gi"), _t("containerfs.available", "9Gi")]
    out, err = update_containerfs_thresholds(ts, False, False)
    assert err == "found containerfs.available for hard eviction. ignoring"
    assert out[1] == _t("containerfs.available", "1Gi")
    assert len([t for t in out if t.signal == "containerfs.available"]) == 1


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0.01, max_value=99.99), st.integers(min_value=0, max_value=2 ** 50))
def test_percentage_resolution_never_exceeds_capacity_and_is_monotonic(pct, cap):
    p = parse_percentage(f"{pct}%")
    v = ThresholdValue(percentage=p)
    assert 0 <= v.resolve(cap) <= cap
    assert v.resolve(cap) <= v.resolve(cap + 1024)
    assert p == float32(p)


def test_threshold_dict_round_trip():
    t = Threshold("nodefs.available", ThresholdValue(percentage=parse_percentage("10%")), 30.0,
                  ThresholdValue(Quantity.parse("1Gi")))
    assert Threshold.from_dict(t.to_dict()) == t


@pytest.mark.parametrize("hard, soft, grace, reclaim, setting, signal, value", [
    ({"memory.available": "lots"}, None, None, None, "evictionHard", "memory.available", "lots"),
    (None, {"nodefs.available": "1x%"}, {"nodefs.available": "1m"}, None, "evictionSoft", "nodefs.available", "1x%"),
    (None, {"memory.available": "1Gi"}, {"memory.available": "x"}, None, "evictionSoftGracePeriod",
     "memory.available", "x"),
    (None, None, None, {"pid.avail": "5"}, "evictionMinimumReclaim", "pid.avail", "5"),
])
def test_threshold_errors_keep_the_kubelet_text_and_say_which_setting(hard, soft, grace, reclaim, setting, signal,
                                                                       value):
    from pynuma.policy.eviction.thresholds import QUANTITY_FORMAT_ERROR, ThresholdError

    with pytest.raises(ThresholdError) as err:
        parse_threshold_config([], hard, soft, grace, reclaim)
    e = err.value
    assert (e.setting, e.signal, e.value) == (setting, signal, value)
    assert not str(e).startswith("--")  # the kubelet's own wording, as its tests compare it
    line = e.describe()
    assert value in line and signal in line and QUANTITY_FORMAT_ERROR not in line
    assert e.describe("k.yaml").startswith(f"k.yaml: {setting}[{signal}]: ")
