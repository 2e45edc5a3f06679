"""Hugepage pools, per NUMA node (``nodeN/hugepages``) or machine-wide (``/sys/kernel/mm/hugepages``).

Each ``hugepages-<size>kB`` directory is one pool: ``nr_hugepages`` (total),
``free_hugepages``, ``surplus_hugepages`` and, machine-wide only,
``resv_hugepages``.  A pool whose counts do not parse is skipped with a
warning naming the file.

>>> pools = read_pools(FsRoot("/"), GLOBAL_DIR, [])   # doctest: +SKIP
>>> pools[2048].total, pools[2048].free               # doctest: +SKIP
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Dict, List, Mapping

from ..model import HugepagePool
from ..parse import parse_hugepage_dirname, parse_int

GLOBAL_DIR = "/sys/kernel/mm/hugepages"
NODE_DIR = "/sys/devices/system/node/node{}/hugepages"

_NODE_FILES = ("nr_hugepages", "free_hugepages", "surplus_hugepages")
_GLOBAL_FILES = _NODE_FILES + ("resv_hugepages",)


def node_dir(node_id: int) -> str:
    """The hugepages directory of NUMA node ``node_id``."""
    return NODE_DIR.format(node_id)


def read_pools(fs, directory: str, warnings: List[str], machine_wide: bool = False) -> Mapping[int, HugepagePool]:
    """``{size_kb: HugepagePool}`` of the pools under ``directory`` (empty when it is missing)."""
    sizes = []
    for name in fs.listdir(directory):
        size = parse_hugepage_dirname(name)
        if size is not None:
            sizes.append(size)
    if not sizes:
        return MappingProxyType({})
    files = _GLOBAL_FILES if machine_wide else _NODE_FILES
    paths = [f"{directory}/hugepages-{size}kB/{f}" for size in sorted(sizes) for f in files]
    texts = fs.read_many(paths)
    pools: Dict[int, HugepagePool] = {}
    width = len(files)
    for k, size in enumerate(sorted(sizes)):
        chunk = texts[k * width:(k + 1) * width]
        values = []
        try:
            for path, text in zip(paths[k * width:(k + 1) * width], chunk):
                where = path
                values.append(None if text is None else parse_int(text))
        except ValueError as err:
            warnings.append(f"{fs.host_path(where)}: {err}; {size} kB pool skipped")
            continue
        if values[0] is None:
            warnings.append(f"{fs.host_path(paths[k * width])}: missing; {size} kB pool skipped")
            continue
        total = values[0]
        free = values[1] if values[1] is not None else 0
        surplus = values[2] if values[2] is not None else 0
        reserved = (values[3] if values[3] is not None else 0) if machine_wide else None
        pools[size] = HugepagePool(size, total, free, surplus, reserved)
    return MappingProxyType(pools)


def node_pools(fs, node_id: int, warnings: List[str]) -> Mapping[int, HugepagePool]:
    """The hugepage pools of NUMA node ``node_id``."""
    return read_pools(fs, node_dir(node_id), warnings)


def global_pools(fs, warnings: List[str]) -> Mapping[int, HugepagePool]:
    """The machine-wide hugepage pools, with ``reserved`` counts."""
    return read_pools(fs, GLOBAL_DIR, warnings, machine_wide=True)
