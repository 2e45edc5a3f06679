"""Hugepage settings on the kernel command line (``/proc/cmdline``).

>>> cl = parse_cmdline("default_hugepagesz=1G hugepagesz=1G hugepages=0:2,1:4 hugepagesz=2M hugepages=512")
>>> cl.default_size_kb, cl.pools[1048576].per_node, cl.pools[2048].count
(1048576, {0: 2, 1: 4}, 512)

Rules (Documentation/admin-guide/mm/hugetlbpage.rst): ``hugepagesz=`` selects
the size the following ``hugepages=`` applies to; a ``hugepages=`` before any
``hugepagesz=`` applies to the default size; ``hugepages=`` takes a count or a
per-node list ``node:count,...``; ``default_hugepagesz=`` sets the default
size.  Everything after `` -- `` belongs to init and is ignored.
"""
from __future__ import annotations

from .._dataclass import dataclass, field
from ..parse import ascii_uint

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, List, Optional, Tuple


CMDLINE = "/proc/cmdline"
_SUFFIX = {"k": 1, "m": 1 << 10, "g": 1 << 20, "t": 1 << 30, "p": 1 << 40, "e": 1 << 50}


@dataclass
class CmdlinePool:
    """What the command line asks for one size: a count, or counts per node."""

    count: Optional[int] = None
    per_node: Dict[int, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.count if self.count is not None else sum(self.per_node.values())


@dataclass
class CmdlineHugepages:
    """Parsed hugepage options.  ``pools`` key ``None`` = "the default size" (not named on the line)."""

    default_size_kb: Optional[int] = None
    pools: Dict[Optional[int], CmdlinePool] = field(default_factory=dict)
    sizes: List[int] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)

    def resolved(self, kernel_default_kb: Optional[int]) -> Dict[int, CmdlinePool]:
        """Pools keyed by size, the "default size" entry moved to the actual default size."""
        out = {k: v for k, v in self.pools.items() if k is not None}
        default = self.default_size_kb or kernel_default_kb
        if None in self.pools and default is not None:
            out.setdefault(default, self.pools[None])
        return out


def parse_size_kb(text: str) -> int:
    """A kernel ``memparse`` size (``2M``, ``1G``, ``2048k``, bytes) in kB; ``ValueError`` when bad."""
    s = text.strip()
    if not s:
        raise ValueError("empty size")
    unit = 1
    if s[-1].lower() in _SUFFIX:
        unit = _SUFFIX[s[-1].lower()] * 1024
        s = s[:-1]
    if not s.isdigit() or not s.isascii():
        raise ValueError(f"bad size {text!r}")
    nbytes = int(s) * unit
    if nbytes % 1024 or nbytes == 0:
        raise ValueError(f"size {text!r} is not a positive multiple of 1 KiB")
    return nbytes // 1024


def split_params(cmdline: str) -> List[Tuple[str, Optional[str]]]:
    """``(name, value)`` pairs of a kernel command line; double quotes group, ``--`` ends it."""
    params: List[Tuple[str, Optional[str]]] = []
    word, quoted, words = [], False, []
    for ch in cmdline.strip():
        if ch == '"':
            quoted = not quoted
        elif ch.isspace() and not quoted:
            if word:
                words.append("".join(word))
                word = []
        else:
            word.append(ch)
    if word:
        words.append("".join(word))
    for w in words:
        if w == "--":
            break
        name, eq, value = w.partition("=")
        params.append((name, value if eq else None))
    return params


def _parse_count(value: str) -> CmdlinePool:
    if ":" not in value:
        if ascii_uint(value) is None:
            raise ValueError(f"hugepages={value}: not a count")
        return CmdlinePool(count=int(value))
    per_node: Dict[int, int] = {}
    for item in value.split(","):
        node, sep, count = item.partition(":")
        if not sep or ascii_uint(node, 9) is None or ascii_uint(count) is None:
            raise ValueError(f"hugepages={value}: expected node:count[,node:count...]")
        per_node[int(node)] = int(count)
    return CmdlinePool(per_node=per_node)


def parse_cmdline(text: str) -> CmdlineHugepages:
    """Hugepage options of a command line; bad items are skipped with a warning (as the kernel does)."""
    out = CmdlineHugepages()
    current: Optional[int] = None
    for name, value in split_params(text):
        if name not in ("hugepagesz", "hugepages", "default_hugepagesz"):
            continue
        if value is None:
            out.warnings.append(f"{name}: no value")
            continue
        try:
            if name == "hugepages":
                out.pools[current] = _parse_count(value)
            elif name == "hugepagesz":
                current = parse_size_kb(value)
                if current not in out.sizes:
                    out.sizes.append(current)
            else:
                out.default_size_kb = parse_size_kb(value)
        except ValueError as err:
            out.warnings.append(f"{name}={value}: {err}; ignored")
    return out


def read_cmdline(fs) -> CmdlineHugepages:
    """Parsed hugepage options of the root's ``/proc/cmdline`` (empty when unreadable)."""
    text = fs.read_optional(CMDLINE)
    out = parse_cmdline(text or "")
    if text is None:
        out.warnings.append(f"{fs.host_path(CMDLINE)}: unreadable; kernel command line not shown")
    return out
