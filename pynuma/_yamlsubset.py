"""The plain YAML of Kubernetes manifests, read without importing PyYAML.

Importing ``yaml`` costs a command about 45 ms on a small machine, more than
its whole start-up budget, for files like::

    apiVersion: v1
    kind: Pod
    metadata: {name: web, labels: {app: web}}
    spec:
      containers:
      - name: app
        resources:
          limits: {cpu: "2", memory: 1Gi}

:func:`load_all` reads a strict subset -- block mappings and sequences,
one-line flow mappings and sequences of scalars, plain and simply-quoted
scalars, full-line comments, ``---`` between documents -- and returns what
``yaml.safe_load_all`` returns for it.  Anything else (anchors, tags, block
scalars, escapes, comments after values, numbers in other notations, odd
indentation, malformed text) gives ``None``: the caller then asks PyYAML,
so answers and error messages stay PyYAML's.  Plain scalars are resolved
only where YAML 1.1's rules are unambiguous without PyYAML's regexes:
decimal integers, its boolean and null words, and words that start with a
letter (or digits followed by letters, like ``1Gi``).
"""
_BOOLS = {"yes": True, "Yes": True, "YES": True, "true": True, "True": True, "TRUE": True, "on": True,
          "On": True, "ON": True, "no": False, "No": False, "NO": False, "false": False, "False": False,
          "FALSE": False, "off": False, "Off": False, "OFF": False}
_NULLS = ("null", "Null", "NULL", "~")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-+")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")


class _Unsupported(Exception):
    """Outside the subset: PyYAML decides."""


def load_all(text: str):
    """``list(yaml.safe_load_all(text))`` for texts in the subset, else None."""
    try:
        return [_document(lines) for lines in _documents(text)]
    except _Unsupported:
        return None
    except RecursionError:  # absurdly deep nesting: PyYAML's problem
        return None


def _documents(text: str) -> list:
    """Each document's meaningful lines as (indent, content)."""
    if not text.isascii() or not text.replace("\n", "").isprintable():  # tabs, CRs, controls, non-ASCII
        raise _Unsupported
    docs: list = [[]]
    explicit_start = False
    for line in text.split("\n"):
        stripped = line.strip(" ")
        if not stripped or stripped[0] == "#":
            continue
        if line.startswith("---"):
            if line.rstrip(" ") != "---":
                raise _Unsupported
            if docs[-1] or explicit_start:
                docs.append([])
            explicit_start = True
            continue
        if line[0] in "%." and (line.startswith("...") or line[0] == "%") or "#" in line:
            raise _Unsupported
        docs[-1].append((len(line) - len(line.lstrip(" ")), stripped))
    if not explicit_start and not docs[0]:
        return []  # nothing but comments and blank lines: no document at all
    return docs


def _document(lines: list):
    if not lines:
        return None
    value, end = _node(lines, 0, lines[0][0])
    if end != len(lines):
        raise _Unsupported
    return value


def _node(lines: list, i: int, indent: int):
    """The block node starting at line ``i`` (at ``indent``): (value, next line)."""
    col, content = lines[i]
    if col != indent:
        raise _Unsupported
    if content == "-" or content.startswith("- "):
        return _sequence(lines, i, indent)
    if _entry(content) is not None:
        return _mapping(lines, i, indent)
    return _inline(content), i + 1


def _entry(content: str):
    """(key, rest) when ``content`` is a ``key: value`` / ``key:`` line, else None."""
    if content[0] in "{[":
        return None  # a flow collection, not a block mapping entry
    if content.endswith(":"):
        key, rest = content[:-1], ""
    else:
        key, sep, rest = content.partition(": ")
        if not sep:
            return None
    if not key or ":" in key:
        raise _Unsupported
    return _scalar(key.rstrip(" "), key=True), rest.strip(" ")


def _mapping(lines: list, i: int, indent: int):
    out: dict = {}
    while i < len(lines):
        col, content = lines[i]
        if col < indent:
            break
        if col > indent:
            raise _Unsupported
        entry = _entry(content)
        if entry is None:
            raise _Unsupported
        key, rest = entry
        if rest:
            out[key] = _inline(rest)
            i += 1
            continue
        i += 1
        if i < len(lines) and lines[i][0] > indent:
            out[key], i = _node(lines, i, lines[i][0])
        elif i < len(lines) and lines[i][0] == indent and (lines[i][1] == "-" or lines[i][1].startswith("- ")):
            out[key], i = _sequence(lines, i, indent)  # "key:" then "- item" at the key's own indent
        else:
            out[key] = None
    return out, i


def _sequence(lines: list, i: int, indent: int):
    out: list = []
    while i < len(lines):
        col, content = lines[i]
        if col < indent or col == indent and not (content == "-" or content.startswith("- ")):
            break
        if col > indent:
            raise _Unsupported
        item = content[1:].lstrip(" ")
        if not item:
            i += 1
            if i < len(lines) and lines[i][0] > indent:
                value, i = _node(lines, i, lines[i][0])
            else:
                value = None
            out.append(value)
            continue
        if item == "-" or item.startswith("- ") or item[0] in "?:":
            raise _Unsupported
        item_col = col + len(content) - len(item)
        if _entry(item) is not None:
            # the item is a mapping whose first entry shares the dash's line
            sub = [(item_col, item)]
            j = i + 1
            while j < len(lines) and lines[j][0] > indent:
                sub.append(lines[j])
                j += 1
            value, end = _mapping(sub, 0, item_col)
            if end != len(sub):
                raise _Unsupported
            out.append(value)
            i = j
        else:
            out.append(_inline(item))
            i += 1
            if i < len(lines) and lines[i][0] > indent:
                raise _Unsupported
    return out, i


def _inline(text: str):
    """A value written on one line: flow mapping, flow sequence or scalar."""
    if text[0] == "{":
        if text[-1] != "}":
            raise _Unsupported
        out = {}
        for item in _flow_items(text[1:-1]):
            key, sep, value = item.partition(": ")
            if not sep or not value.strip(" "):
                raise _Unsupported
            out[_scalar(key.strip(" "), key=True)] = _scalar(value.strip(" "))
        return out
    if text[0] == "[":
        if text[-1] != "]":
            raise _Unsupported
        return [_scalar(item.strip(" ")) for item in _flow_items(text[1:-1])]
    return _scalar(text)


def _flow_items(body: str) -> list:
    if not body.strip(" "):
        return []
    if any(ch in body for ch in "{}[]"):
        raise _Unsupported
    items = body.split(",")
    if any(not item.strip(" ") for item in items):
        raise _Unsupported
    return items


def _scalar(text: str, key: bool = False):
    """A plain or quoted scalar, resolved as YAML 1.1 (PyYAML's SafeLoader) would."""
    if not text:
        raise _Unsupported
    first = text[0]
    if first in "\"'":
        if len(text) < 2 or text[-1] != first or first in text[1:-1] or "\\" in text:
            raise _Unsupported
        return text[1:-1]
    if first in _LETTERS or first in "-+" and len(text) > 1 and text[1] in _LETTERS or text[:2] == "--":
        # a sign not followed by a digit or a dot starts no number: --fast, -x
        if not (_WORD.issuperset(text.replace(" ", "")) and "  " not in text and text[-1] != " "):
            raise _Unsupported
        if text in _BOOLS:
            return _BOOLS[text]
        if text in _NULLS:
            return None
        return text
    if first in _DIGITS and _WORD.issuperset(text):
        if first == "0" and text != "0":  # YAML 1.1 octal, 0x hex, 0b binary
            raise _Unsupported
        if _DIGITS.issuperset(text):
            if len(text) > 18:  # beyond int64: PyYAML decides (and the caller reports a too-long number)
                raise _Unsupported
            return int(text)
        digits = len(text) - len(text.lstrip("0123456789"))
        if _LETTERS.issuperset(text[digits:]):  # 1Gi, 500m, 30s: no int, float or timestamp form
            return text
    raise _Unsupported
