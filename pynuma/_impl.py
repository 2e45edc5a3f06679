"""Chooses, once per area, between a native module and its pure-Python twin.

Area ``X`` has a native module ``pynuma._native_X`` (built from
``pynuma/_native_X.pyx``) and a pure twin ``pynuma._pure_X`` exposing the
same functions.  ``PYNUMA_PURE=1`` forces the pure twins everywhere; a
missing extension falls back silently: ``native_available()`` says whether
the native modules are built, ``native_in_use()`` whether this process runs them.
Tests use :func:`implementations` to run the same case on both.
"""
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Optional, Tuple

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


#: every area that has a native module and a pure twin
AREAS = ("acpi", "bitmap", "cgwalk", "fsread", "membench", "merge", "procs", "sys")


def _areas(area: "Optional[str]") -> "Tuple[str, ...]":
    return AREAS if area is None else (area,)


def native_available(area: "Optional[str]" = None) -> bool:
    """Whether the native module of ``area`` (``None``: of every area) is built and importable.

    Built is not in use: ``PYNUMA_PURE=1`` runs the pure twins even when the
    native modules are there (see :func:`native_in_use`).
    """
    return all(_native(a) is not None for a in _areas(area))


def is_native(area: str) -> bool:
    """Whether this process uses the native module for ``area``."""
    return select(area).__name__.startswith("pynuma._native_")


def native_in_use(area: "Optional[str]" = None) -> bool:
    """Whether this process runs the native module of ``area`` (``None``: of every area)."""
    return all(is_native(a) for a in _areas(area))


def implementations(area: str) -> dict:
    """``{"native": module, "pure": module}`` (native absent when not built)."""
    found = {"pure": import_module(f"pynuma._pure_{area}")}
    native = _native(area)
    if native is not None:
        found["native"] = native
    return found
