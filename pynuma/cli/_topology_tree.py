"""The readable tree of ``pynuma topology``: machine > package > NUMA node > L3 > core > CPU.

Like ``lstopo``'s console output; CPU-less nodes are listed after the
packages, offline and isolated CPUs at the end.  Where a NUMA node holds CPUs
of several packages (POWER, some multi-die parts) nodes are the larger unit
and nest their packages, as lstopo does: every node is printed once.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from . import _devices
from ._units import human_bytes


def _size(n) -> str:
    return human_bytes(n, unknown="?")


def _hugepages(node) -> str:
    if not node.hugepages:
        return ""
    parts = [f"{_size(size << 10)} {p.free}/{p.total} free" for size, p in sorted(node.hugepages.items())]
    return "; hugepages " + ", ".join(parts)


def _node_line(node) -> str:
    kind = "" if node.has_cpu else ", no CPUs"
    kind += "" if node.has_memory else ", no memory"
    return (f"NUMANode N#{node.id} ({_size(node.memory_total)} total, {_size(node.memory_free)} free"
            f"{_hugepages(node)}{kind})")


def _count(n: int, noun: str) -> str:
    """``"1 package"``, ``"2 packages"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def render_tree(topo) -> str:
    """The topology as an indented text tree."""
    lines: List[str] = []
    total_mem = sum(n.memory_total for n in topo.numa_nodes)
    lines.append(f"Machine ({topo.arch}, {_count(len(topo.online_cpus), 'CPU')} online, "
                 f"{_count(len(topo.packages), 'package')}, {_count(topo.cores, 'core')}, "
                 f"{_count(len(topo.numa_nodes), 'NUMA node')}, {_size(total_mem)})")
    l3_of: Dict[int, Tuple[int, object]] = {}
    for idx, cache in enumerate(topo.caches):
        if cache.level == 3 and cache.type != "Instruction":
            for cpu in cache.cpus:
                l3_of.setdefault(cpu, (idx, cache))
    nodes = {n.id: n for n in topo.numa_nodes}
    package_of: Dict[int, int] = {}
    for idx, pkg in enumerate(topo.packages):
        for cpu in pkg.cpus:
            package_of.setdefault(cpu, idx)

    groups: Dict[object, list] = {}
    for cpu in topo.cpus:
        groups.setdefault(package_of.get(cpu.id), []).append(cpu)
    if _nodes_span_packages(topo.cpus, package_of):
        # nodes are the larger unit (POWER, some multi-die machines): each node once, its packages inside
        by_node: Dict[object, list] = {}
        for cpu in topo.cpus:
            by_node.setdefault(cpu.node, []).append(cpu)
        for nid in _ordered(by_node):
            lines.append("  " + ("(CPUs in no NUMA node)" if nid is None else _node_line(nodes[nid])))
            in_node: Dict[object, list] = {}
            for cpu in by_node[nid]:
                in_node.setdefault(package_of.get(cpu.id), []).append(cpu)
            for pidx in _ordered(in_node):
                lines.append("    " + _package_line(topo, pidx, in_node[pidx]))
                _render_caches(lines, in_node[pidx], l3_of, "      ")
            if topo.devices and nid is not None:
                lines += _devices.tree_lines(topo.devices, nid, "    ")
    else:
        for pidx in _ordered(groups):
            lines.append("  " + _package_line(topo, pidx, groups[pidx]))
            _render_nodes(lines, groups[pidx], nodes, l3_of, "    ", topo.devices)
    for node in topo.numa_nodes:
        if not node.cpus:
            lines.append("  " + _node_line(node))
            if topo.devices:
                lines += _devices.tree_lines(topo.devices, node.id, "    ")
    if topo.devices:
        lines += _devices.unplaced_lines(topo.devices, set(nodes), "  ")
    if topo.offline_cpus:
        lines.append(f"  Offline CPUs: {topo.offline_cpus}")
    if topo.isolated_cpus:
        lines.append(f"  Isolated CPUs: {topo.isolated_cpus}")
    if topo.distances is not None:
        lines.append(f"  Distances: {len(topo.distances.nodes)}x{len(topo.distances.nodes)} "
                     f"from {topo.distances.source} (pynuma topology --distances)")
    for w in topo.warnings:
        lines.append(f"  warning: {w}")
    return "\n".join(lines) + "\n"


def _ordered(keys) -> list:
    """Group keys in ascending order, the ``None`` group (no package / no node) last."""
    return sorted(keys, key=lambda k: (k is None, k if k is not None else 0))


def _nodes_span_packages(cpus, package_of) -> bool:
    """Whether some NUMA node holds CPUs of more than one package (then nodes nest packages)."""
    seen: Dict[object, object] = {}
    for cpu in cpus:
        if cpu.node is None:
            continue
        pkg = package_of.get(cpu.id)
        if seen.setdefault(cpu.node, pkg) != pkg:
            return True
    return False


def _package_line(topo, pidx, cpus) -> str:
    if pidx is None:
        return "(no package information)"
    pkg = topo.packages[pidx]
    # the kernel reports -1 where the platform gives no socket id (POWER LPARs)
    name = "Package" if pkg.id is None or pkg.id < 0 else f"Package P#{pkg.id}"
    return f"{name} (CPUs {pkg.cpus})"


def _render_nodes(lines, cpus, nodes, l3_of, pad, devices=()) -> None:
    by_node: Dict[object, list] = {}
    for cpu in cpus:
        by_node.setdefault(cpu.node, []).append(cpu)
    for nid in _ordered(by_node):
        lines.append(pad + ("(CPUs in no NUMA node)" if nid is None else _node_line(nodes[nid])))
        _render_caches(lines, by_node[nid], l3_of, pad + "  ")
        if devices and nid is not None:
            lines += _devices.tree_lines(devices, nid, pad + "  ")


def _render_caches(lines, cpus, l3_of, pad) -> None:
    """L3 groups, then cores with their CPUs."""
    by_l3: Dict[object, list] = {}
    for cpu in cpus:
        by_l3.setdefault(l3_of.get(cpu.id, (None, None))[0], []).append(cpu)
    for l3 in _ordered(by_l3):
        inner = pad
        if l3 is not None:
            cache = l3_of[by_l3[l3][0].id][1]
            ident = "" if cache.id is None else f" #{cache.id}"
            lines.append(f"{inner}L3{ident} ({_size(cache.size_bytes)})")
            inner += "  "
        by_core: Dict[int, list] = {}
        for cpu in by_l3[l3]:
            by_core.setdefault(cpu.core, []).append(cpu)
        for core in sorted(by_core):
            members = by_core[core]
            raw = members[0].core_id
            label = f"Core #{core}" + ("" if raw is None else f" (core_id {raw})")
            lines.append(f"{inner}{label}: " + " ".join(f"CPU {c.id}" for c in members))
