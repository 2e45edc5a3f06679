"""Hugepage pools per size, machine-wide and per NUMA node, with the default size and the cmdline.

>>> info = read_hugepages(FsRoot("/"))            # doctest: +SKIP
>>> info.pools[2048].total, info.default_size_kb  # doctest: +SKIP
(0, 2048)

Counts come from helper B's discovery reader (``pynuma.discover.hugepages``);
this module adds what management needs: ``nr_overcommit_hugepages``, the
default size (``Hugepagesize`` of ``/proc/meminfo``), the kernel command line
and Kubernetes capacity (``hugepages-2Mi`` quantities per node and in total).
"""
from __future__ import annotations

from .._dataclass import dataclass, field
from ..errors import InputError
from ..parse import ascii_uint
from ..quantity import BINARY_SI, Quantity
from .cmdline import CmdlineHugepages, parse_size_kb, read_cmdline
from .resources import PREFIX, resource_name_for_kb

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Iterable, List, Mapping, Optional, Tuple

GLOBAL_DIR = "/sys/kernel/mm/hugepages"
NODES_DIR = "/sys/devices/system/node"
MEMINFO = "/proc/meminfo"


@dataclass(frozen=True)
class Pool:
    """One pool: ``node`` is ``None`` for the machine-wide pool (which alone knows reserved/overcommit)."""

    size_kb: int
    node: Optional[int]
    total: int
    free: int
    surplus: int
    reserved: Optional[int] = None
    overcommit: Optional[int] = None

    @property
    def in_use(self) -> int:
        """Pages handed out (total - free); a pool must not shrink below this."""
        return max(0, self.total - self.free)

    @property
    def resource(self) -> str:
        return resource_name_for_kb(self.size_kb)

    @property
    def bytes_total(self) -> int:
        return self.total * self.size_kb * 1024

    def to_dict(self) -> dict:
        out = {"size_kb": self.size_kb, "resource": self.resource, "total": self.total, "free": self.free,
               "in_use": self.in_use, "surplus": self.surplus}
        if self.node is None:
            out["reserved"] = self.reserved
            out["overcommit"] = self.overcommit
        return out


@dataclass(frozen=True)
class HugepageInfo:
    """Everything about hugepages on one machine (or dump)."""

    sizes: Tuple[int, ...]
    default_size_kb: Optional[int]
    pools: Mapping[int, Pool]
    nodes: Mapping[int, Mapping[int, Pool]]
    cmdline: CmdlineHugepages = field(default_factory=CmdlineHugepages)
    warnings: Tuple[str, ...] = ()

    def pool(self, size_kb: int, node: Optional[int] = None) -> Optional[Pool]:
        if node is None:
            return self.pools.get(size_kb)
        return self.nodes.get(node, {}).get(size_kb)

    def to_dict(self) -> dict:
        cmd = self.cmdline.resolved(self.default_size_kb)
        return {
            "default_size_kb": self.default_size_kb,
            "sizes": list(self.sizes),
            "pools": {str(k): p.to_dict() for k, p in sorted(self.pools.items())},
            "nodes": {str(n): {str(k): p.to_dict() for k, p in sorted(pools.items())}
                      for n, pools in sorted(self.nodes.items())},
            "cmdline": {
                "default_size_kb": self.cmdline.default_size_kb,
                "pools": {str(k): {"count": c.count, "per_node": {str(n): v for n, v in sorted(c.per_node.items())},
                                   "total": c.total} for k, c in sorted(cmd.items())},
            },
            "capacity": capacity_to_dict(hugepage_capacity(self)),
            "warnings": list(self.warnings),
        }


def node_ids(fs) -> List[int]:
    """NUMA node ids that have a directory under ``/sys/devices/system/node`` (ascending)."""
    ids = []
    for name in fs.listdir(NODES_DIR):
        digits = name[4:-1] if name.endswith("\n") else name[4:]  # what re's node(\d+)$ matched
        if name.startswith("node") and digits.isdecimal():
            ids.append(int(digits))
    return sorted(ids)


def parse_default_size_kb(meminfo: str) -> Optional[int]:
    """``Hugepagesize:  2048 kB`` of ``/proc/meminfo``; ``None`` when absent; ``ValueError`` when bad."""
    for line in meminfo.splitlines():
        if line.startswith("Hugepagesize:"):
            parts = line.split()
            if len(parts) != 3 or parts[2] != "kB" or ascii_uint(parts[1]) is None:
                raise ValueError(f"bad Hugepagesize line {line.strip()!r}")
            return int(parts[1])
    return None


def _overcommit(fs, size_kb: int, warnings: List[str]) -> Optional[int]:
    path = f"{GLOBAL_DIR}/hugepages-{size_kb}kB/nr_overcommit_hugepages"
    text = fs.read_optional(path)
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        warnings.append(f"{fs.host_path(path)}: expected an integer; overcommit unknown")
        return None


def read_hugepages(fs) -> HugepageInfo:
    """Read pools, default size and command line under ``fs``; bad items become warnings."""
    from ..discover.hugepages import global_pools, node_pools

    warnings: List[str] = []
    pools: Dict[int, Pool] = {}
    for size, p in global_pools(fs, warnings).items():
        pools[size] = Pool(size, None, p.total, p.free, p.surplus, p.reserved, _overcommit(fs, size, warnings))
    nodes: Dict[int, Dict[int, Pool]] = {}
    for nid in node_ids(fs):
        per = node_pools(fs, nid, warnings)
        nodes[nid] = {size: Pool(size, nid, p.total, p.free, p.surplus) for size, p in per.items()}
    default = None
    meminfo = fs.read_optional(MEMINFO)
    if meminfo is not None:
        try:
            default = parse_default_size_kb(meminfo)
        except ValueError as err:
            warnings.append(f"{fs.host_path(MEMINFO)}: {err}")
    cmdline = read_cmdline(fs)
    warnings.extend(cmdline.warnings)
    sizes = sorted(set(pools) | {s for per in nodes.values() for s in per})
    if cmdline.pools or cmdline.default_size_kb:
        resolved = cmdline.resolved(default)
        for size in sorted(set(resolved) - set(sizes)):
            warnings.append(f"kernel command line asks for {size} kB pages, but the kernel has no such pool")
    return HugepageInfo(tuple(sizes), default, pools, nodes, cmdline, tuple(warnings))


def hugepage_capacity(info: HugepageInfo) -> Dict[str, Dict]:
    """Kubernetes capacity: ``{"total": {"hugepages-2Mi": Quantity}, "nodes": {id: {...}}}``.

    Every size appears, even with 0 pages, as the kubelet reports it.
    """
    def cap(pools: Iterable[Pool]) -> Dict[str, Quantity]:
        return {p.resource: Quantity(p.bytes_total, BINARY_SI) for p in sorted(pools, key=lambda p: p.size_kb)}

    return {"total": cap(info.pools.values()),
            "nodes": {nid: cap(per.values()) for nid, per in sorted(info.nodes.items())}}


def capacity_to_dict(capacity: Mapping[str, Mapping]) -> dict:
    """JSON form of :func:`hugepage_capacity` (quantities as canonical strings)."""
    return {"total": {r: str(q) for r, q in capacity["total"].items()},
            "nodes": {str(n): {r: str(q) for r, q in per.items()} for n, per in capacity["nodes"].items()}}


def read_capacity(fs) -> Dict[str, Dict]:
    """Shortcut: :func:`hugepage_capacity` of :func:`read_hugepages`."""
    return hugepage_capacity(read_hugepages(fs))


def parse_size_arg(text: str, sizes: Iterable[int]) -> int:
    """A page size given as ``2Mi``, ``1Gi``, ``2048kB``, ``2M``, ``hugepages-2Mi`` -> kB, checked against ``sizes``."""
    sizes = sorted(sizes)
    s = text.strip()
    if s.startswith(PREFIX):
        s = s[len(PREFIX):]
    try:
        if s.lower().endswith("kb") and ascii_uint(s[:-2]) is not None:
            kb = int(s[:-2])
        elif s[-2:] in ("Ki", "Mi", "Gi", "Ti"):
            q = Quantity.parse(s)
            if q.amount.denominator != 1 or q.value() % 1024 or q.value() <= 0:
                raise ValueError(f"{text!r} is not a whole number of KiB")
            kb = q.value() // 1024
        else:
            kb = parse_size_kb(s)
    except (ValueError, InputError) as err:
        raise InputError(f"hugepage size {text!r}: not a size ({err}); use 2Mi, 1Gi or 2048kB") from None
    if kb not in sizes:
        have = ", ".join(f"{resource_name_for_kb(k)[len(PREFIX):]} ({k}kB)" for k in sizes) or "none"
        raise InputError(f"hugepage size {text!r} does not exist on this machine (sizes: {have})")
    return kb
