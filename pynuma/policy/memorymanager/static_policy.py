"""The kubelet's Memory Manager, static policy: NUMA hints and exclusive memory blocks.

>>> policy = StaticPolicy([NodeInfo(0, 8 << 30, ((1048576, 2),))], {0: {"memory": 512 << 20}})
>>> state = policy.start(MemoryState())
>>> state.machine_state[0].memory_map["memory"].allocatable == (8 << 30) - (512 << 20) - (2 << 30)
True

Only Guaranteed pods get hints and memory.  A container's blocks cover every
requested ``memory`` / ``hugepages-<size>`` on one NUMA mask; NUMA nodes used
together by a multi-node block form a group (``cells``) and are never used
for single-node blocks until the group is released.  Every operation returns
a new :class:`MemoryState`; the input is never modified.  The policy object
keeps one piece of memory across calls, as the kubelet does: the memory of a
pod's regular init containers that later containers of the same pod reuse.
"""
from __future__ import annotations

from operator import add, lt
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ...errors import AllocationError, CheckpointError, InputError
from ...hugepages.resources import resource_name_for_kb
from ...pod import Container, Pod
from .requests import (Hint, Mask, NodeInfo, best_hint, container_requested_resources, iterate_masks,
                              mask_key, pod_requested_resources)
from .state import MEMORY, Block, MemoryState, MemoryTable, NUMANodeMap, NUMANodeState, machine_state_differences
from ..qos import GUARANTEED, qos_class, uses_pod_level_resources

POLICY_NAME = "Static"
__all__ = ["StaticPolicy", "Hint", "NodeInfo", "POLICY_NAME", "container_requested_resources",
           "pod_requested_resources", "best_hint"]


class StaticPolicy:
    """Memory Manager static policy for a machine and its ``--reserved-memory``."""

    name = POLICY_NAME

    def __init__(self, machine: Sequence[NodeInfo], system_reserved: Mapping[int, Mapping[str, int]],
                 pod_level_resources: bool = True) -> None:
        total = sum(int(node.get(MEMORY, 0)) for node in system_reserved.values())
        if total <= 0:
            raise InputError("[memorymanager] you should specify the system reserved memory")
        self.machine = tuple(machine)
        self.system_reserved = {int(n): dict(r) for n, r in system_reserved.items()}
        self.pod_level_resources = pod_level_resources
        # pod UID -> mask -> resource -> bytes that later containers of the pod may reuse
        self.reusable: Dict[str, Dict[Mask, Dict[str, int]]] = {}

    # -- machine state ----------------------------------------------------------------------
    def _reserved(self, node: int, resource: str) -> int:
        return self.system_reserved.get(node, {}).get(resource, 0)

    def default_machine_state(self) -> NUMANodeMap:
        """Fresh state: hugepages per size, and memory minus system reserve and all hugepages."""
        ms: NUMANodeMap = {}
        for node in self.machine:
            tables: Dict[str, MemoryTable] = {}
            huge_total = 0
            for size_kb, pages in node.hugepages:
                name = resource_name_for_kb(size_kb)
                total = pages * size_kb * 1024
                reserved = self._reserved(node.id, name)
                tables[name] = MemoryTable(total, reserved, total - reserved, 0, total - reserved)
                huge_total += total
            reserved = self._reserved(node.id, MEMORY)
            alloc = node.memory - reserved - huge_total
            tables[MEMORY] = MemoryTable(node.memory, reserved, alloc, 0, alloc)
            ms[node.id] = NUMANodeState(0, tables, [node.id])
        return ms

    def replay(self, assignments) -> NUMANodeMap:
        """The machine state ``assignments`` imply: the default state with every block charged again.

        ``CheckpointError`` when a block names a NUMA node or resource the machine lacks.
        """
        expected = self.default_machine_state()
        for uid, conts in (assignments or {}).items():
            for cname, blocks in conts.items():
                for b in blocks or ():
                    remaining = b.size
                    for nid in b.numa_affinity or ():
                        node = expected.get(nid)
                        if node is None:
                            raise CheckpointError(f"[memorymanager] (pod: {uid}, container: {cname}) the memory "
                                                  "assignment uses the NUMA that does not exist")
                        node.number_of_assignments += 1
                        node.cells = list(b.numa_affinity)
                        table = (node.memory_map or {}).get(b.type)
                        if table is None:
                            raise CheckpointError(f"[memorymanager] (pod: {uid}, container: {cname}) the memory "
                                                  "assignment uses memory resource that does not exist")
                        remaining = _charge(table, remaining)
        return expected

    def start(self, state: MemoryState) -> MemoryState:
        """Validate a restored state against the machine (or initialise an empty one).

        ``CheckpointError`` when the state no longer matches: drain the node and
        remove the state file, as the kubelet says.
        """
        if not state.machine_state:
            if state.assignments:
                raise CheckpointError("[memorymanager] machine state can not be empty when it has memory assignments")
            return MemoryState(self.default_machine_state(), dict(state.assignments or {}))
        expected = self.replay(state.assignments)
        diffs = machine_state_differences(state.machine_state, expected)
        if diffs:
            err = CheckpointError("[memorymanager] the expected machine state is different from the real one")
            err.details = diffs  # what differs, for `pynuma state check`
            raise err
        return state.copy()

    # -- hints --------------------------------------------------------------------------------
    def _eligible(self, pod: Pod) -> bool:
        return qos_class(pod) == GUARANTEED and not uses_pod_level_resources(pod, self.pod_level_resources)

    def _reusable_for(self, pod_uid: str, mask: Mask, resource: str) -> int:
        return self.reusable.get(pod_uid, {}).get(mask, {}).get(resource, 0)

    def calculate_hints(self, ms: NUMANodeMap, pod: Pod, requested: Mapping[str, int]) -> Dict[str, List[Hint]]:
        """Hints for ``requested`` bytes on the current machine state (no existing blocks considered).

        Every NUMA mask is tried, by size then lexicographically, as the kubelet
        does; sums over a mask reuse the sums of its prefix so each mask costs
        O(resources), which keeps 16-node machines (65535 masks) quick.
        """
        nodes = sorted(ms)
        names = list(requested)
        sizes = [requested[r] for r in names]
        free_of, alloc_of, group_of = {}, {}, {}
        for nid in nodes:
            tables = ms[nid].memory_map or {}
            free_of[nid] = [getattr(tables.get(r), "free", 0) for r in names]
            alloc_of[nid] = [getattr(tables.get(r), "allocatable", 0) for r in names]
            node = ms[nid]
            # the group a used node is tied to (a single-node use is a group of one)
            group_of[nid] = tuple(sorted(node.cells or [])) if node.number_of_assignments > 0 else None
        # nodes that need the group checks: used ones, and any recorded as part of a group
        used_bits = sum(1 << n for n in nodes if group_of[n] is not None or len(ms[n].cells or []) > 1)
        # prefix mask -> (free sums, allocatable sums, mask bits)
        sums: Dict[Mask, Tuple[List[int], List[int], int]] = {(): ([0] * len(names), [0] * len(names), 0)}
        reuse = self.reusable.get(pod.uid, {})
        min_size = len(nodes)
        found: List[Mask] = []
        for mask in iterate_masks(nodes):
            pf, pa, pbits = sums[mask[:-1]]
            last = mask[-1]
            free = list(map(add, pf, free_of[last]))
            alloc = list(map(add, pa, alloc_of[last]))
            bits = pbits | (1 << last)
            if len(mask) < len(nodes):
                sums[mask] = (free, alloc, bits)
            # could the mask hold the request on an empty machine?
            if any(map(lt, alloc, sizes)):
                continue
            if len(mask) < min_size:
                min_size = len(mask)
            if bits & used_bits:
                if len(mask) == 1:
                    if len(ms[last].cells or []) > 1:
                        continue  # the node belongs to a multi-NUMA group
                elif any(group_of[n] is not None and group_of[n] != mask for n in mask):
                    continue  # a node used alone, or with another group
            extra = reuse.get(mask)
            if extra:
                free = [f + extra.get(r, 0) for f, r in zip(free, names)]
            if any(map(lt, free, sizes)):
                continue
            found.append(mask)
        hints: Dict[str, List[Hint]] = {}
        for mask in found:
            hint = Hint(mask, len(mask) == min_size)
            for r in names:
                hints.setdefault(r, []).append(hint)
        return hints

    def topology_hints(self, state: MemoryState, pod: Pod, container: Container) -> Optional[Dict[str, List[Hint]]]:
        """Container-scope hints per resource; ``None`` = no preference (not Guaranteed, or stale blocks)."""
        if qos_class(pod) != GUARANTEED:
            return None
        try:
            requested = container_requested_resources(container)
        except InputError:
            return None  # the kubelet logs it and gives no hint; Allocate then reports it
        if uses_pod_level_resources(pod, self.pod_level_resources):
            return None
        blocks = state.blocks(pod.uid, container.name)
        if blocks is not None:
            return _regenerate_hints(blocks, requested)
        return self.calculate_hints(state.machine_state or {}, pod, requested)

    def pod_topology_hints(self, state: MemoryState, pod: Pod) -> Optional[Dict[str, List[Hint]]]:
        """Pod-scope hints for everything the pod needs at its peak."""
        if qos_class(pod) != GUARANTEED:
            return None
        try:
            requested = pod_requested_resources(pod)
        except InputError:
            return None  # as for a container: no hint
        if uses_pod_level_resources(pod, self.pod_level_resources):
            return None
        for c in pod.all_containers():
            blocks = state.blocks(pod.uid, c.name)
            if blocks is not None:
                return _regenerate_hints(blocks, requested)
        return self.calculate_hints(state.machine_state or {}, pod, requested)

    # -- allocate / remove ----------------------------------------------------------------------
    def allocate(self, state: MemoryState, pod: Pod, container: Container,
                 hint: Optional[Hint] = None) -> MemoryState:
        """Give ``container`` its memory blocks under the Topology Manager's ``hint`` (idempotent).

        ``AllocationError`` when no NUMA mask can hold the request.
        """
        state = state.copy()
        if not self._eligible(pod):
            return state
        existing = state.blocks(pod.uid, container.name)
        if existing is not None:
            self._update_reusable(pod, container, existing)
            return state
        hint = hint or Hint(None, False)
        requested = container_requested_resources(container)
        ms = state.machine_state or {}
        best = hint
        if hint.numa is None:
            default = best_hint(self.calculate_hints(ms, pod, requested).get(MEMORY, []))
            if default is None:
                raise AllocationError("[memorymanager] failed to get the default NUMA affinity, "
                                      "no NUMA nodes with enough memory is available")
            if not default.preferred and hint.preferred:
                raise AllocationError("[memorymanager] failed to find the default preferred hint")
            best = default
        mask = mask_key(best.numa)
        unknown = [n for n in mask if n not in ms]
        if unknown:
            raise AllocationError(f"[memorymanager] the hint uses NUMA nodes {unknown} that are not in the machine state")
        if not _satisfies(ms, mask, requested):
            candidates = [h for h in self.calculate_hints(ms, pod, requested).get(MEMORY, [])
                          if set(mask) <= set(h.numa)]
            if not candidates:
                raise AllocationError("[memorymanager] failed to find NUMA nodes to extend the current topology hint")
            extended = best_hint(candidates)
            if not extended.preferred and best.preferred:
                raise AllocationError("[memorymanager] failed to find the extended preferred hint")
            best = extended
            mask = mask_key(best.numa)
        if len(mask) > 1 and any(_conflicts(ms[nid], mask) for nid in mask):
            raise AllocationError("[memorymanager] preferred hint violates NUMA node allocation")
        blocks: List[Block] = []
        for resource in sorted(requested, key=lambda r: (r != MEMORY, r)):
            size = requested[resource]
            blocks.append(Block(mask, resource, size))
            to_charge = max(0, size - self._reusable_for(pod.uid, mask, resource))
            for nid in mask:
                node = ms[nid]
                node.number_of_assignments += 1
                node.cells = list(mask)
                if to_charge:
                    table = (node.memory_map or {}).get(resource)
                    if table is not None:
                        to_charge = _charge(table, to_charge)
        self._update_reusable(pod, container, blocks)
        state.set_blocks(pod.uid, container.name, blocks)
        _shrink_init_blocks(state, pod, container, blocks)
        return state

    def remove_container(self, state: MemoryState, pod_uid: str, container_name: str) -> MemoryState:
        """Release a container's blocks (nothing happens when it has none)."""
        state = state.copy()
        blocks = state.blocks(pod_uid, container_name)
        if blocks is None:
            return state
        state.delete(pod_uid, container_name)
        ms = state.machine_state or {}
        for b in blocks:
            released = b.size
            for nid in b.numa_affinity or ():
                node = ms.get(nid)
                if node is None:
                    continue
                node.number_of_assignments -= 1
                if node.number_of_assignments == 0:
                    node.cells = [nid]
                table = (node.memory_map or {}).get(b.type)
                if not released or table is None or table.reserved == 0:
                    continue
                take = min(table.reserved, released)
                table.reserved -= take
                table.free += take
                released -= take
        return state

    def allocatable_memory(self, state: MemoryState) -> List[Block]:
        """Allocatable bytes per NUMA node and resource (zero entries left out)."""
        out = []
        for nid, node in sorted((state.machine_state or {}).items()):
            for res, table in sorted((node.memory_map or {}).items()):
                if table.allocatable:
                    out.append(Block((nid,), res, table.allocatable))
        return out

    # -- init-container reuse bookkeeping -----------------------------------------------------------
    def _update_reusable(self, pod: Pod, container: Container, blocks: Sequence[Block]) -> None:
        for uid in [u for u in self.reusable if u != pod.uid]:
            del self.reusable[uid]  # bookkeeping only ever concerns the pod being admitted
        if _is_regular_init(pod, container):
            pod_reuse = self.reusable.setdefault(pod.uid, {})
            for b in blocks:
                per_mask = pod_reuse.setdefault(mask_key(b.numa_affinity or ()), {})
                if b.size > per_mask.get(b.type, 0):
                    per_mask[b.type] = b.size
            return
        for b in blocks:
            key = mask_key(b.numa_affinity or ())
            left = self._reusable_for(pod.uid, key, b.type)
            if left:
                self.reusable[pod.uid][key][b.type] = 0 if b.size >= left else left - b.size


def _charge(table: MemoryTable, size: int) -> int:
    """Move up to ``size`` bytes from free to reserved; the part that did not fit."""
    if size <= 0 or table.free <= 0:
        return size
    take = min(table.free, size)
    table.free -= take
    table.reserved += take
    return size - take


def _conflicts(node: NUMANodeState, mask: Mask) -> bool:
    """A used node may join a multi-NUMA mask only when its group is exactly that mask."""
    if node.number_of_assignments <= 0:
        return False
    cells = node.cells or []
    return len(cells) == 1 or sorted(cells) != list(mask)


def _satisfies(ms: NUMANodeMap, mask: Mask, requested: Mapping[str, int]) -> bool:
    for r, size in requested.items():
        free = sum(((ms[n].memory_map or {}).get(r) or MemoryTable(0, 0, 0, 0, 0)).free for n in mask)
        if free < size:
            return False
    return True


def _regenerate_hints(blocks: Sequence[Block], requested: Mapping[str, int]) -> Optional[Dict[str, List[Hint]]]:
    # The container already has memory (kubelet restart): hint exactly what it holds,
    # or nothing when the blocks no longer match the request.
    if len(blocks) != len(requested):
        return None
    hints: Dict[str, List[Hint]] = {r: [] for r in requested}
    for b in blocks:
        if b.type not in requested or b.size != requested[b.type]:
            return None
        hints[b.type].append(Hint(mask_key(b.numa_affinity or ()), True))
    return hints


def _is_regular_init(pod: Pod, container: Container) -> bool:
    for c in pod.init_containers:
        if c.name == container.name:
            return not c.is_sidecar
    return False


def _shrink_init_blocks(state: MemoryState, pod: Pod, container: Container, blocks: Sequence[Block]) -> None:
    # Earlier regular init containers gave memory this block reused: shrink their blocks so
    # the pod's block sizes add up to what is really reserved.
    for block in blocks:
        left = block.size
        for init in pod.init_containers:
            if init.name == container.name or left == 0:
                break
            if init.is_sidecar:
                continue
            init_blocks = state.blocks(pod.uid, init.name)
            if not init_blocks:
                continue
            updated = []
            for ib in init_blocks:
                if ib.size and ib.type == block.type and mask_key(ib.numa_affinity or ()) == mask_key(block.numa_affinity or ()):
                    take = min(ib.size, left)
                    ib = Block(ib.numa_affinity, ib.type, ib.size - take)
                    left -= take
                updated.append(ib)
            state.set_blocks(pod.uid, init.name, updated)
