"""JSON text as ``pynuma topology --json`` and ``--save`` write it.

The text ``json.dumps(value, indent=2, ensure_ascii=False)`` would give,
except that a container holding only scalars takes one line (a CPU, a cache,
a matrix row) and lone surrogates (from undecodable file names) are escaped,
so the text can always be written as UTF-8.  Written here rather than with
``json`` because importing ``json`` (and the ``re`` it pulls in) costs more
than the whole command's start-up budget.
"""
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _quote(s: str) -> str:
    """A JSON string as json writes it with ``ensure_ascii=False``, lone surrogates escaped too."""
    if s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'
    out = []
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch < " " or "\ud800" <= ch <= "\udfff":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _float(v: float) -> str:
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"cannot encode {v!r} as JSON")
    return repr(v)


# by exact type: the usual scalars in one dictionary lookup (subclasses take the slow path)
_WRITERS = {str: _quote, int: int.__repr__, float: _float, bool: lambda v: "true" if v else "false",
            type(None): lambda v: "null"}


def _scalar(v) -> str:
    write = _WRITERS.get(type(v))
    if write is not None:
        return write(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, str):
        return _quote(str(v))
    if isinstance(v, float):
        return _float(float(v))
    raise TypeError(f"cannot encode {type(v).__name__} as JSON")


_keys: dict = {}  # the few record keys, quoted once


def _key(k) -> str:
    """A key as json writes it: non-string keys (numbers, booleans, None) become strings."""
    if type(k) is str:
        text = _keys.get(k)
        if text is None:
            text = _quote(k)
            if len(_keys) < 256:
                _keys[k] = text
        return text
    if isinstance(k, str):
        return _quote(str(k))
    if k is None or isinstance(k, (int, float)):  # bool is an int
        return '"' + _scalar(k) + '"'
    raise TypeError(f"cannot encode key {k!r} as JSON")


_int_repr = int.__repr__


def _scalars(values) -> "list | None":
    """The texts of ``values``, or ``None`` when one is a container (the usual types inline, no call each)."""
    out = []
    append = out.append
    for x in values:
        t = type(x)
        if t is int:
            append(_int_repr(x))
        elif t is str:
            append(_quote(x))
        elif x is None:
            append("null")
        elif t is bool:
            append("true" if x else "false")
        elif isinstance(x, (dict, list, tuple)):
            return None
        else:
            append(_scalar(x))
    return out


def _encode(v, indent: int, level: int, out: list) -> None:
    if isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        flat = _scalars(v.values())
        if flat is not None:
            keys = _keys
            out.append("{" + ", ".join([(keys.get(k) or _key(k)) + ": " + x for k, x in zip(v, flat)]) + "}")
        else:
            pad = "\n" + " " * (indent * (level + 1))
            out.append("{")
            for i, (k, item) in enumerate(v.items()):
                out.append(pad if i == 0 else "," + pad)
                out.append(_key(k) + ": ")
                _encode(item, indent, level + 1, out)
            out.append("\n" + " " * (indent * level) + "}")
    elif isinstance(v, (list, tuple)):
        if not v:
            out.append("[]")
            return
        flat = _scalars(v)
        if flat is not None:
            out.append("[" + ", ".join(flat) + "]")  # matrix rows, id lists: one line
        else:
            pad = "\n" + " " * (indent * (level + 1))
            out.append("[")
            for i, item in enumerate(v):
                out.append(pad if i == 0 else "," + pad)
                _encode(item, indent, level + 1, out)
            out.append("\n" + " " * (indent * level) + "]")
    else:
        out.append(_scalar(v))


def dumps(value, indent: int = 2) -> str:
    """JSON text of ``value`` (dicts, lists, tuples, str, int, float, bool, None), indented by ``indent``.

    Containers holding only scalars take one line.
    """
    if indent < 0:
        raise ValueError("indent must be >= 0")
    out: list = []
    _encode(value, indent, 0, out)
    return "".join(out)
