"""Read a user-given input file (JSON or YAML) or raise an error naming it.

Every ``--topology``, ``--kubelet-config``, pod manifest, hints or stats
file goes through here, so a missing file, a non-UTF-8 file and malformed
content give the same one-line errors everywhere: :class:`InputError`
when the file cannot be read, :class:`ParseError` (an ``InputError``)
when its content does not parse.  These are user inputs, not machine
state, so they are plain paths and not read through ``FsRoot``.

>>> load_json("/nonexistent.json")
Traceback (most recent call last):
...
pynuma.errors.InputError: /nonexistent.json: No such file or directory
"""
from __future__ import annotations

import errno
import os
import stat

from .errors import InputError, ParseError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Any, List, Optional

#: The largest input file read (bytes).  A manifest of thousands of pods or a
#: kubelet checkpoint of a full node is a few MiB; ``/dev/zero`` or a sparse
#: giant file handed in by mistake must not be read until memory runs out.
MAX_INPUT_BYTES = 64 << 20
#: Deepest nesting of lists and maps accepted in a JSON or YAML input.  Real
#: manifests nest about ten deep; the parsers recurse once per level.
MAX_DEPTH = 100


def read_capped(path: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, or ``OSError`` naming it.

    Never blocks (O_NONBLOCK: a FIFO would wait for a writer forever) and
    refuses what is not a regular file (ENXIO, like the root-relative
    reader) and files longer than ``limit`` (EFBIG).
    """
    if "\0" in path:
        raise OSError(errno.EINVAL, "path holds a NUL byte", path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not stat.S_ISREG(mode):
            raise OSError(errno.ENXIO, "not a regular file (a FIFO, socket or device)", path)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB, the most an input file may hold", path)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str) -> str:
    """The file's text; ``InputError`` if it cannot be read, ``ParseError`` if it is not UTF-8."""
    try:
        raw = read_capped(path)
    except PermissionError as err:  # the file is fine; this process may not read it: operational, exit 1
        from .errors import AccessDenied

        raise AccessDenied(f"{path}: {err.strerror or err}") from None
    except OSError as err:
        raise InputError(f"{path}: {err.strerror or err}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ParseError(path, f"not UTF-8 text: {err}") from None


#: Most values a YAML input may stand for once its aliases are expanded (a plain document of any
#: size is never refused: only one whose aliases make it stand for more than it holds).
MAX_EXPANDED_VALUES = 1_000_000


def _shape_problem(value: Any) -> "Optional[str]":
    """Why a parsed value is refused, or ``None``: nested deeper than :data:`MAX_DEPTH`, holding
    itself, or (through YAML aliases) standing for more than :data:`MAX_EXPANDED_VALUES` values.

    Each distinct list or map is measured once (iteratively: no recursion to run out of), so an
    "alias bomb" is measured without being expanded.
    """
    height: dict = {}  # id -> levels of lists/maps from it down
    size: dict = {}  # id -> values it stands for, itself included
    on_path = set()
    shared = False
    stack = [(value, False)]
    while stack:
        v, measured_children = stack.pop()
        if not isinstance(v, (dict, list)):
            continue
        key = id(v)
        items = v.values() if isinstance(v, dict) else v
        if measured_children:
            kids = [x for x in items if isinstance(x, (dict, list))]
            height[key] = 1 + max((height[id(x)] for x in kids), default=0)
            size[key] = 1 + len(v) - len(kids) + sum(size[id(x)] for x in kids)
            on_path.discard(key)
            if height[key] > MAX_DEPTH:
                return f"nested more than {MAX_DEPTH} levels deep"
            continue
        if key in height:
            shared = True  # a second reference to one list or map: a YAML alias
            continue
        if key in on_path:
            return "holds itself (a YAML alias to a node that encloses it)"
        on_path.add(key)
        stack.append((v, True))
        stack.extend((x, False) for x in items if isinstance(x, (dict, list)))
    if shared and size.get(id(value), 1) > MAX_EXPANDED_VALUES:
        return f"its aliases expand it to more than {MAX_EXPANDED_VALUES:,} values"
    return None


def _lone_surrogate(value: Any) -> "Optional[str]":
    """The first string (value or key) holding half of a UTF-16 pair (``"\\ud800"``), else ``None``:
    JSON and YAML escapes can spell one, but it is no Unicode text and cannot be printed or encoded."""
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    return v
        elif isinstance(v, (dict, list)) and id(v) not in seen:
            seen.add(id(v))
            if isinstance(v, dict):
                stack.extend(v.keys())
                stack.extend(v.values())
            else:
                stack.extend(v)
    return None


def _shallow(path: str, value: Any, text: str = "") -> Any:
    problem = _shape_problem(value)
    if problem is not None:
        raise ParseError(path, problem)
    if "\\u" in text or "\\U" in text:  # only an escape can spell a lone surrogate
        bad = _lone_surrogate(value)
        if bad is not None:
            shown = bad.encode("utf-8", "backslashreplace").decode()[:60]
            raise ParseError(path, f"the string {shown} holds half of a UTF-16 surrogate pair: not Unicode text")
    return value


# what a JSON text can start with after whitespace (json also reads NaN and Infinity)
_JSON_START = frozenset('{["-0123456789tfnNI')


def _may_be_json(text: str) -> bool:
    """False when json.loads would fail at the first character (so json need not be imported)."""
    first = text.lstrip(" \t\n\r")[:1]
    return bool(first) and first in _JSON_START


def parse_json(path: str, text: str) -> Any:
    """``json.loads(text)``; ``ParseError`` naming ``path`` when it is not JSON or nests too deep."""
    import json  # here: reading YAML (or nothing) need not pay for it

    try:
        return _shallow(path, json.loads(text), text)
    except RecursionError:
        raise ParseError(path, f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as err:  # also a number of more digits than int() takes
        raise ParseError(path, f"not JSON: {err}") from None


def load_json(path: str) -> Any:
    """The file's JSON value; ``ParseError`` naming it when it is not JSON."""
    return parse_json(path, read_text(path))


def _yaml_error(path: str, err: Exception) -> ParseError:
    if isinstance(err, RecursionError):
        return ParseError(path, f"nested more than {MAX_DEPTH} levels deep")
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or getattr(err, "context", None)
    if mark is not None and problem:  # PyYAML's MarkedYAMLError: where, then what
        return ParseError(path, f"malformed YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}")
    lines = str(err).splitlines()
    return ParseError(path, f"malformed YAML: {lines[0] if lines else type(err).__name__}")


def _yaml_errors():
    import yaml  # lazy: only YAML inputs pay for it

    # ValueError/OverflowError: a scalar the resolver typed but Python cannot build (a 5,000-digit int)
    return (yaml.YAMLError, RecursionError, ValueError, OverflowError)


def load_yaml(path: str) -> Any:
    """The file's one YAML (or JSON, a subset) document; ``ParseError`` naming it when malformed."""
    text = read_text(path)
    from ._yamlsubset import load_all

    docs = load_all(text)  # plain manifests without importing PyYAML; None: PyYAML decides
    if docs is not None and len(docs) <= 1:
        return _shallow(path, docs[0] if docs else None, text)
    import yaml  # lazy: only YAML beyond the plain subset pays for it

    try:
        doc = yaml.safe_load(text)
    except _yaml_errors() as err:
        raise _yaml_error(path, err) from None
    return _shallow(path, doc, text)


def load_items(path: str) -> List[Any]:
    """The items of a manifest file, in order: a JSON value, or every non-empty YAML document.

    A ``kind: List`` document contributes its ``items``; a JSON/YAML list
    contributes its elements; any other document is one item.
    """
    text = read_text(path)
    docs = None
    json_error = None
    if _may_be_json(text):  # otherwise json.loads would fail at once: no need to import json
        import json

        try:
            docs = [json.loads(text)]
        except RecursionError:
            raise ParseError(path, f"nested more than {MAX_DEPTH} levels deep") from None
        except ValueError as err:
            json_error = err
    if docs is None:
        from ._yamlsubset import load_all

        docs = load_all(text)  # plain manifests without importing PyYAML; None: PyYAML decides
        if docs is not None:
            docs = [d for d in docs if d is not None]
    if docs is None:
        import yaml

        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
        except _yaml_errors() as err:
            if json_error is not None and path.endswith(".json"):  # meant as JSON: JSON's words
                raise ParseError(path, f"not JSON: {json_error}") from None
            raise _yaml_error(path, err) from None
    docs = [_shallow(path, d, text) for d in docs]
    items: List[Any] = []
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "List":
            doc = doc.get("items") or []
        items.extend(doc if isinstance(doc, list) else [doc])
    return items
