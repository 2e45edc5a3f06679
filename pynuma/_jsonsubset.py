"""Small, plain JSON documents read without importing ``json``.

``import json`` brings in ``re`` and ``enum`` (7-10 ms on a small VM), a
third of a command's start-up budget, for files like the kubelet's
checkpoints::

    {"policyName":"static","defaultCpuSet":"0-1","entries":{},"checksum":1234}

:func:`loads` is ``json.loads``: :func:`read_plain` reads a strict subset --
objects, arrays, strings without escapes or control characters, integers,
``true``, ``false``, ``null`` and JSON's whitespace, nested at most
:data:`MAX_DEPTH` deep -- and returns what ``json.loads`` returns for it;
anything else (escapes, fractions and exponents, very long numbers,
malformed text) goes to ``json``, so answers and error messages stay
``json``'s.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Any, Callable, List, Optional, Tuple

#: deeper documents go to ``json`` (whose own limit is the interpreter's recursion limit)
MAX_DEPTH = 64
#: longer digit runs go to ``json`` (Python refuses to convert more than 4300 digits)
MAX_DIGITS = 4000

_SPACE = " \t\n\r"
_WORDS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}


class _Outside(Exception):
    """Not in the subset: ``json`` decides."""


def loads(text: str, object_pairs_hook: "Optional[Callable[[List[Tuple[str, Any]]], Any]]" = None) -> "Any":
    """``json.loads(text, object_pairs_hook=...)``: read here when the text is in the subset, else by ``json``
    (which raises its own ``ValueError`` or ``RecursionError`` for a bad text)."""
    value = read_plain(text, object_pairs_hook)
    if value is None:  # outside the subset (or the text is "null": json says None again)
        import json

        value = json.loads(text, object_pairs_hook=object_pairs_hook)
    return value


def loads_as_go(text: str, object_pairs_hook: "Optional[Callable[[List[Tuple[str, Any]]], Any]]" = None) -> "Any":
    """:func:`loads`, with strings as Go's ``encoding/json`` decodes them: an escape naming half of a
    UTF-16 surrogate pair (``"\\ud800"``) is U+FFFD, never a lone surrogate no encoder can write."""
    value = loads(text, object_pairs_hook)
    return _replace_surrogates(value) if "\\u" in text else value


def _replace_surrogates(value: "Any") -> "Any":
    if isinstance(value, str):
        if value.isascii():
            return value
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):  # list subclasses (an object kept as pairs) keep their type
        return type(value)(_replace_surrogates(v) for v in value)
    return value


def read_plain(text: str, object_pairs_hook: "Optional[Callable[[List[Tuple[str, Any]]], Any]]" = None) -> "Any":
    """What ``json.loads`` returns for a text in the subset, else ``None``."""
    try:
        value, at = _value(text, _skip(text, 0), object_pairs_hook, 0)
    except (_Outside, IndexError):
        return None
    return value if _skip(text, at) == len(text) else None


def _skip(text: str, at: int) -> int:
    end = len(text)
    while at < end and text[at] in _SPACE:
        at += 1
    return at


def _value(text: str, at: int, hook, depth: int) -> "Tuple[Any, int]":
    c = text[at]
    if c == '"':
        return _string(text, at)
    if c == "{":
        return _object(text, at, hook, depth + 1)
    if c == "[":
        return _array(text, at, hook, depth + 1)
    if c == "-" or "0" <= c <= "9":
        return _integer(text, at)
    word = _WORDS.get(c)
    if word is not None and text.startswith(word[0], at):
        return word[1], at + len(word[0])
    raise _Outside()


def _string(text: str, at: int) -> "Tuple[str, int]":
    end = text.find('"', at + 1)
    if end < 0:
        raise _Outside()
    body = text[at + 1:end]
    if "\\" in body or (not body.isprintable() and any(ch < " " for ch in body)):
        raise _Outside()  # escapes and control characters: json's rules and messages
    return body, end + 1


def _integer(text: str, at: int) -> "Tuple[int, int]":
    start = at
    if text[at] == "-":
        at += 1
    first = at
    end = len(text)
    while at < end and "0" <= text[at] <= "9":
        at += 1
    digits = at - first
    if digits == 0 or digits > MAX_DIGITS or (digits > 1 and text[first] == "0"):
        raise _Outside()
    if at < end and text[at] in ".eE":
        raise _Outside()  # a float: json's conversion
    return int(text[start:at]), at


def _object(text: str, at: int, hook, depth: int) -> "Tuple[Any, int]":
    def pair(text: str, at: int) -> "Tuple[Tuple[str, Any], int]":
        if text[at] != '"':
            raise _Outside()
        key, at = _string(text, at)
        at = _skip(text, at)
        if text[at] != ":":
            raise _Outside()
        value, at = _value(text, _skip(text, at + 1), hook, depth)
        return (key, value), at

    pairs, at = _members(text, at, "}", pair, depth)
    return (hook(pairs) if hook is not None else dict(pairs)), at


def _array(text: str, at: int, hook, depth: int) -> "Tuple[list, int]":
    return _members(text, at, "]", lambda text, at: _value(text, at, hook, depth), depth)


def _members(text: str, at: int, close: str, member, depth: int) -> "Tuple[list, int]":
    """The members of an object or array opened at ``at``, each read by ``member``, and where it ends."""
    if depth > MAX_DEPTH:
        raise _Outside()
    items = []
    at = _skip(text, at + 1)
    if text[at] == close:
        return items, at + 1
    while True:
        item, at = member(text, at)
        items.append(item)
        at = _skip(text, at)
        if text[at] == close:
            return items, at + 1
        if text[at] != ",":
            raise _Outside()
        at = _skip(text, at + 1)
