"""Resize a hugepage pool: write ``nr_hugepages``, read back what the kernel really gave.

>>> plan = set_pool(FsRoot("/dump"), 2048, 512, node=0, dry_run=True)   # doctest: +SKIP
>>> plan.path                                                           # doctest: +SKIP
'/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages'

The kernel may give fewer pages than asked (fragmented memory): the result
carries the shortfall and callers report it.  A pool is never shrunk below
its in-use pages (total - free) unless ``force``: the kernel would turn the
busy pages into surplus pages instead of freeing them, which is rarely what
an operator means.  On the live host the write needs root, checked first.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Optional

from ..errors import AccessDenied, AllocationError, InputError, ParseError
from .pools import GLOBAL_DIR, NODES_DIR, Pool, read_hugepages
from .resources import resource_name_for_kb


@dataclass(frozen=True)
class SetResult:
    """What a resize did (or would do with ``dry_run``)."""

    size_kb: int
    node: Optional[int]
    path: str
    requested: int
    before: int
    in_use: int
    after: Optional[int]
    dry_run: bool

    @property
    def shortfall(self) -> int:
        """Pages asked for but not given (0 when the kernel gave everything, or on a dry run)."""
        return 0 if self.after is None else max(0, self.requested - self.after)

    def describe(self) -> str:
        where = "machine-wide" if self.node is None else f"node {self.node}"
        name = resource_name_for_kb(self.size_kb)
        if self.dry_run:
            return f"would set {name} {where}: {self.before} -> {self.requested} pages ({self.path})"
        text = f"{name} {where}: {self.before} -> {self.after} pages"
        if self.shortfall:
            text += f"; asked for {self.requested}, the kernel gave {self.after} (short by {self.shortfall})"
        return text

    def to_dict(self) -> dict:
        return {"size_kb": self.size_kb, "resource": resource_name_for_kb(self.size_kb), "node": self.node,
                "path": self.path, "requested": self.requested, "before": self.before, "in_use": self.in_use,
                "after": self.after, "shortfall": self.shortfall, "dry_run": self.dry_run}


def pool_path(size_kb: int, node: Optional[int] = None) -> str:
    """The ``nr_hugepages`` file of a pool."""
    if node is None:
        return f"{GLOBAL_DIR}/hugepages-{size_kb}kB/nr_hugepages"
    return f"{NODES_DIR}/node{node}/hugepages/hugepages-{size_kb}kB/nr_hugepages"


def set_pool(fs, size_kb: int, count: int, node: Optional[int] = None, dry_run: bool = False,
             force: bool = False, geteuid: Callable[[], int] = os.geteuid) -> SetResult:
    """Set pool ``size_kb`` (machine-wide, or on ``node``) to ``count`` pages.

    Raises ``InputError`` (unknown size or node, negative count),
    ``AllocationError`` (would go below the in-use pages without ``force``),
    ``AccessDenied`` (live host without root, or the file refuses the write).
    """
    if count < 0:
        raise InputError(f"page count must not be negative, got {count}")
    info = read_hugepages(fs)
    if node is not None and node not in info.nodes:
        have = ", ".join(str(n) for n in sorted(info.nodes)) or "none"
        raise InputError(f"NUMA node {node} does not exist (nodes: {have})")
    pool: Optional[Pool] = info.pool(size_kb, node)
    if pool is None:
        where = "" if node is None else f" on node {node}"
        raise InputError(f"no {size_kb} kB hugepage pool{where} under {fs.root}")
    path = pool_path(size_kb, node)
    if count < pool.in_use and not force:
        raise AllocationError(f"{resource_name_for_kb(size_kb)}: {pool.in_use} pages are in use; setting "
                              f"{count} would go below them (use --force to do it anyway)")
    if dry_run:
        return SetResult(size_kb, node, path, count, pool.total, pool.in_use, None, True)
    if fs.is_host and geteuid() != 0:
        raise AccessDenied(f"setting hugepages writes {path}, which needs root (run with sudo)")
    fs.write_text(path, f"{count}\n")
    text = fs.read_optional(path)
    try:
        after = int((text or "").strip())
    except ValueError:
        raise ParseError(fs.host_path(path), f"expected a page count after writing, got {text!r}") from None
    return SetResult(size_kb, node, path, count, pool.total, pool.in_use, after, False)


set_hugepage_pool = set_pool  # public name (``pynuma.set_hugepage_pool``)
