"""Pieces every command shares: the parser, root/topology options, JSON output."""
from __future__ import annotations

import argparse
import json
import sys


# the prog of the innermost parser that ran ("pynuma hints merge"): errors raised after parsing name it
_running = None


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def parse_known_args(self, args=None, namespace=None):
        global _running
        # a subcommand's parser runs inside its parent's parse, so the last one to start is the innermost
        _running = self.prog
        return super().parse_known_args(args, namespace)

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def error_prog(command: str) -> str:
    """What an error of ``pynuma COMMAND`` is prefixed with: the full subcommand when one was parsed."""
    base = f"pynuma {command}"
    running = _running
    return running if running and (running == base or running.startswith(base + " ")) else base


def forget_running() -> None:
    """Start a new command line: no subcommand parsed yet."""
    global _running
    _running = None


def parser(command: str, description: str) -> argparse.ArgumentParser:
    """A parser for ``pynuma COMMAND``."""
    return _Parser(prog=f"pynuma {command}", description=description)


def add_root(p: argparse.ArgumentParser) -> None:
    """``--root DIR``: read a saved dump instead of the live host."""
    p.add_argument("--root", metavar="DIR", default="/",
                   help="directory playing the part of / (a saved /sys + /proc dump); default: the live host")


def add_topology_source(p: argparse.ArgumentParser) -> None:
    """``--topology FILE`` or ``--root DIR`` (not both): where the CPU topology comes from."""
    src = p.add_mutually_exclusive_group()
    src.add_argument("--topology", metavar="FILE",
                     help="saved 'pynuma topology --json' or a kubelet-style CPU topology JSON")
    add_root(src)


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def print_json(obj) -> None:
    """Write ``obj`` as JSON to stdout, followed by a newline."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False))
    sys.stdout.write("\n")
