"""Fixtures shared by every test tier.

``backend`` runs a test once per implementation of a native area (native
and pure-Python twin) so the pure path is the oracle of the native one.
With ``PYNUMA_REQUIRE_NATIVE=1`` (CI) a missing extension is a failure, not
a skip.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import settings

from pynuma import _impl

# Property tests: no per-example deadline (a loaded 2-core CI box makes timings
# meaningless), and under CI a fixed example sequence so a run is reproducible.
settings.register_profile("pynuma", deadline=None, print_blob=True)
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "pynuma")

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
