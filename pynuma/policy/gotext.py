"""How Go's ``strconv`` errors print their input, for messages that match the kubelet's."""
from __future__ import annotations

_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}


def strconv_quote(text: str) -> str:
    """Go's ``strconv.Quote`` (as ``strconv`` errors print their input), cut when long: one short line."""
    out = []
    for ch in text[:40] if len(text) > 48 else text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif "\udc80" <= ch <= "\udcff":  # an undecodable byte, kept by surrogateescape
            out.append(f"\\x{ord(ch) - 0xdc00:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif ch < "\x80":
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ch <= "\uffff" else f"\\U{ord(ch):08x}")
    quoted = '"' + "".join(out) + '"'
    return quoted if len(text) <= 48 else f'{quoted[:-1]}..." ({len(text)} characters)'
