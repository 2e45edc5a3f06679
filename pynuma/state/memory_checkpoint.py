"""The kubelet's ``memory_manager_state`` checkpoint: read, verify, write (v1 format).

>>> cp = parse_checkpoint(render_checkpoint("Static", MemoryState({}, {})))
>>> cp.policy_name, cp.checksum == compute_checksum(cp)
('Static', True)

File: ``{"policyName", "machineState": {numa: {"numberOfAssignments",
"memoryMap": {resource: {"total","systemReserved","allocatable","reserved","free"}},
"cells"}}, "entries": {podUID: {container: [{"numaAffinity","type","size"}]}},
"checksum"}`` with sizes in bytes.  The checksum is FNV-1a 32-bit over the
go-spew ``%#v`` text of the checkpoint with its checksum set to 0 (sorted map
keys, no addresses); a stored 0 is accepted, as the kubelet does for files
written before checksums were enforced.  A corrupt file is an error, never
reset: the file is left as it is.
"""
from __future__ import annotations

import os

from .._dataclass import dataclass
from .._jsonsubset import loads_as_go as _json_loads  # json.loads, without importing json for a plain file
from .._mapping import Mapping
from .atomic import write_atomic
from ..errors import CheckpointError, ChecksumMismatch
from ..policy.memorymanager.state import (Assignments, Block, MemoryState, MemoryTable, NUMANodeMap, NUMANodeState,
                                   assignments_to_dict, machine_state_to_dict)
from .checksum import Struct, Typed, fnv1a32, spew

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing (and dataclasses) cost `pynuma state show` its start-up budget
    from typing import Any, Dict, List, Optional

FILENAME = "memory_manager_state"
CORRUPT = "checkpoint is corrupted"


@dataclass
class MemoryCheckpoint:
    """A restored checkpoint: the policy that wrote it, its state and the stored checksum."""

    policy_name: str
    state: MemoryState
    checksum: int


# -- checksum (helper C's go-spew renderer and FNV-1a) --------------------------------------------

def _ptr(struct: Struct) -> str:
    # A pointer stored in a map prints as "<*>" and its struct (no type: spew's ignoreNextType).
    return "<*>" + spew(struct)


def _node(n: NUMANodeState) -> str:
    mm = None if n.memory_map is None else {
        r: _ptr(Struct([("TotalMemSize", Typed("uint64", t.total)),
                        ("SystemReserved", Typed("uint64", t.system_reserved)),
                        ("Allocatable", Typed("uint64", t.allocatable)),
                        ("Reserved", Typed("uint64", t.reserved)), ("Free", Typed("uint64", t.free))]))
        for r, t in n.memory_map.items()}
    return _ptr(Struct([("NumberOfAssignments", Typed("int", n.number_of_assignments)),
                        ("MemoryMap", Typed("map[v1.ResourceName]*state.MemoryTable", mm)),
                        ("Cells", Typed("[]int", n.cells))]))


def _block(b: Block) -> Struct:
    return Struct([("NUMAAffinity", Typed("[]int", None if b.numa_affinity is None else list(b.numa_affinity))),
                   ("Type", Typed("v1.ResourceName", b.type)), ("Size", Typed("uint64", b.size))])


def checksum_preimage(cp: MemoryCheckpoint) -> str:
    """The go-spew ``%#v`` text of the checkpoint with checksum 0 (what the kubelet hashes)."""
    ms = cp.state.machine_state
    entries = cp.state.assignments
    body = Struct([
        ("PolicyName", Typed("string", cp.policy_name)),
        ("MachineState", Typed("state.NUMANodeMap", None if ms is None else {n: _node(s) for n, s in ms.items()})),
        ("Entries", Typed("state.ContainerMemoryAssignments", None if entries is None else {
            uid: {name: None if blocks is None else [_block(b) for b in blocks] for name, blocks in conts.items()}
            for uid, conts in entries.items()})),
        ("Checksum", Typed("checksum.Checksum", 0)),
    ])
    return spew(Typed("*state.MemoryManagerCheckpoint", body))


def compute_checksum(cp: MemoryCheckpoint) -> int:
    return fnv1a32(checksum_preimage(cp))


# -- decoding with Go encoding/json semantics (unknown keys ignored, names case-insensitive) ------

_ABSENT = object()


def _get(obj: Mapping, name: str, absent=None):
    if name in obj:
        return obj[name]
    low = name.lower()
    for k, v in obj.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return absent


def _uint(v: Any, where: str) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v >= 1 << 64:
        raise CheckpointError(f"{where}: expected an unsigned integer, got {v!r}")
    return v


def _int(v: Any, where: str) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int):
        raise CheckpointError(f"{where}: expected an integer, got {v!r}")
    return v


def _int_list(v: Any, where: str) -> Optional[List[int]]:
    if v is None:
        return None
    if not isinstance(v, list):
        raise CheckpointError(f"{where}: expected a list of integers")
    return [_int(i, where) for i in v]


def _map(v: Any, where: str) -> Optional[Mapping]:
    if v is None:
        return None
    if not isinstance(v, Mapping):
        raise CheckpointError(f"{where}: expected an object")
    return v


_TABLE = (("total", "total"), ("system_reserved", "systemReserved"), ("allocatable", "allocatable"),
          ("reserved", "reserved"), ("free", "free"))


def _go_int_key(key: str) -> Optional[int]:
    """A JSON object key as Go decodes an ``int`` map key (``strconv.ParseInt(key, 10, 64)``), else None.

    Python's ``int()`` also takes spaces, ``_`` and non-ASCII digits; Go takes an optional sign and
    ASCII digits only, within int64.
    """
    digits = key[1:] if key[:1] in "+-" else key
    if not digits or not digits.isascii() or not digits.isdigit() or len(digits.lstrip("0")) > 19:
        return None
    value = int(key)
    return value if -(1 << 63) <= value < 1 << 63 else None


def _decode_machine(raw: Any) -> Optional[NUMANodeMap]:
    raw = _map(raw, "machineState")
    if raw is None:
        return None
    out: NUMANodeMap = {}
    for key, node in raw.items():
        nid = _go_int_key(key)
        if nid is None:
            shown = repr(key) if len(key) <= 48 else f"{key[:40]!r}... ({len(key)} characters)"
            raise CheckpointError(f"machineState: NUMA node key {shown} is not an integer")
        node = _map(node, f"machineState.{key}") or {}
        mm_raw = _map(_get(node, "memoryMap"), f"machineState.{key}.memoryMap")
        mm: Optional[Dict[str, MemoryTable]] = None
        if mm_raw is not None:
            mm = {}
            for res, t in mm_raw.items():
                t = _map(t, f"machineState.{key}.memoryMap.{res}") or {}
                mm[res] = MemoryTable(**{a: _uint(_get(t, js), f"machineState.{key}.memoryMap.{res}.{js}")
                                         for a, js in _TABLE})
        out[nid] = NUMANodeState(_int(_get(node, "numberOfAssignments"), f"machineState.{key}.numberOfAssignments"),
                                 mm, _int_list(_get(node, "cells"), f"machineState.{key}.cells"))
    return out


def _decode_entries(raw: Any) -> Optional[Assignments]:
    raw = _map(raw, "entries")
    if raw is None:
        return None
    out: Assignments = {}
    for uid, conts in raw.items():
        conts = _map(conts, f"entries.{uid}")
        out[uid] = {}
        for name, blocks in (conts or {}).items():
            if blocks is not None and not isinstance(blocks, list):
                raise CheckpointError(f"entries.{uid}.{name}: expected a list of blocks")
            parsed = []
            for i, b in enumerate(blocks or []):
                b = _map(b, f"entries.{uid}.{name}[{i}]") or {}
                aff = _int_list(_get(b, "numaAffinity"), f"entries.{uid}.{name}[{i}].numaAffinity")
                typ = _get(b, "type")
                if typ is not None and not isinstance(typ, str):
                    raise CheckpointError(f"entries.{uid}.{name}[{i}].type: expected a string")
                parsed.append(Block(None if aff is None else tuple(aff), typ or "",
                                    _uint(_get(b, "size"), f"entries.{uid}.{name}[{i}].size")))
            out[uid][name] = parsed
    return out


def parse_checkpoint(text: str, policy: Optional[str] = None, verify: bool = True) -> MemoryCheckpoint:
    """Decode checkpoint text; ``CheckpointError`` when corrupt, checksum-mismatched or of another policy."""
    try:
        raw = _json_loads(text)
    except (RecursionError, ValueError) as err:  # a truncated file: encoding/json's "unexpected end of JSON input"
        from .cpu_checkpoint import json_error  # the one rule for every checkpoint (imported only on failure)

        raise CheckpointError(json_error(text, err)) from None
    if not isinstance(raw, Mapping):
        raise CheckpointError(f"{CORRUPT}: expected a JSON object")
    if _get(raw, "data") is not None and _get(raw, "machineState") is None:
        raise CheckpointError("unsupported memory_manager_state format (v3 'data' wrapper); only v1 is read")
    name = _get(raw, "policyName")
    if name is not None and not isinstance(name, str):
        raise CheckpointError(f"{CORRUPT}: policyName is not a string")
    stored = _uint(_get(raw, "checksum"), "checksum")
    if stored >= 1 << 32:
        raise CheckpointError(f"{CORRUPT}: checksum {stored} is not a 32-bit value")
    # The kubelet decodes into a checkpoint whose maps start empty: an absent key stays an
    # empty map (hashed as "map[]"), an explicit null makes it nil (hashed as "<nil>").
    machine = _get(raw, "machineState", _ABSENT)
    entries = _get(raw, "entries", _ABSENT)
    state = MemoryState({} if machine is _ABSENT else _decode_machine(machine),
                        {} if entries is _ABSENT else _decode_entries(entries))
    cp = MemoryCheckpoint(name or "", state, stored)
    if verify and stored != 0:
        computed = compute_checksum(cp)
        if stored != computed:
            raise ChecksumMismatch(CORRUPT, stored, computed)
    if policy is not None and cp.policy_name != policy:
        import json

        raise CheckpointError(f"[memorymanager] configured policy {json.dumps(policy)} differs from state "
                              f"checkpoint policy {_quoted_name(cp.policy_name)}")
    return cp


def _quoted_name(name: str) -> str:
    """A stored policy name as the error quotes it, cut when long (the message stays one short line)."""
    import json

    return json.dumps(name) if len(name) <= 64 else f"{json.dumps(name[:56])[:-1]}...\" ({len(name)} characters)"


def _go_json(cp: MemoryCheckpoint) -> str:
    import json

    body: Dict[str, Any] = {"policyName": cp.policy_name}
    ms = machine_state_to_dict(cp.state.machine_state)
    # Go's encoding/json sorts map keys as strings ("10" before "2").
    body["machineState"] = None if ms is None else dict(sorted(ms.items()))
    if cp.state.assignments:  # `omitempty`
        body["entries"] = assignments_to_dict(cp.state.assignments)
    body["checksum"] = cp.checksum
    return json.dumps(body, separators=(",", ":"))


def render_checkpoint(policy_name: str, state: MemoryState) -> str:
    """Checkpoint text for ``state`` with its checksum, as the kubelet writes it."""
    cp = MemoryCheckpoint(policy_name, state, 0)
    cp.checksum = compute_checksum(cp)
    return _go_json(cp)


def read_checkpoint(path: str, policy: Optional[str] = None, verify: bool = True) -> MemoryCheckpoint:
    """Read and verify a checkpoint file; ``CheckpointError`` naming the file otherwise."""
    from ..inputfile import read_capped  # never blocks, never reads unbounded

    try:
        text = read_capped(path).decode("utf-8")
    except OSError as err:
        raise CheckpointError(f"{path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise CheckpointError(f"{path}: {CORRUPT}: not UTF-8 text") from None
    try:
        return parse_checkpoint(text, policy=policy, verify=verify)
    except CheckpointError as err:
        raise CheckpointError(f"{path}: {err}") from None


def write_checkpoint(path: str, policy_name: str, state: MemoryState) -> None:
    """Write ``state`` atomically (temp file + fsync + rename)."""
    write_atomic(path, render_checkpoint(policy_name, state))


def default_path(state_dir: str) -> str:
    return os.path.join(state_dir, FILENAME)


def save_manager(manager, path: str) -> None:
    """Write a :class:`~pynuma.policy.memorymanager.manager.MemoryManager`'s state as ``memory_manager_state``."""
    write_checkpoint(path, manager.policy.name, manager.state)


def restore_manager(manager, path: str) -> None:
    """Restore and validate ``path`` into ``manager`` (``CheckpointError`` when it does not fit its policy)."""
    cp = read_checkpoint(path, policy=manager.policy.name)
    manager.state = manager.policy.start(cp.state)
