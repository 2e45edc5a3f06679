"""What every fuzz target (``tests/fuzz/fuzz_<name>.py``) shares.

A target's ``check(data: bytes)`` feeds one input to a parser and raises
``AssertionError`` on a finding: an exception other than the parser's
documented bad-input error, native and pure disagreeing (in answer or in
error text), or a round trip that does not give back what it started from.
Which errors are documented differs by layer: the text parsers
(``pynuma.parse``, the bitmap and ACPI twins) raise ``ValueError``; the
loaders the CLI calls (quantities, eviction settings, checkpoints, input
files) raise a ``PynumaError`` (``InputError``, ``ParseError``,
``CheckpointError``), the one kind the CLI turns into a one-line message.

This module imports nothing from pynuma at import time, so that a target run
as a script can instrument every pynuma module it loads (:func:`fuzz_main`).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple, Type

CORPUS = Path(__file__).resolve().parent / "corpus"
PROJECT = Path(__file__).resolve().parents[2]

Errors = Tuple[Type[BaseException], ...]
#: the longest error message an input may cause: messages show long values cut (40 characters
#: of a value, each up to 10 in repr, twice, and the words around them fit)
MAX_MESSAGE = 1000


def pynuma_error() -> Errors:
    from pynuma.errors import PynumaError

    return (PynumaError,)


def parser_errors() -> Errors:
    """What a text parser may raise on bad text: ``ValueError`` (``InputError`` is one)."""
    from pynuma.errors import PynumaError

    return (ValueError, PynumaError)


def outcome(fn: Callable, *args, errors: Optional[Errors] = None):
    """``("ok", value)`` or ``("error", type name, message)``; any other exception is a finding.

    A documented error must also be short: it names the input, cut when long
    (the CLI prints it as one line, control characters escaped).
    """
    try:
        return ("ok", fn(*args))
    except errors or parser_errors() as err:
        message = str(err)
        assert len(message) <= MAX_MESSAGE, \
            f"{getattr(fn, '__name__', fn)}{args!r:.200}: error of {len(message)} characters: {message!r:.400}"
        return ("error", type(err).__name__, message)
    except AssertionError:
        raise
    except Exception as err:  # TypeError, IndexError, RecursionError, MemoryError, ...: findings
        raise AssertionError(f"{getattr(fn, '__name__', fn)}{args!r:.200} raised "
                             f"{type(err).__name__}: {str(err)[:400]}") from err


def twins(area: str, name: str, *args, errors: Optional[Errors] = None):
    """The outcome of ``name(*args)`` on every implementation of ``area``; native and pure must agree."""
    from pynuma import _impl

    mods = _impl.implementations(area)
    outcomes = {kind: outcome(getattr(mod, name), *args, errors=errors) for kind, mod in mods.items()}
    if len(outcomes) == 2:
        assert outcomes["native"] == outcomes["pure"], f"{area}.{name}{args!r:.200}: {outcomes!r:.600}"
    return outcomes["pure"]


def text(data: bytes) -> str:
    """Bytes as a file's text is read (UTF-8, undecodable bytes kept as surrogates)."""
    return data.decode("utf-8", "surrogateescape")


def acpi_table(signature: bytes, body: bytes) -> bytes:
    """``body`` behind a valid 36-byte ACPI header (length and checksum right), so inputs reach the entries."""
    header = bytearray(signature + (36 + len(body)).to_bytes(4, "little") + b"\x01\x00PYNUMAFUZZTBL "
                       + b"\x01\x00\x00\x00PNMA\x01\x00\x00\x00")
    header[9] = -(sum(header) + sum(body)) & 0xFF
    return bytes(header) + body


class Tree:
    """A small fake root, built once per process and reused: a target replaces one file by the input."""

    def __init__(self, build: Callable[[str], None]) -> None:
        self.dir = tempfile.mkdtemp(prefix="pynuma-fuzz-")
        build(self.dir)

    def put(self, rel: str, data: bytes) -> None:
        with open(os.path.join(self.dir, rel), "wb") as f:
            f.write(data)


_trees: Dict[str, Tree] = {}


def tree(name: str, build: Callable[[str], None]) -> Tree:
    if name not in _trees:
        _trees[name] = Tree(build)
    return _trees[name]


def with_file(data: bytes, suffix: str, fn: Callable[[str], None]) -> None:
    """``fn(path)`` with ``data`` in a file of its own (loaders that take a path)."""
    fd, path = tempfile.mkstemp(prefix="pynuma-fuzz-", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        fn(path)
    finally:
        os.unlink(path)


def fuzz_main(check: Callable[[bytes], None], name: str) -> None:
    """Run ``check`` under atheris (libFuzzer flags and corpus dirs from ``sys.argv``).

    pynuma is imported, and ``check`` run once on every seed, inside
    ``atheris.instrument_imports`` (where this atheris has it), so that the
    modules the target loads lazily are instrumented too.
    """
    import atheris

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    instrument = getattr(atheris, "instrument_imports", None)
    if instrument is not None:
        with instrument(include=["pynuma"]):
            import pynuma  # noqa: F401
            for seed in [b""] + [p.read_bytes() for p in sorted((CORPUS / name).glob("*"))]:
                try:
                    check(seed)
                except AssertionError:
                    pass  # libFuzzer replays the corpus and reports it
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()
