"""Pieces every command shares: the parser, root/topology options, JSON output.

Nothing here imports argparse or json at start-up: :func:`parser` records the
options and parses ordinary command lines itself (:mod:`._args`), and
:func:`print_json` writes what ``json.dumps(indent=2)`` would.
"""
from __future__ import annotations

import os
from _thread import _local

from ._streams import stderr, stdout
from ._args import REMAINDER, Parser, empty_path  # noqa: F401 - REMAINDER is argparse.REMAINDER for the commands

_parser_class: list = []
# per thread (command lines run in several threads of one program at once): the prog of the innermost
# parser that ran ("pynuma hints merge"), which errors raised after parsing name
_running = _local()


def _note_running(prog: str) -> None:
    # a subcommand's parser runs inside its parent's parse, so the last one to start is the innermost
    _running.prog = prog


def _real_parser_class():
    """argparse's parser, reporting usage errors as one line and exit status 2 (imported when needed)."""
    if not _parser_class:
        import argparse

        class _Parser(argparse.ArgumentParser):
            def parse_known_args(self, args=None, namespace=None):
                _note_running(self.prog)
                namespace, rest = super().parse_known_args(args, namespace)
                for action in self._actions:
                    if empty_path(action.metavar, getattr(namespace, action.dest, None), action.default):
                        name = "/".join(action.option_strings) or action.metavar
                        self.error(f"argument {name}: an empty path names no file or directory")
                return namespace, rest

            def error(self, message):  # noqa: D401 - argparse API
                self.exit(2, f"{self.prog}: error: {message}\n")

            def _print_message(self, message, file=None):
                # argparse drops a failed write: help sent to a full disk would then "succeed" (exit 0)
                if message:
                    (file or stderr()).write(message)

        _parser_class.append(_Parser)
    return _parser_class[0]


def error_prog(command: str) -> str:
    """What an error of ``pynuma COMMAND`` is prefixed with: the full subcommand when one was parsed."""
    base = f"pynuma {command}"
    running = getattr(_running, "prog", None)
    return running if running and (running == base or running.startswith(base + " ")) else base


def forget_running() -> None:
    """Start a new command line: no subcommand parsed yet."""
    _running.prog = None


def parser(command: str, description: str) -> Parser:
    """A parser for ``pynuma COMMAND`` (the argparse API; argparse itself only when needed)."""
    return Parser(prog=f"pynuma {command}", description=description, real_class=_real_parser_class,
                  on_parse=_note_running)


def add_root(p: Parser) -> None:
    """``--root DIR``: read a saved dump instead of the live host."""
    p.add_argument("--root", metavar="DIR", default="/",
                   help="directory playing the part of / (a saved /sys + /proc dump); default: the live host")


def add_topology_source(p: Parser, cpus_only: bool = True) -> None:
    """``--topology FILE`` or ``--root DIR`` (not both): where the topology comes from.

    ``cpus_only``: the command needs only the CPU topology, so a kubelet-style
    CPU topology JSON will do; otherwise only a saved ``pynuma topology --json``."""
    src = p.add_mutually_exclusive_group()
    src.add_argument("--topology", metavar="FILE",
                     help="saved 'pynuma topology --json' or a kubelet-style CPU topology JSON" if cpus_only
                     else "saved 'pynuma topology --json' (a kubelet-style CPU topology has no memory per node)")
    add_root(src)


def add_json(p: Parser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


# C0 and C1 controls, DEL, and the invisible marks that reorder or split text (bidi overrides, line
# and paragraph separators): a name read from a machine or a file must never drive the terminal
_CONTROL = "".join(map(chr, [*range(0x20), *range(0x7f, 0xa0), 0x200e, 0x200f, *range(0x2028, 0x202f),
                             *range(0x2066, 0x206a)]))
_ESCAPES = {ord(c): f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" for c in _CONTROL}
# bytes that are not UTF-8, kept by surrogateescape as U+DC80..U+DCFF: written as the byte they were
_ESCAPES.update({0xdc00 + byte: f"\\x{byte:02x}" for byte in range(0x80, 0x100)})
_ESCAPES_KEEP_LINES = {k: v for k, v in _ESCAPES.items() if k != 0x0a}


def printable(text: str, lines: bool = False) -> str:
    """``text`` with control characters and non-UTF-8 bytes written as ``\\xNN`` (``lines``: newlines kept)."""
    return text.translate(_ESCAPES_KEEP_LINES if lines else _ESCAPES)


def print_json(obj) -> None:
    """Write ``obj`` as JSON to stdout, followed by a newline (``json.dumps(obj, indent=2)``)."""
    stdout().write(json_text(obj))
    stdout().write("\n")


def json_text(obj, indent: int = 2) -> str:
    """``json.dumps(obj, indent=indent)``, character for character, without importing json.

    json writes indented output with its Python encoder (the C one cannot indent), and
    importing json costs ``re``; this is that encoder's logic, with json's C string
    escaper.  Where the C half is missing, json itself is used.
    """
    try:
        from _json import encode_basestring_ascii as quote
    except ImportError:  # pragma: no cover - every CPython has it
        import json

        return json.dumps(obj, indent=indent)
    out: list = []
    _encode(obj, quote, " " * indent, 0, out)
    return "".join(out)


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o in (float("inf"), float("-inf")):
        return "Infinity" if o > 0 else "-Infinity"
    return float.__repr__(o)


def _encode(o, quote, pad: str, level: int, out: list) -> None:
    if isinstance(o, str):
        out.append(quote(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(_float(o))
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        inner = "\n" + pad * (level + 1)
        out.append("[")
        for i, item in enumerate(o):
            out.append(inner if i == 0 else "," + inner)
            _encode(item, quote, pad, level + 1, out)
        out.append("\n" + pad * level + "]")
    elif isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = "\n" + pad * (level + 1)
        out.append("{")
        first = True
        for key, value in o.items():
            if isinstance(key, str):
                pass
            elif isinstance(key, float):
                key = _float(key)
            elif key is True:
                key = "true"
            elif key is False:
                key = "false"
            elif key is None:
                key = "null"
            elif isinstance(key, int):
                key = int.__repr__(key)
            else:
                raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
            out.append(inner if first else "," + inner)
            first = False
            out.append(quote(key) + ": ")
            _encode(value, quote, pad, level + 1, out)
        out.append("\n" + pad * level + "}")
    else:
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def check_user(p, user, root: str) -> None:
    """A usage error (exit 2) for ``--user NAME`` that names no user of the live host (a dump has no user
    database: its users are uids, and any name there simply matches nothing)."""
    if user is None or user.isdigit() or os.path.realpath(root) != "/":
        return
    import pwd

    try:
        pwd.getpwnam(user)
    except KeyError:
        p.error(f"argument --user: no user named {user!r} on this host")
