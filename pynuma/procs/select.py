"""Who a process is (``Identity``) and which processes a listing wants (``Selector``)."""
from __future__ import annotations

from typing import NamedTuple, Optional, Pattern, Tuple

from ..errors import InputError


class Identity(NamedTuple):
    """A process's pid, command name, user (name, or uid as text on a dump), uid and command line."""

    pid: int
    name: str
    user: Optional[str]
    uid: Optional[int]
    cmdline: Tuple[str, ...]


class Selector:
    """``name``: a regular expression searched in the command name (as ``pgrep`` does); ``user``: a user
    name or numeric uid.  Both must match when both are given; neither selects every process."""

    def __init__(self, name: Optional[str] = None, user: Optional[str] = None) -> None:
        self.pattern: Optional[Pattern[str]] = None
        if name is not None:
            import re

            try:
                self.pattern = re.compile(name)
            except re.error as err:
                raise InputError(f"--name {name!r}: not a regular expression ({err})") from None
        self.user = None if user is None else str(user)

    def selects_all(self) -> bool:
        """Whether every process is accepted (no name, no user)."""
        return self.pattern is None and self.user is None

    def accepts(self, ident: Identity) -> bool:
        if self.pattern is not None and not self.pattern.search(ident.name):
            return False
        if self.user is not None and self.user != ident.user and self.user != str(ident.uid):
            return False
        return True
