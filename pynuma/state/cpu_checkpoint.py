"""``cpu_manager_state``: the kubelet's CPU Manager checkpoint, read and written compatibly.

File content (v2, what the kubelet writes)::

    {"policyName":"static","defaultCpuSet":"0,5-11","entries":{"<pod>":{"<container>":"1-4"}},"checksum":N}

Legacy v1 files have flat ``entries`` (container ID -> cpulist) and are
migrated through a container map.  The checksum is FNV-1a-32 of the go-spew
dump of the struct (see :mod:`pynuma.state.checksum`); 0 means "not set".
Restore follows the kubelet: decode and verify as v1, else as v2; a bad
file raises :class:`CheckpointError` and is never rewritten.

>>> text = dumps("none", CPUSet.parse("1-3"), {"pod": {"container1": CPUSet.parse("4-6")}})
>>> str(load(text).default)
'1-3'
"""
from __future__ import annotations

import os

from .._jsonsubset import loads_as_go as _json_loads  # json.loads, without importing json for a plain file
from .atomic import write_atomic
from ..cpuset import CPUSet
from ..errors import CheckpointError, ChecksumMismatch, InputError
from .checksum import Struct, Typed, checksum_of
from .gocpuset import go_quote, parse as go_parse

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Any, Dict, List, Mapping, Optional, Tuple

CHECKPOINT_NAME = "cpu_manager_state"
DEFAULT_DIR = "/var/lib/kubelet"
TYPE_NAME = "*state.CPUManagerCheckpoint"
V1_ENTRIES_TYPE = "map[string]string"
V2_ENTRIES_TYPE = "map[string]map[string]string"
MAX_UINT64 = (1 << 64) - 1


class _Pairs(list):
    """A JSON object kept as ordered (key, value) pairs, so duplicate and case-variant keys decode as Go does."""


#: encoding/json's error for a text that ends inside a value (a truncated file, ``{``, ``""``)
UNEXPECTED_END = "unexpected end of JSON input"
_JSON_SPACE = " \t\n\r"


def json_error(text: str, err: Exception) -> str:
    """What to report for ``text`` that the JSON decoder refused with ``err`` (shared by every checkpoint).

    A text that stops before its value is complete gets encoding/json's own words,
    :data:`UNEXPECTED_END`; Python's decoder says it in several ways (nothing left at the
    error position, a string never closed, a literal or sign cut short).
    """
    if isinstance(err, RecursionError):  # the decoder recurses once per level of nesting
        return "invalid JSON: nested too deeply"
    pos = getattr(err, "pos", None)
    if pos is not None:
        rest = text[pos:].rstrip(_JSON_SPACE)
        msg = getattr(err, "msg", "")
        if not rest or msg.startswith("Unterminated string") or (
                msg == "Expecting value" and rest in ("-", "t", "tr", "tru", "f", "fa", "fal", "fals", "n", "nu", "nul")):
            return UNEXPECTED_END
    return f"invalid JSON: {err}"


def _decode(text: str) -> Any:
    try:
        return _json_loads(text, object_pairs_hook=_Pairs)
    except (RecursionError, ValueError) as err:
        raise CheckpointError(json_error(text, err)) from None


def _type_name(raw: Any) -> str:
    if isinstance(raw, _Pairs):
        return "object"
    if isinstance(raw, list):
        return "array"
    if isinstance(raw, bool):
        return "bool"
    if isinstance(raw, (int, float)):
        return "number"
    return "string"


def _bad(raw: Any, struct: str, field: str, gotype: str) -> CheckpointError:
    return CheckpointError(f"json: cannot unmarshal {_type_name(raw)} into Go struct field "
                           f"{struct}.{field} of type {gotype}")


def _bad_number(raw: Any, struct: str, field: str, gotype: str) -> CheckpointError:
    # A number that does not fit an integer field is named with its text ("number -1").
    return CheckpointError(f"json: cannot unmarshal number {raw!r} into Go struct field "
                           f"{struct}.{field} of type {gotype}")


def _string_map(raw: Any, struct: str, field: str) -> Optional[Dict[str, str]]:
    if raw is None:
        return None
    if not isinstance(raw, _Pairs):
        raise _bad(raw, struct, field, V1_ENTRIES_TYPE)
    out: Dict[str, str] = {}
    for k, v in raw:
        if v is None:
            v = ""
        if not isinstance(v, str):
            raise _bad(v, struct, field, "string")
        out[k] = v
    return out


class CPUCheckpoint:
    """A decoded, verified checkpoint: raw strings as stored, plus the format it was read as."""

    __slots__ = ("policy_name", "default_cpuset", "entries", "checksum", "format")

    def __init__(self, policy_name: str, default_cpuset: str, entries: Dict[str, Dict[str, str]],
                 checksum: int = 0, format: str = "v2") -> None:
        self.policy_name, self.default_cpuset, self.entries = policy_name, default_cpuset, entries
        self.checksum, self.format = checksum, format

    def to_json(self) -> Dict[str, Any]:
        return {"policyName": self.policy_name, "defaultCpuSet": self.default_cpuset,
                "entries": self.entries, "checksum": self.checksum, "format": self.format}


def hashed_text(policy_name: str, default_cpuset: str, entries: Optional[Mapping], v1: bool = False) -> str:
    """The exact text whose FNV-1a-32 is the checksum (``entries`` flat for v1, ``None`` = nil map)."""
    from .checksum import spew

    return spew(_struct(policy_name, default_cpuset, entries, v1))


def _struct(policy_name: str, default_cpuset: str, entries: Optional[Mapping], v1: bool) -> Typed:
    return Typed(TYPE_NAME, Struct([
        ("PolicyName", Typed("string", policy_name)),
        ("DefaultCPUSet", Typed("string", default_cpuset)),
        ("Entries", Typed(V1_ENTRIES_TYPE if v1 else V2_ENTRIES_TYPE, None if entries is None else dict(entries))),
        ("Checksum", Typed("checksum.Checksum", 0)),
    ]))


def compute_checksum(policy_name: str, default_cpuset: str, entries: Optional[Mapping], v1: bool = False) -> int:
    return checksum_of(_struct(policy_name, default_cpuset, entries, v1))


def _decode_as(doc: Any, v1: bool) -> CPUCheckpoint:
    # The kubelet's V2 type is an alias (CPUManagerCheckpointV2 = CPUManagerCheckpoint), so Go's
    # errors name the struct CPUManagerCheckpoint.
    struct = "CPUManagerCheckpointV1" if v1 else "CPUManagerCheckpoint"
    if doc is None:  # json.Unmarshal of `null` into a struct leaves it as it was: empty, checksum 0
        doc = _Pairs()
    if not isinstance(doc, _Pairs):
        raise CheckpointError(f"json: cannot unmarshal {_type_name(doc)} into Go value of type state.{struct}")
    policy, default, checksum = "", "", 0
    entries: Optional[Dict[str, Any]] = {}
    for key, raw in doc:  # Go matches field names case-insensitively; the last match wins
        k = key.lower()
        if k == "policyname":
            if raw is not None and not isinstance(raw, str):
                raise _bad(raw, struct, "policyName", "string")
            policy = raw if raw is not None else policy
        elif k == "defaultcpuset":
            if raw is not None and not isinstance(raw, str):
                raise _bad(raw, struct, "defaultCpuSet", "string")
            default = raw if raw is not None else default
        elif k == "checksum":
            if raw is None:
                continue
            if isinstance(raw, bool) or not isinstance(raw, (int, float)):
                raise _bad(raw, struct, "checksum", "checksum.Checksum")
            if not isinstance(raw, int) or not 0 <= raw <= MAX_UINT64:
                raise _bad_number(raw, struct, "checksum", "checksum.Checksum")
            checksum = raw
        elif k == "entries":
            if v1:
                entries = _string_map(raw, struct, "entries")
            elif raw is None:
                entries = None
            else:
                if not isinstance(raw, _Pairs):
                    raise _bad(raw, struct, "entries", V2_ENTRIES_TYPE)
                entries = {}
                for pod, inner in raw:
                    entries[pod] = _string_map(inner, struct, "entries")  # None = Go nil map
    if checksum != 0:
        computed = compute_checksum(policy, default, entries, v1)
        if computed != checksum:
            raise ChecksumMismatch("checkpoint is corrupted", checksum, computed)
    if not v1 and entries:
        entries = {pod: inner or {} for pod, inner in entries.items()}
    return CPUCheckpoint(policy, default, entries or {}, checksum, "v1" if v1 else "v2")


def decode(text: str) -> CPUCheckpoint:
    """Decode and verify a checkpoint as the kubelet does (v1 first, then v2); ``CheckpointError`` on failure."""
    doc = _decode(text)
    try:
        return _decode_as(doc, v1=True)
    except CheckpointError:
        return _decode_as(doc, v1=False)


def migrate(cp: CPUCheckpoint, container_map: Optional[Mapping[str, Tuple[str, str]]]) -> Dict[str, Dict[str, str]]:
    """v2 entries of a checkpoint (v1 entries mapped container ID -> (pod UID, container name))."""
    if cp.format == "v2":
        return cp.entries
    out: Dict[str, Dict[str, str]] = {}
    for cid, cset in cp.entries.items():
        ref = (container_map or {}).get(cid)
        if ref is None:
            raise CheckpointError("error migrating v1 checkpoint state to v2 checkpoint state: "
                                  f"containerID '{cid}' not found in initial containers list")
        pod, name = ref
        out.setdefault(pod, {})[name] = cset
    return out


class RestoredState:
    """What a restore yields: policy name, shared pool, assignments and the checkpoint read."""

    __slots__ = ("policy_name", "default", "assignments", "checkpoint")

    def __init__(self, policy_name: str, default: CPUSet, assignments: Dict[str, Dict[str, CPUSet]],
                 checkpoint: Optional[CPUCheckpoint]) -> None:
        self.policy_name, self.default, self.assignments = policy_name, default, assignments
        self.checkpoint = checkpoint


def load(text: Optional[str], configured_policy: Optional[str] = None,
         container_map: Optional[Mapping[str, Tuple[str, str]]] = None) -> RestoredState:
    """Restore from checkpoint text (the kubelet's ``restoreState``); ``CheckpointError`` on any problem.

    ``configured_policy`` (when given) must equal the stored policy name.
    ``text=None`` means there is no file: the kubelet starts from an empty state.
    """
    if text is None:
        return RestoredState(configured_policy or "", CPUSet(), {}, None)
    try:
        cp = decode(text)
        entries = migrate(cp, container_map)
        if configured_policy is not None and configured_policy != cp.policy_name:
            raise CheckpointError(f"configured policy {go_quote(configured_policy, 64)} differs from state "
                                  f"checkpoint policy {go_quote(cp.policy_name, 64)}")  # one short line
        # The kubelet's own parser (k8s.io/utils/cpuset.Parse): what it refuses, with its words.
        try:
            default = go_parse(cp.default_cpuset)
        except ValueError as err:
            raise CheckpointError(f"could not parse default cpu set {go_quote(cp.default_cpuset)}: {err}") from None
        assignments: Dict[str, Dict[str, CPUSet]] = {}
        for pod in sorted(entries):
            assignments[pod] = {}
            for name, text_set in sorted(entries[pod].items()):
                try:
                    assignments[pod][name] = go_parse(text_set)
                except ValueError as err:
                    raise CheckpointError(f"could not parse cpuset {go_quote(text_set)} for container "
                                          f"{go_quote(name)} in pod {go_quote(pod)}: {err}") from None
    except CheckpointError as err:
        raise CheckpointError(f"could not restore state from checkpoint: {err}") from None
    return RestoredState(cp.policy_name, default, assignments, cp)


def _go_json(obj: Any) -> str:
    # encoding/json: compact, sorted map keys, HTML-sensitive characters escaped.
    import json

    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def dumps(policy_name: str, default: CPUSet, assignments: Mapping[str, Mapping[str, CPUSet]]) -> str:
    """The v2 file text the kubelet would write for this state (with its checksum)."""
    entries = {pod: {name: str(cs) for name, cs in sorted(cons.items())}
               for pod, cons in sorted(assignments.items())}
    default_text = str(default)
    checksum = compute_checksum(policy_name, default_text, entries)
    doc: Dict[str, Any] = {"policyName": policy_name, "defaultCpuSet": default_text}
    if entries:
        doc["entries"] = entries
    doc["checksum"] = checksum
    return _go_json(doc)


def read_file(path: str, configured_policy: Optional[str] = None,
              container_map: Optional[Mapping[str, Tuple[str, str]]] = None,
              missing_ok: bool = False) -> RestoredState:
    """Restore from a file; ``CheckpointError`` naming it when it is unreadable or corrupt.

    A missing file is an :class:`InputError`, or (``missing_ok``) the empty
    state the kubelet starts from.
    """
    from ..inputfile import read_capped  # never blocks, never reads unbounded

    try:
        text = read_capped(path).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        if missing_ok:
            return load(None, configured_policy)
        raise InputError(f"{path}: no such file") from None
    except OSError as err:
        raise CheckpointError(f"{path}: {err.strerror or err}") from None
    try:
        return load(text, configured_policy, container_map)
    except CheckpointError as err:
        raise CheckpointError(f"{path}: {err}") from None


def write_file(path: str, policy_name: str, default: CPUSet,
               assignments: Mapping[str, Mapping[str, CPUSet]]) -> str:
    """Write the state atomically (temp file, fsync, rename); returns the text written."""
    text = dumps(policy_name, default, assignments)
    write_atomic(path, text)
    return text


def is_cpu_checkpoint(doc: Any) -> bool:
    """Whether parsed JSON looks like a cpu_manager_state document."""
    if isinstance(doc, list):  # _Pairs
        keys = {k.lower() for k, _ in doc}
    elif isinstance(doc, dict):
        keys = {str(k).lower() for k in doc}
    else:
        return False
    return "defaultcpuset" in keys


def entries_list(assignments: Mapping[str, Mapping[str, CPUSet]]) -> List[Tuple[str, str, CPUSet]]:
    """Assignments flattened to sorted ``(pod, container, cpus)`` rows."""
    return [(p, c, s) for p in sorted(assignments) for c, s in sorted(assignments[p].items())]


def default_path(state_dir: str = DEFAULT_DIR) -> str:
    """Where the kubelet keeps the checkpoint under ``state_dir`` (``--root-dir``)."""
    return os.path.join(state_dir, CHECKPOINT_NAME)


def load_state(state_dir: str, policy_name: str = "static"):
    """``(policy name, CPUState)`` from ``state_dir``, empty when the file does not exist yet."""
    from ..policy.cpumanager.static_policy import CPUState

    st = read_file(default_path(state_dir), policy_name, missing_ok=True)
    return st.policy_name or policy_name, CPUState(st.default, st.assignments)


def save_state(state_dir: str, policy_name: str, state) -> str:
    """Write a :class:`CPUState` to ``state_dir`` atomically; returns the path."""
    path = default_path(state_dir)
    write_file(path, policy_name, state.default, state.assignments)
    return path
