"""Chooses, once per area, between a native module and its pure-Python twin.

Area ``X`` has a native module ``pynuma._native_X`` (built from
``pynuma/_native_X.pyx``) and a pure twin ``pynuma._pure_X`` exposing the
same functions.  ``PYNUMA_PURE=1`` forces the pure twins everywhere; a
missing extension falls back silently (``native_available()`` tells).
Tests use :func:`implementations` to run the same case on both.
"""
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

_chosen: dict = {}


def pure_forced() -> bool:
    """True when ``PYNUMA_PURE=1`` asks for the pure-Python path."""
    return os.environ.get("PYNUMA_PURE", "") not in ("", "0")


def import_module(name: str) -> "ModuleType":
    """The module ``name`` (absolute), imported if needed: ``importlib.import_module`` without importing importlib."""
    __import__(name)
    return sys.modules[name]


def _native(area: str):
    try:
        return import_module(f"pynuma._native_{area}")
    except ImportError:
        return None


def select(area: str) -> "ModuleType":
    """The module that implements ``area`` for this process (cached)."""
    mod = _chosen.get(area)
    if mod is None:
        mod = None if pure_forced() else _native(area)
        if mod is None:
            mod = import_module(f"pynuma._pure_{area}")
        _chosen[area] = mod
    return mod


def native_available(area: str = "bitmap") -> bool:
    """Whether the native module for ``area`` is built and importable."""
    return _native(area) is not None


def is_native(area: str) -> bool:
    """Whether this process uses the native module for ``area``."""
    return select(area).__name__.startswith("pynuma._native_")


def implementations(area: str) -> dict:
    """``{"native": module, "pure": module}`` (native absent when not built)."""
    found = {"pure": import_module(f"pynuma._pure_{area}")}
    native = _native(area)
    if native is not None:
        found["native"] = native
    return found
