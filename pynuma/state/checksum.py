"""The kubelet's checkpoint checksum: FNV-1a-32 over a go-spew ``%#v`` dump of the object.

The kubelet hashes ``spew.ConfigState{Indent: " ", SortKeys: true,
DisableMethods: true, SpewKeys: true}.Sprintf("%#v", obj)`` of the checkpoint
struct with its checksum field set to 0.  :func:`spew` renders the same text
from plain Python values plus two markers: :class:`Typed` (``(type)value``)
and :class:`Struct` (``{Field:value ...}``), so every checkpoint kind can
describe its struct in a few lines:

>>> obj = Typed("*state.X", Struct([("Name", Typed("string", "a")), ("M", Typed("map[string]string", {"b": "1"}))]))
>>> spew(obj)
'(*state.X){Name:(string)a M:(map[string]string)map[b:1]}'
>>> fnv1a32("a")
3826002220
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Any, Iterable, Tuple, Union


FNV32_OFFSET = 0x811C9DC5
FNV32_PRIME = 0x01000193


def fnv1a32(data: Union[str, bytes]) -> int:
    """32-bit FNV-1a of ``data`` (str is hashed as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    h = FNV32_OFFSET
    for b in data:
        h = ((h ^ b) * FNV32_PRIME) & 0xFFFFFFFF
    return h


class Typed:
    """A value printed with its Go type in front: ``(type)value``."""

    __slots__ = ("type", "value")

    def __init__(self, type: str, value: Any) -> None:
        self.type, self.value = type, value


class Struct:
    """A Go struct body: ``{Field:value Field2:value2}`` (fields in declaration order)."""

    __slots__ = ("fields",)

    def __init__(self, fields: Iterable[Tuple[str, Any]]) -> None:
        self.fields = list(fields)


def _go_string(s: str) -> str:
    """``s`` as Go holds it after decoding JSON: U+FFFD for each surrogate Python kept.

    Go's decoder turns an invalid UTF-8 byte and a lone ``\\ud800`` escape into
    U+FFFD; Python keeps them as surrogates (``surrogateescape``, ``json``),
    which UTF-8 cannot encode, so the hash would fail where the kubelet's works.
    """
    if s.isascii():
        return s
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in s)
    return s


def _key_order(key: Any):
    # go-spew SortKeys: numbers numerically, strings bytewise (UTF-8 order = code point order).
    if isinstance(key, bool):
        return (0, int(key), "")
    if isinstance(key, int):
        return (1, key, "")
    return (2, 0, _go_string(str(key)))


def spew(value: Any) -> str:
    """go-spew ``%#v`` text of ``value`` (dicts as Go maps with sorted keys, ``None`` as ``<nil>``)."""
    if isinstance(value, Typed):
        return f"({value.type}){spew(value.value)}"
    if isinstance(value, Struct):
        return "{" + " ".join(f"{name}:{spew(v)}" for name, v in value.fields) + "}"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: _key_order(kv[0]))
        return "map[" + " ".join(f"{spew(k)}:{spew(v)}" for k, v in items) + "]"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(spew(v) for v in value) + "]"
    raise TypeError(f"cannot render {type(value).__name__} as go-spew text")


def checksum_of(obj: Any) -> int:
    """FNV-1a-32 of ``spew(obj)``: the kubelet's ``checksum.New`` for an object described with the markers."""
    return fnv1a32(spew(obj))
