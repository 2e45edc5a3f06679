"""JSON text as ``pynuma topology --json`` and ``--save`` write it (twin of ``pynuma._native_jsonout``).

``json.dumps(value, indent=2, ensure_ascii=False)``, except that a
container holding only scalars takes one line (a CPU, a cache, a matrix
row), and lone surrogates (from undecodable file names) are escaped so the
text can always be written as UTF-8.  Written here because importing
``json`` costs more than the command's start-up budget.
"""
#: records (CPUs, caches, ...) in the value's lists from which json's C encoder pays for its import
#: (~0.3 ms): it writes a record in ~4 us, the Python code below in ~11 us
C_ENCODER_FROM = 40
_c_encoder_cache: list = []


def warm_up() -> None:
    """Get ready to write a big value (imports json's C encoder ahead of time)."""
    _c_encoder()


def _c_encoder():
    """json's C encoder for flat records, or None on a Python without it (imported on first use)."""
    if not _c_encoder_cache:
        try:
            import _json  # json's C half, without json's own imports (~1 ms)

            def _unencodable(o):
                raise TypeError(f"cannot encode {type(o).__name__} as JSON")

            encoder = _json.make_encoder(None, _unencodable, _json.encode_basestring, None, ": ", ", ",
                                         False, False, False)
        except (ImportError, AttributeError, TypeError):  # another Python: the encoder below does it all
            encoder = None
        _c_encoder_cache.append(encoder)
    return _c_encoder_cache[0]


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _quote(s: str) -> str:
    """A JSON string as json writes it with ``ensure_ascii=False``; lone surrogates (from undecodable
    file names) escaped too, which json would leave raw and UTF-8 cannot carry."""
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


def _scalar(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, str):
        return _quote(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"cannot encode {v!r} as JSON")
        return repr(v)
    raise TypeError(f"cannot encode {type(v).__name__} as JSON")


def _key(k) -> str:
    """A key as json writes it: non-string keys (numbers, booleans, None) become strings."""
    if isinstance(k, str):
        return _quote(k)
    if k is None or isinstance(k, (int, float)):  # bool is an int
        return '"' + _scalar(k) + '"'
    raise TypeError(f"cannot encode key {k!r} as JSON")


_SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))


def _is_container(v) -> bool:
    return isinstance(v, (dict, list, tuple))


def _all_scalars(values) -> bool:
    """Whether no value is a container (by type first: one C-level pass for the usual records)."""
    return _SCALAR_TYPES.issuperset(map(type, values)) or not any(map(_is_container, values))


def _all_records(items) -> bool:
    """Whether every item is a non-empty dict of scalars (what :func:`_one_line` writes)."""
    scalar_types = _SCALAR_TYPES
    return all(type(item) is dict and item and scalar_types.issuperset(map(type, item.values()))
               for item in items)


def _one_line(d: dict, c_encoder) -> str:
    """A record (a non-empty dict of scalars: a CPU, a cache, a pool) on one line, as json would write it."""
    if c_encoder is not None:
        text = "".join(c_encoder(d, 0))
        if text.isascii():  # otherwise a lone surrogate may be in it: the Python writer escapes those
            return text
    return "{" + ", ".join(_key(k) + ": " + _scalar(v) for k, v in d.items()) + "}"


def _encode(v, indent: int, level: int, out: list, c_encoder) -> None:
    if isinstance(v, dict):
        if not v:
            out.append("{}")
        elif _all_scalars(v.values()):
            out.append(_one_line(v, c_encoder))
        else:
            pad = "\n" + " " * (indent * (level + 1))
            out.append("{")
            first = True
            for k, item in v.items():
                out.append(pad if first else "," + pad)
                first = False
                out.append(_key(k) + ": ")
                _encode(item, indent, level + 1, out, c_encoder)
            out.append("\n" + " " * (indent * level) + "}")
    elif isinstance(v, (list, tuple)):
        if not v:
            out.append("[]")
        elif _all_scalars(v):
            out.append("[" + ", ".join(_scalar(x) for x in v) + "]")  # matrix rows, id lists: one line
        else:
            pad = "\n" + " " * (indent * (level + 1))
            if c_encoder is not None and len(v) > 1 and _all_records(v):
                # a list of records (the CPUs, the caches) in one call of the C encoder; its "}, {"
                # separators are where the lines break, unless a string holds one too (then the count is off)
                text = "".join(c_encoder(v, 0))
                if text.isascii() and text.count("}, {") == len(v) - 1:
                    out.append("[" + pad + text[1:-1].replace("}, {", "}," + pad + "{")
                               + "\n" + " " * (indent * level) + "]")
                    return
            out.append("[")
            scalar_types = _SCALAR_TYPES
            for i, item in enumerate(v):
                out.append(pad if i == 0 else "," + pad)
                if type(item) is dict and item and scalar_types.issuperset(map(type, item.values())):
                    out.append(_one_line(item, c_encoder))  # a CPU, a cache: the usual item, without a call
                else:
                    _encode(item, indent, level + 1, out, c_encoder)
            out.append("\n" + " " * (indent * level) + "]")
    else:
        out.append(_scalar(v))


def dumps(value, indent: int = 2, c_encoder=None) -> str:
    """JSON text of ``value`` (dicts, lists, str, int, float, bool, None), indented.

    Containers holding only scalars take one line.  ``c_encoder``: whether
    json's C encoder writes the one-line records (same text, faster); by
    default, when the value's lists hold :data:`C_ENCODER_FROM` items or more.
    """
    if indent < 0:
        raise ValueError("indent must be >= 0")
    if c_encoder is None:
        lists = value.values() if isinstance(value, dict) else (value,)
        c_encoder = sum(len(v) for v in lists if isinstance(v, (list, tuple))) >= C_ENCODER_FROM
    out: list = []
    _encode(value, indent, 0, out, _c_encoder() if c_encoder else None)
    return "".join(out)
