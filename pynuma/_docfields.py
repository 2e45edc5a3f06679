"""Checked reads of the fields of a saved JSON document (a topology, its devices).

A document is input: each reader returns the field when it has the type and
bounds expected, else raises ``ValueError`` naming the field by its path
(``cpus[3].node: expected an integer, got 'x'``).  Only loaders import this
module; discovery never does.
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Any, Mapping, Optional

from .cpuset import CPUSet

_MISSING = object()
_parse_cpus = CPUSet.parse


def shown_json(raw) -> str:
    """A JSON value as an error message quotes it: short, one line."""
    if raw is None:
        return "null"
    if raw is True or raw is False:
        return "true" if raw else "false"
    if isinstance(raw, int):
        return str(raw) if raw.bit_length() <= 200 else f"a {raw.bit_length()}-bit integer"
    if isinstance(raw, float):
        return repr(raw)
    if isinstance(raw, str):
        text = repr(raw)
        return text if len(text) <= 42 else text[:38] + "...'"
    if isinstance(raw, list):
        return "a list"
    if isinstance(raw, dict):
        return "an object"
    return type(raw).__name__


def mapping(raw, where: str) -> "Mapping[str, Any]":
    """``raw`` when it is an object (a mapping)."""
    if type(raw) is not dict and not _is_mapping(raw):
        raise ValueError(f"{where}: expected an object, got {shown_json(raw)}")
    return raw


def _is_mapping(raw) -> bool:
    from _collections_abc import Mapping  # loaded at interpreter start-up: costs nothing

    return isinstance(raw, Mapping)


def field_name(where: str, key: str) -> str:
    """``where.key`` (just ``key`` at the top of the document)."""
    return f"{where}.{key}" if where else key


def items(data, key: str, where: str = "", required: bool = False) -> list:
    """``data[key]`` as a list (absent or null: empty, unless ``required``)."""
    if key not in data:
        if required:
            raise ValueError(f"{field_name(where, key)}: missing")
        return []
    raw = data[key]
    if raw is None and not required:
        return []
    if not isinstance(raw, (list, tuple)):
        raise ValueError(f"{field_name(where, key)}: expected a list, got {shown_json(raw)}")
    return raw


def integer(data, key: str, where: str, bounds, default=None, none: bool = False, why: str = "") -> "Optional[int]":
    """``data[key]``: an int (not a bool, not a float) within ``bounds``; ``null`` when ``none``."""
    raw = data.get(key, _MISSING)
    if type(raw) is int and bounds[0] <= raw <= bounds[1]:
        return raw
    if raw is _MISSING:
        if default is None and not none:
            raise ValueError(f"{field_name(where, key)}: missing")
        return default
    return check_int(raw, field_name(where, key), bounds, none, why)


def check_int(raw, name: str, bounds, none: bool = False, why: str = "") -> "Optional[int]":
    """``raw`` when it is an int within ``bounds`` (or null when ``none``); ``ValueError`` naming ``name``."""
    if raw is None and none:
        return None
    if type(raw) is not int:
        expected = "an integer or null" if none else "an integer"
        raise ValueError(f"{name}: expected {expected}, got {shown_json(raw)}")
    lo, hi = bounds
    if raw < lo:
        raise ValueError(f"{name}: {shown_json(raw)} is negative" if lo == 0 else f"{name}: {shown_json(raw)} is below {lo}")
    if raw > hi:
        raise ValueError(f"{name}: {shown_json(raw)} is {why or f'above {hi}'}")
    return raw


def boolean(data, key: str, where: str, default: bool) -> bool:
    """``data[key]``: true or false (``default`` when absent)."""
    raw = data.get(key, default)
    if raw is not True and raw is not False:
        raise ValueError(f"{field_name(where, key)}: expected true or false, got {shown_json(raw)}")
    return raw


def string(data, key: str, where: str, default: "Optional[str]" = None, choices=None) -> str:
    """``data[key]``: a string, one of ``choices`` when given (``default`` when absent)."""
    name = field_name(where, key)
    if key in data:
        raw = data[key]
    elif default is not None:
        raw = default
    else:
        raise ValueError(f"{name}: missing")
    if not isinstance(raw, str):
        raise ValueError(f"{name}: expected a string, got {shown_json(raw)}")
    if choices is not None and raw not in choices:
        raise ValueError(f"{name}: {shown_json(raw)} is not one of {', '.join(choices)}")
    return raw


def cpulist(data, key: str, where: str, default: "Optional[str]" = None) -> "CPUSet":
    """``data[key]``: a cpulist (every id below :data:`pynuma.limits.MAX_CPUS`)."""
    raw = data.get(key, default)
    if type(raw) is str:
        try:
            return _parse_cpus(raw)
        except ValueError:
            pass  # said below, naming the field
    name = field_name(where, key)
    if raw is None:
        raise ValueError(f"{name}: missing" if key not in data else f"{name}: expected a cpulist, got null")
    if not isinstance(raw, str):
        raise ValueError(f"{name}: expected a cpulist string, got {shown_json(raw)}")
    try:
        return CPUSet.parse(raw)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None


def hugepage_size_kb(text, where: str) -> int:
    """A ``hugepages`` key: a page size in kB, as canonical decimal text (``"2048"``)."""
    from .limits import MAX_HUGEPAGE_KB

    if not (isinstance(text, str) and text.isascii() and text.isdigit() and len(text) <= 12
            and str(int(text)) == text and 0 < int(text) <= MAX_HUGEPAGE_KB):
        raise ValueError(f"{where}: expected a page size in kB from 1 to {MAX_HUGEPAGE_KB}")
    return int(text)
