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

from .errors import InputError, ParseError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Any, List


def read_text(path: str) -> str:
    """The file's text; ``InputError`` if it cannot be read, ``ParseError`` if it is not UTF-8."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as err:
        raise InputError(f"{path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ParseError(path, f"not UTF-8 text: {err}") from None


# what a JSON text can start with after whitespace (json also reads NaN and Infinity)
_JSON_START = frozenset('{["-0123456789tfnNI')


def _may_be_json(text: str) -> bool:
    """False when json.loads would fail at the first character (so json need not be imported)."""
    first = text.lstrip(" \t\n\r")[:1]
    return bool(first) and first in _JSON_START


def load_json(path: str) -> Any:
    """The file's JSON value; ``ParseError`` naming it when it is not JSON."""
    text = read_text(path)
    import json

    try:
        return json.loads(text)
    except ValueError as err:
        raise ParseError(path, f"not JSON: {err}") from None


def _yaml_error(path: str, err: Exception) -> ParseError:
    return ParseError(path, f"malformed YAML: {str(err).splitlines()[0]}")


def load_yaml(path: str) -> Any:
    """The file's one YAML (or JSON, a subset) document; ``ParseError`` naming it when malformed."""
    text = read_text(path)
    from ._yamlsubset import load_all

    docs = load_all(text)  # plain manifests without importing PyYAML; None: PyYAML decides
    if docs is not None and len(docs) <= 1:
        return docs[0] if docs else None
    import yaml  # lazy: only YAML beyond the plain subset pays for it

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise _yaml_error(path, err) from None


def load_items(path: str) -> List[Any]:
    """The items of a manifest file, in order: a JSON value, or every non-empty YAML document.

    A ``kind: List`` document contributes its ``items``; a JSON/YAML list
    contributes its elements; any other document is one item.
    """
    text = read_text(path)
    docs = None
    if _may_be_json(text):
        import json

        try:
            docs = [json.loads(text)]
        except ValueError:
            pass
    if docs is None:
        from ._yamlsubset import load_all

        docs = load_all(text)  # plain manifests without importing PyYAML; None: PyYAML decides
        if docs is not None:
            docs = [d for d in docs if d is not None]
    if docs is None:
        import yaml

        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
        except yaml.YAMLError as err:
            raise _yaml_error(path, err) from None
    items: List[Any] = []
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "List":
            doc = doc.get("items") or []
        items.extend(doc if isinstance(doc, list) else [doc])
    return items
