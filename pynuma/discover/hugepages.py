"""Hugepage pools, per NUMA node (``nodeN/hugepages``) or machine-wide (``/sys/kernel/mm/hugepages``).

Each ``hugepages-<size>kB`` directory is one pool: ``nr_hugepages`` (total),
``free_hugepages``, ``surplus_hugepages`` and, machine-wide only,
``resv_hugepages``.  A pool whose counts do not parse is skipped with a
warning naming the file.

>>> pools = read_pools(FsRoot("/"), GLOBAL_DIR, [])   # doctest: +SKIP
>>> pools[2048].total, pools[2048].free               # doctest: +SKIP
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import Dict, List, Mapping

from ..model import HugepagePool, MappingProxyType
from ..parse import parse_hugepage_dirname, parse_int

GLOBAL_DIR = "/sys/kernel/mm/hugepages"
NODE_DIR = "/sys/devices/system/node/node{}/hugepages"

_NODE_FILES = ("nr_hugepages", "free_hugepages", "surplus_hugepages")
_GLOBAL_FILES = _NODE_FILES + ("resv_hugepages",)


def _count(text: str) -> int:
    """A pool count: a non-negative integer."""
    value = parse_int(text)
    if value < 0:
        raise ValueError(f"negative count {value}")
    return value


def node_dir(node_id: int) -> str:
    """The hugepages directory of NUMA node ``node_id``."""
    return NODE_DIR.format(node_id)


def read_pools(fs, directory: str, warnings: "List[str]", machine_wide: bool = False) -> "Mapping[int, HugepagePool]":
    """``{size_kb: HugepagePool}`` of the pools under ``directory`` (empty when it is missing)."""
    return read_pools_many(fs, [directory], warnings, machine_wide)[0]


def read_pools_many(fs, directories: "List[str]", warnings: "List[str]",
                    machine_wide: bool = False) -> "List[Mapping[int, HugepagePool]]":
    """:func:`read_pools` of several directories, with one batched read of all their counts."""
    files = _GLOBAL_FILES if machine_wide else _NODE_FILES
    width = len(files)
    plan = []  # (directory index, size)
    paths: List[str] = []
    for k, directory in enumerate(directories):
        sizes = sorted(s for s in map(parse_hugepage_dirname, fs.listdir(directory)) if s is not None)
        for size in sizes:
            plan.append((k, size))
            paths.extend(f"{directory}/hugepages-{size}kB/{f}" for f in files)
    texts = fs.read_many(paths) if paths else []
    pools: List[Dict[int, HugepagePool]] = [{} for _ in directories]
    for j, (k, size) in enumerate(plan):
        chunk_paths = paths[j * width:(j + 1) * width]
        values = []
        try:
            for path, text in zip(chunk_paths, texts[j * width:(j + 1) * width]):
                where = path
                values.append(None if text is None else _count(text))
        except ValueError as err:
            warnings.append(f"{fs.host_path(where)}: {err}; {size} kB pool skipped")
            continue
        if values[0] is None:
            warnings.append(f"{fs.host_path(chunk_paths[0])}: missing; {size} kB pool skipped")
            continue
        reserved = (values[3] or 0) if machine_wide else None
        pools[k][size] = HugepagePool(size, values[0], values[1] or 0, values[2] or 0, reserved)
    return [MappingProxyType(p) for p in pools]


def node_pools(fs, node_id: int, warnings: "List[str]") -> "Mapping[int, HugepagePool]":
    """The hugepage pools of NUMA node ``node_id``."""
    return read_pools(fs, node_dir(node_id), warnings)


def global_pools(fs, warnings: "List[str]") -> "Mapping[int, HugepagePool]":
    """The machine-wide hugepage pools, with ``reserved`` counts."""
    return read_pools(fs, GLOBAL_DIR, warnings, machine_wide=True)
