"""NUMA distances: the raw ACPI SLIT when readable, else ``nodeN/distance`` (rule 5).

Each ``nodeN/distance`` row lists the distances to *all* node directories in
ascending id order, by position (not by id), so a restricted report keeps
only the matching columns.  With fewer than two reported nodes there is no
matrix.  When both sources exist and disagree, the SLIT wins and a warning
says so (the kernel may have rewritten the SLIT, e.g. ``numa=fake``).
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs more than discovery's start-up budget
    from typing import List, Optional, Sequence, Tuple

from ..model import Distances
from ..parse import memoized, parse_distance_row

_parse_row = memoized(parse_distance_row, 1024)  # the same rows on every rediscovery

NODE_DIR = "/sys/devices/system/node"
SLIT_PATH = "/sys/firmware/acpi/tables/SLIT"

if TYPE_CHECKING:
    Matrix = Tuple[Tuple[int, ...], ...]


def sysfs_matrix(fs, all_ids: "Sequence[int]", node_ids: "Sequence[int]", warnings: "List[str]") -> "Optional[Matrix]":
    """The matrix between ``node_ids`` from their ``distance`` files; ``None`` (and a warning) when unusable."""
    paths = [f"{NODE_DIR}/node{n}/distance" for n in node_ids]
    texts = fs.read_many(paths)
    if all(t is None for t in texts):
        return None
    position = {n: i for i, n in enumerate(all_ids)}
    columns = [position[n] for n in node_ids]
    matrix = []
    for path, text in zip(paths, texts):
        if text is None:
            warnings.append(f"{fs.host_path(path)}: missing; distances dropped")
            return None
        try:
            row = _parse_row(text)
        except ValueError as err:
            warnings.append(f"{fs.host_path(path)}: {err}; distances dropped")
            return None
        if len(row) != len(all_ids):
            warnings.append(f"{fs.host_path(path)}: {len(row)} values, expected {len(all_ids)}; distances dropped")
            return None
        matrix.append(tuple(row[c] for c in columns))
    return tuple(matrix)


def _slit_matrix(fs, node_ids: "Sequence[int]", warnings: "List[str]") -> "Optional[Matrix]":
    # Only import the ACPI layer when the table is there: most dumps have none,
    # and the CLI's start-up budget is a few milliseconds.
    if not fs.exists(SLIT_PATH):
        return None
    try:
        from .acpi import slit_distances
    except ImportError:
        return None
    result = slit_distances(fs, list(node_ids))
    if result is None:
        return None
    warnings.extend(getattr(result, "warnings", ()))
    matrix = getattr(result, "matrix", None)
    if matrix is None:
        return None
    if getattr(result, "mapping", "") == "assumed":
        warnings.append(f"{fs.host_path(SLIT_PATH)}: proximity domains assumed to be node ids (no usable SRAT)")
    return tuple(tuple(int(v) for v in row) for row in matrix)


def read_distances(fs, all_ids: "Sequence[int]", node_ids: "Sequence[int]", warnings: "List[str]") -> "Optional[Distances]":
    """Distances between the reported ``node_ids`` (``all_ids``: every node directory, ascending)."""
    if len(node_ids) < 2:
        return None
    nodes = tuple(node_ids)
    slit = _slit_matrix(fs, nodes, warnings)
    return _choose(fs, nodes, slit, sysfs_matrix(fs, all_ids, nodes, warnings), warnings)


def with_sysfs_matrix(fs, node_ids: "Sequence[int]", sysfs: "Optional[Matrix]", warnings: "List[str]"
                      ) -> "Optional[Distances]":
    """:func:`read_distances` when the ``distance`` rows are already read (``sysfs``) and a SLIT exists."""
    nodes = tuple(node_ids)
    return _choose(fs, nodes, _slit_matrix(fs, nodes, warnings), sysfs, warnings)


def _choose(fs, nodes: "Tuple[int, ...]", slit: "Optional[Matrix]", sysfs: "Optional[Matrix]",
            warnings: "List[str]") -> "Optional[Distances]":
    """The SLIT when usable (a warning if the rows disagree), else the rows, else nothing."""
    if slit is not None:
        if sysfs is not None and sysfs != slit:
            warnings.append(f"{fs.host_path(SLIT_PATH)} and {fs.host_path(NODE_DIR)}/nodeN/distance disagree; "
                            "using the SLIT")
        return Distances(nodes, slit, "slit")
    if sysfs is not None:
        return Distances(nodes, sysfs, "sysfs")
    return None
