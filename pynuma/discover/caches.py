"""CPU caches from ``cpuN/cache/indexK``: level, type, size, id and the CPUs sharing each.

Each cache instance is read once, from the lowest reported CPU that has it
(its ``shared_cpu_map`` names the others), not once per CPU.  A cache whose
files do not parse is skipped with a warning.
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs more than discovery's start-up budget
    from typing import Dict, List, Optional

from .. import _impl
from ..cpuset import CPUSet
from ..model import Cache, uncore_of_cpus
from ..parse import memoized, parse_cache_size, parse_cache_type, parse_int, parse_prefixed_id
from ._groups import Walk as _Walk, members as _group_members, walk as _walk_groups

_tuple_new = tuple.__new__  # a record from all its values (see pynuma._record)

_bitmap = _impl.select("bitmap")

# Parsed values kept by text across discoveries: the same few masks, sizes and
# ids repeat on every CPU and every time a node agent rediscovers.
_parse_mask = memoized(_bitmap.parse_cpumask)
_parse_size = memoized(parse_cache_size)
_parse_id = memoized(parse_int)
_parse_type = memoized(parse_cache_type, 64)

CPU_DIR = "/sys/devices/system/cpu"


# an index's files as read from its first instance (which also tells level and type)
_FIRST_FILES = ("size", "id", "shared_cpu_map", "level", "type")


def _indices(fs, reported: int) -> "List[int]":
    """Cache index numbers, listed once from the lowest reported CPU's ``cache`` directory."""
    if not reported:
        return []
    cpu = (reported & -reported).bit_length() - 1
    names = fs.listdir(f"{CPU_DIR}/cpu{cpu}/cache")
    return sorted(i for i in (parse_prefixed_id(n, "index") for n in names) if i is not None)


def read_caches(fs, reported: int, warnings: "List[str]", cpuset=CPUSet.from_bits) -> "List[Cache]":
    """Every cache instance among the ``reported`` CPUs (bitmap), by index then lowest CPU.

    ``level`` and ``type`` are read once per index (from its first instance):
    an index names the same kind of cache on every CPU (x86 CPUID leaf 4
    subleaf, or the firmware's level order on ARM); ``size``, ``id`` and
    ``shared_cpu_map`` are read once per instance.  ``cpuset(bits)`` makes
    each instance's CPU set (discovery passes one that shares equal sets).
    """
    parse_mask, parse_size, parse_id = _parse_mask, _parse_size, _parse_id
    new = _tuple_new
    indices = _indices(fs, reported)
    # every index's first instance is the lowest CPU's: read them all in one batch
    lowest = (reported & -reported).bit_length() - 1
    first_paths = [f"{CPU_DIR}/cpu{lowest}/cache/index{i}/{name}" for i in indices for name in _FIRST_FILES]
    first_texts = fs.read_many(first_paths) if first_paths else []
    width = len(_FIRST_FILES)
    prefix = CPU_DIR + "/cpu"
    walks, found = [], []  # one walk per index, walked together; its caches kept apart
    for k, index in enumerate(indices):
        first = (lowest, first_texts[k * width:(k + 1) * width])
        suffix = f"/cache/index{index}/"
        kind: list = []  # [level, type] once known for this index
        all_names = tuple(suffix + name for name in _FIRST_FILES)
        instance_names = all_names[:3]
        caches: List[Cache] = []
        notes: List[str] = []

        def names(kind=kind, all_names=all_names, instance_names=instance_names):
            return instance_names if kind else all_names

        def place(cpu: int, texts, start: int, left: int, index=index, kind=kind, append=caches.append,
                  note=notes.append) -> "Optional[int]":
            size_t, id_t, map_t = texts[start], texts[start + 1], texts[start + 2]
            try:
                if not kind:
                    level_t, type_t = texts[start + 3], texts[start + 4]
                    if level_t is None:
                        return None  # this CPU has no such cache index
                    kind[:] = (parse_id(level_t), _parse_type(type_t) if type_t is not None else "Unified")
                elif size_t is None and id_t is None and map_t is None:
                    return None
                group = _group_members(parse_mask(map_t), reported, left, cpu) if map_t is not None else 1 << cpu
                size = parse_size(size_t) if size_t is not None and size_t.strip(" \n\x00") else None
                cache_id = parse_id(id_t) if id_t is not None else None
            except ValueError as err:
                note(f"{fs.host_path(f'{CPU_DIR}/cpu{cpu}/cache/index{index}')}: {err}; cache skipped")
                return None
            append(new(Cache, (kind[0], kind[1], size, cache_id, cpuset(group))))
            return group

        walks.append(_Walk(reported, prefix, names, place, first, notes))
        found.append(caches)
    _walk_groups(fs, walks, warnings)
    return [cache for caches in found for cache in caches]


def uncore_caches(caches: "List[Cache]") -> "Dict[int, Optional[int]]":
    """``{cpu: id of its L3 cache group}`` (see :func:`pynuma.model.uncore_of_cpus`)."""
    return uncore_of_cpus(caches)
