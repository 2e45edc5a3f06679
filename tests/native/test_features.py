"""pynuma.features(): flags from native/pn_features.h, and what the reader uses."""
from __future__ import annotations

import os

import pytest

import pynuma
from pynuma import _impl


def test_features_shape():
    info = pynuma.features()
    assert set(info) >= {"native", "openat2", "compiled", "areas", "pure_forced", "kernel"}
    assert all(k.startswith("PN_HAS_") and isinstance(v, bool) for k, v in info["compiled"].items())
    assert info["native"] == _impl.is_native("fsread")
    assert info["areas"]["bitmap"] in ("native", "pure")
    assert info["kernel"] == os.uname().release
    # openat2 in use implies it was compiled in
    assert not info["openat2"] or info["compiled"]["PN_HAS_OPENAT2"]


def test_callable_after_submodule_import():
    import importlib
    import sys

    importlib.import_module("pynuma.features")  # may bind the submodule over the lazy attribute
    mod = sys.modules["pynuma.features"]
    assert callable(pynuma.features) and callable(mod)
    assert pynuma.features()["kernel"] == mod()["kernel"] == mod.features()["kernel"]


def test_openat2_matches_kernel():
    found = _impl.implementations("fsread")
    if "native" not in found:
        pytest.skip("native fsread not built")
    info = found["native"].features()
    release = tuple(int(x) for x in os.uname().release.split(".")[:2] if x.isdigit())
    if info["compiled"]["PN_HAS_OPENAT2"] and release >= (5, 6):
        # may still be refused by a seccomp filter; then the walk is used and results agree anyway
        assert isinstance(info["openat2"], bool)
    if release and release < (5, 6):
        assert info["openat2"] is False


def test_pure_twin_reports_nothing_compiled():
    pure = _impl.implementations("fsread")["pure"]
    info = pure.features()
    assert info["native"] is False and info["openat2"] is False
    assert not any(info["compiled"].values())
