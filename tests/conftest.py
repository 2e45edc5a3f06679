"""Fixtures shared by every test tier.

``backend`` runs a test once per implementation of a native area (native
and pure-Python twin) so the pure path is the oracle of the native one.
With ``PYNUMA_REQUIRE_NATIVE=1`` (CI) a missing extension is a failure, not
a skip.
"""
from __future__ import annotations

import os

import pytest

from pynuma import _impl

REQUIRE_NATIVE = os.environ.get("PYNUMA_REQUIRE_NATIVE") == "1"


@pytest.fixture(params=["native", "pure"])
def backend(request):
    """A function ``area -> module`` for one implementation (native or pure)."""
    kind = request.param

    def get(area: str):
        found = _impl.implementations(area)
        if kind not in found:
            if REQUIRE_NATIVE:
                pytest.fail(f"native module for {area!r} is not built (PYNUMA_REQUIRE_NATIVE=1)")
            pytest.skip(f"native module for {area!r} is not built")
        return found[kind]

    get.kind = kind
    return get
