"""The kubelet's ``cpu_manager_state`` and ``memory_manager_state``, derived from the ledger.

The ledger is the one source of truth: both files are regenerated from a
:class:`~pynuma.ledger.model.LedgerView` after every commit, each written
atomically (temp file, fsync, rename, directory fsync), the CPU file first.
A crash between the two renames leaves files that are *behind* the ledger,
never half-written ones; the next writer (or :func:`sync`) sees the
difference and rewrites them, and ``pynuma state check DIR`` reports it.
Temp files are named ``.<file>.<random>.tmp`` so the next writer, holding
the ledger lock, removes any a killed writer left behind.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional

from ..cpuset import CPUSet
from ..state import cpu_checkpoint, memory_checkpoint
from ..state.atomic import write_atomic
from .model import LedgerView, NodeConfig

CPU_FILE = cpu_checkpoint.CHECKPOINT_NAME
MEMORY_FILE = memory_checkpoint.FILENAME
FILES = (CPU_FILE, MEMORY_FILE)  # write order: CPU first


def memory_policy(config: NodeConfig):
    """The static Memory Manager policy of ``config.memory`` (``None`` when not configured)."""
    if not config.memory:
        return None
    from ..policy.memorymanager.requests import NodeInfo
    from ..policy.memorymanager.static_policy import StaticPolicy

    machine = [NodeInfo(int(n), int(mem), tuple((int(kb), int(p)) for kb, p in pools))
               for n, mem, pools in config.memory["machine"]]
    reserved = {int(n): {r: int(b) for r, b in res.items()} for n, res in config.memory["reserved"].items()}
    return StaticPolicy(machine, reserved)


def memory_state(view: LedgerView):
    """The Memory Manager state the entries imply (machine state replayed from the blocks)."""
    from ..policy.memorymanager.state import MemoryState

    policy = memory_policy(view.config)
    assignments = view.memory_assignments()
    if policy is None:
        return MemoryState({}, assignments)
    return MemoryState(policy.replay(assignments), assignments)


def memory_overcommit(view: LedgerView) -> Optional[str]:
    """Why the entries' memory blocks do not fit the machine (``None`` when they do)."""
    want: Dict[str, int] = {}
    for conts in view.memory_assignments().values():
        for blocks in conts.values():
            for b in blocks:
                want[b.type] = want.get(b.type, 0) + b.size
    got: Dict[str, int] = {}
    for node in (memory_state(view).machine_state or {}).values():
        for res, table in (node.memory_map or {}).items():
            got[res] = got.get(res, 0) + table.reserved
    for res, size in sorted(want.items()):
        if got.get(res, 0) < size:
            return f"memory blocks of {res} ({size} bytes) exceed what is free on their NUMA nodes"
    return None


def has_files(config: NodeConfig) -> bool:
    """Whether a ledger with this configuration derives any checkpoint file."""
    return config.cpu_policy is not None or bool(config.memory)


def derive(view: LedgerView) -> Dict[str, str]:
    """File name -> the exact text the kubelet would hold for this ledger state (only configured managers)."""
    out: Dict[str, str] = {}
    cfg = view.config
    if cfg.cpu_policy == "static":
        state = view.cpu_state()
        out[CPU_FILE] = cpu_checkpoint.dumps("static", state.default, state.assignments)
    elif cfg.cpu_policy is not None:
        out[CPU_FILE] = cpu_checkpoint.dumps(cfg.cpu_policy, CPUSet(), {})
    if cfg.memory:
        out[MEMORY_FILE] = memory_checkpoint.render_checkpoint(memory_policy(cfg).name, memory_state(view))
    return out


def stale_temps(directory: str) -> List[str]:
    """Temp files of checkpoint writes in ``directory`` (all stale while the ledger lock is held)."""
    prefixes = tuple(f".{name}." for name in FILES)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(os.path.join(directory, n) for n in names if n.startswith(prefixes) and n.endswith(".tmp"))


class _Unreadable(str):
    """What a checkpoint path holds when it is not a readable regular file (never equal to a derivation)."""


def _read(path: str) -> Optional[str]:
    from ..inputfile import read_capped

    try:
        return read_capped(path).decode("utf-8", "surrogateescape")  # never blocks, never reads unbounded
    except FileNotFoundError:
        return None
    except OSError as err:
        return _Unreadable(f"{path}: {err.strerror or err}")


def sync(directory: str, texts: Dict[str, str]) -> List[str]:
    """Remove stale temps, then rewrite each file whose content differs from ``texts``; the names rewritten.

    Call with the ledger lock held: it is what makes every temp file stale.
    """
    for tmp in stale_temps(directory):
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    written = []
    for name in FILES:
        want = texts.get(name)
        if want is None:
            continue
        path = os.path.join(directory, name)
        if _read(path) != want:
            write_atomic(path, want)
            written.append(name)
    return written


@dataclass(frozen=True)
class Finding:
    """One way the files on disk differ from what they should be."""

    file: str
    problem: str  # "missing", "behind", "stale-temp", "disagree"
    detail: str

    def to_json(self) -> Dict[str, str]:
        return {"file": self.file, "problem": self.problem, "detail": self.detail}


def check(directory: str, texts: Dict[str, str]) -> List[Finding]:
    """Differences between the files in ``directory`` and the ledger's derivation (nothing is written)."""
    out: List[Finding] = []
    for name in FILES:
        want = texts.get(name)
        if want is None:
            continue
        have = _read(os.path.join(directory, name))
        if have is None:
            out.append(Finding(name, "missing", "the ledger has state for this file but it does not exist"))
        elif isinstance(have, _Unreadable):
            out.append(Finding(name, "unreadable", f"{have} (the ledger rewrites it)"))
        elif have != want:
            out.append(Finding(name, "behind", "differs from what the ledger derives "
                                               "(a writer died between commit and file write, or it was edited)"))
    out += [Finding(os.path.basename(t), "stale-temp", "temp file left by a killed writer") for t in stale_temps(directory)]
    return out


def cross_check(cpu_text: Optional[str], memory_text: Optional[str]) -> List[Finding]:
    """Without a ledger: a checkpoint that does not verify, or CPU and memory checkpoints naming different pods.

    Under the static Memory Manager every container with exclusive CPUs is
    Guaranteed and so holds memory blocks: a (pod, container) in the CPU
    file but not in the memory file means the two were not written together.
    """
    from ..errors import CheckpointError, details

    out: List[Finding] = []
    cpu = mem = None
    for name, text, load in ((CPU_FILE, cpu_text, cpu_checkpoint.load),
                             (MEMORY_FILE, memory_text, memory_checkpoint.parse_checkpoint)):
        if text is None:
            continue
        try:  # each file verified on its own, so a lone corrupt file is reported too
            loaded = load(text)
        except CheckpointError as err:
            out.append(Finding(name, "corrupt", str(err) + details(err)))
            continue
        if name == CPU_FILE:
            cpu = loaded
        else:
            mem = loaded
    if cpu is None or mem is None or mem.policy_name != "Static":
        return out
        return []
    blocks = mem.state.assignments or {}
    for pod, conts in sorted(cpu.assignments.items()):
        for cname in sorted(conts):
            if not (blocks.get(pod) or {}).get(cname):
                out.append(Finding(MEMORY_FILE, "disagree",
                                   f"pod {pod} container {cname} has exclusive CPUs in {CPU_FILE} "
                                   f"but no memory in {MEMORY_FILE}"))
    return out
