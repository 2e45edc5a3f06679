"""What the ledger commands share: the state directory, opening the ledger, node allocatable, tables."""
from __future__ import annotations

import os
from typing import Dict, Iterable, List, Optional

from ..errors import InputError

STATE_DIR_ENV = "PYNUMA_STATE_DIR"
DEFAULT_MAX_PODS = 110


def add_state_dir(p, help_text: str = "directory of the ledger and the kubelet checkpoint files") -> None:
    p.add_argument("--state-dir", metavar="DIR", default=os.environ.get(STATE_DIR_ENV),
                   help=f"{help_text} (default: ${STATE_DIR_ENV})")


def state_dir_or_fail(args) -> str:
    if not args.state_dir:
        raise InputError(f"needs --state-dir DIR (or ${STATE_DIR_ENV}): where the ledger lives")
    return existing_state_dir(args.state_dir)


def existing_state_dir(path: str) -> str:
    """``path`` when it is a directory; else an :class:`InputError` saying what it is instead."""
    if not os.path.isdir(path):
        raise InputError(f"--state-dir {path}: " + ("not a directory" if os.path.lexists(path) else
                                                    "no such directory"))
    return path


def ledger_path(state_dir: str) -> str:
    from ..ledger.store import DB_NAME

    return os.path.join(state_dir, DB_NAME)


def open_ledger(state_dir: str, repair: bool = True):
    """The ledger of ``state_dir`` (created on first use); its checkpoint files live beside it."""
    from ..ledger.store import Ledger

    return Ledger(ledger_path(state_dir), repair=repair)


def add_allocatable(p) -> None:
    p.add_argument("--allocatable", metavar="RES=Q,...",
                   help="node allocatable, e.g. cpu=8,memory=30Gi,pods=110,hugepages-1Gi=4Gi "
                        "(default: the ledger's, else discovered as the kubelet would report it)")
    p.add_argument("--max-pods", metavar="N", type=int, default=DEFAULT_MAX_PODS,
                   help=f"pods allowed when allocatable is discovered (default {DEFAULT_MAX_PODS})")


def parse_allocatable(text: str) -> Dict[str, object]:
    from ..policy.allocatable import parse_resource_list

    values = parse_resource_list(text, "--allocatable")
    if not values:
        raise InputError("--allocatable: no resources given")
    for name, q in values.items():
        if q.amount < 0:
            raise InputError(f"--allocatable: {name} must not be negative, got {q}")
    return values


CORE = ("cpu", "memory", "ephemeral-storage")


def check_max_pods(max_pods: int) -> None:
    """``--max-pods`` is ``maxPods`` of KubeletConfiguration: an int32, not negative."""
    from ..limits import INT32_MAX

    if not 0 <= max_pods <= INT32_MAX:
        raise InputError(f"--max-pods: must be between 0 and {INT32_MAX}, got {max_pods}")


def discovered_allocatable(root: str, max_pods: int, kubelet_root: str = "/var/lib/kubelet"):
    """``(allocatable, unknown)``: node allocatable as the kubelet reports it with its defaults
    (capacity minus default hard eviction), and the core resources discovery could not measure
    (a dump without ``/proc/meminfo``, a host without a kubelet disk): those are not checked."""
    from ..config.kubelet import KubeletConfig
    from ..fsroot import FsRoot
    from ..policy.allocatable import node_status_allocatable
    from ..policy.eviction.thresholds import parse_threshold_config
    from .allocatable import discover_capacity

    check_max_pods(max_pods)
    hard = parse_threshold_config([], KubeletConfig().eviction_hard, None, None, None)
    with FsRoot(root) as fs:
        cap = discover_capacity(fs, kubelet_root, max_pods)
    cap.pop("pid", None)
    return node_status_allocatable(cap, {}, {}, hard), tuple(r for r in CORE if r not in cap)


def load_manifests(path: str) -> List:
    """Pods of a manifest file, defaulted as the API server would (requests from limits)."""
    from ..pod import load_pods

    return load_pods(path, defaulted=True)


def entry_rows(entries: Iterable) -> List[List[str]]:
    rows = []
    for e in entries:
        held = []
        for c, s in sorted(e.placement.cpus.items()):
            held.append(f"{c}:cpus={s}")
        for c, devs in sorted(e.placement.devices.items()):
            held += [f"{c}:{r}={','.join(ids)}" for r, ids in sorted(devs.items())]
        for c, blocks in sorted(e.placement.memory.items()):
            held += [f"{c}:{b.type}@{','.join(map(str, b.numa_affinity or ()))}" for b in blocks]
        req = ",".join(f"{k}={v}" for k, v in sorted(e.to_json()["requests"].items())) or "-"
        rows.append([e.uid, f"{e.namespace}/{e.name}", e.state, req, " ".join(held) or "-"])
    return rows


def print_table(heads: List[str], rows: List[List[str]]) -> None:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    print("  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip())
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def quantities_json(units: Optional[Dict[str, int]]) -> Optional[Dict[str, str]]:
    """Scheduler integers as quantity strings (``pods`` stays a count)."""
    if units is None:
        return None
    from ..policy.podrequests import from_units

    out = {k: str(v) for k, v in sorted(from_units({k: n for k, n in units.items() if k != "pods"}).items())}
    if "pods" in units:
        out["pods"] = str(units["pods"])
    return out
