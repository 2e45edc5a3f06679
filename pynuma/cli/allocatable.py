"""``pynuma allocatable``: node allocatable from capacity, reservations and hard eviction thresholds.

Capacity comes from discovery (online CPUs, MemTotal, hugepage pools,
statvfs of the kubelet root dir, pid limits) unless ``--capacity`` says
otherwise; the result is what the kubelet reports as ``status.allocatable``
and what it enforces on the ``kubepods`` cgroup.
"""
from __future__ import annotations

from . import _common
from ._streams import stdout
from ..agent.capacity import discover_capacity  # one rule, shared with the agent


def _parser():
    p = _common.parser("allocatable", __doc__.splitlines()[0].split(": ", 1)[1])
    p.add_argument("--kube-reserved", metavar="RES=Q,...", help="e.g. cpu=1,memory=2Gi")
    p.add_argument("--system-reserved", metavar="RES=Q,...")
    p.add_argument("--reserved-cpus", metavar="LIST",
                   help="CPUs kept for the system (cpulist); replaces the cpu of both reservations by its size")
    p.add_argument("--eviction-hard", metavar="SIG<Q,...", help="default: the kubelet's Linux defaults")
    p.add_argument("--kubelet-config", metavar="FILE", help="KubeletConfiguration YAML (flags override it)")
    p.add_argument("--capacity", metavar="RES=Q,...", help="override discovered capacity entries")
    p.add_argument("--max-pods", metavar="N", type=int, default=110)
    p.add_argument("--kubelet-root", metavar="DIR", default="/var/lib/kubelet")
    p.add_argument("--pci-resource", action="append", default=[], metavar="MATCH=RESOURCE",
                   help="offer matching PCI devices as an extended resource (10de=nvidia.com/gpu, "
                        "class:0302=example.com/gpu); repeatable")
    p.add_argument("--pci-map", metavar="FILE", help="the same rules as a JSON/YAML list")
    p.add_argument("--fs-stats", metavar="FILE", help="nodefs figures from a kubelet /stats/summary (node.fs) "
                   "instead of statvfs: ephemeral-storage capacity of a --root dump")
    _common.add_root(p)
    _common.add_json(p)
    return p


def _pci_capacity(fs, args) -> dict:
    """Extended resources offered by PCI devices under the user's mapping (one unit per device)."""
    if not args.pci_resource and not args.pci_map:
        return {}  # no mapping, nothing offered: the ledger's modules need not load
    from ..ledger.devices import capacity, offered_devices, parse_rules, rules_from_json
    from ..quantity import Quantity

    rules = parse_rules(args.pci_resource)
    if args.pci_map:
        from ..inputfile import load_items

        rules += rules_from_json(list(load_items(args.pci_map)), args.pci_map)
    if not rules:
        return {}
    from ..discover.devices import discover_devices

    return {name: Quantity(n) for name, n in capacity(offered_devices(discover_devices(fs), rules)).items()}


_BYTE_RESOURCES = ("memory", "ephemeral-storage", "hugepages-")
_QUANTITY_COLUMNS = ("capacity", "kube_reserved", "system_reserved", "eviction_hard", "reservation", "allocatable",
                     "enforced")


def _humanize(rows) -> None:
    """Byte resources in the one human format; counts (cpu, pods, pid) as the kubelet writes them."""
    from ..quantity import Quantity
    from ._units import human_bytes

    for r in rows:
        if not r["resource"].startswith(_BYTE_RESOURCES):
            continue
        for c in _QUANTITY_COLUMNS:
            if r[c] is not None:
                r[c] = human_bytes(Quantity.parse(r[c]).value())


def main(argv) -> int:
    args = _parser().parse_args(argv)
    from ..errors import InputError
    from ..fsroot import FsRoot
    from ..config.kubelet import KubeletConfig, load_kubelet_config, parse_reserved_cpus
    from ..policy.allocatable import (
        hard_eviction_reservation, node_allocatable_enforced, node_allocatable_reservation,
        node_status_allocatable, parse_resource_list, reserved_cpus_override, validate_node_allocatable,
        validate_reserved,
    )
    from ..policy.eviction.thresholds import ThresholdError, parse_flags, parse_threshold_config

    from ..limits import INT32_MAX

    if not 0 <= args.max_pods <= INT32_MAX:  # maxPods is an int32 in KubeletConfiguration
        raise InputError(f"--max-pods: must be between 0 and {INT32_MAX}, got {args.max_pods}")
    kc = load_kubelet_config(args.kubelet_config) if args.kubelet_config else KubeletConfig()
    kube = (validate_reserved(parse_resource_list(args.kube_reserved, "--kube-reserved"), "--kube-reserved")
            if args.kube_reserved is not None else validate_reserved(kc.reserved("kube"), "kubeReserved"))
    system = (validate_reserved(parse_resource_list(args.system_reserved, "--system-reserved"), "--system-reserved")
              if args.system_reserved is not None else validate_reserved(kc.reserved("system"), "systemReserved"))
    try:
        hard_map = parse_flags(args.eviction_hard, "<") if args.eviction_hard is not None else kc.eviction_hard
        hard = parse_threshold_config([], hard_map, None, None, None)
    except ThresholdError as err:
        raise InputError(err.describe(args.kubelet_config if args.eviction_hard is None else None)) from None
    except InputError as err:
        raise InputError(f"--eviction-hard: {err}") from None
    fs = FsRoot(args.root)
    from ..machine_root import require_machine_root

    require_machine_root(fs)
    fs_given = None
    if args.fs_stats:
        from ..pressure.fsstats import load_fs_stats

        fs_given = load_fs_stats(args.fs_stats)
    unknown: dict = {}
    cap = discover_capacity(fs, args.kubelet_root, args.max_pods, fs_given, unknown)
    cap.update(_pci_capacity(fs, args))
    cap.update(parse_resource_list(args.capacity, "--capacity"))
    unknown = {k: why for k, why in unknown.items() if k not in cap}
    cpus = cap.get("cpu")
    num_cpus = int(cpus.amount) if cpus is not None else None
    reserved_cpus = (parse_reserved_cpus(args.reserved_cpus, "--reserved-cpus", num_cpus)
                     if args.reserved_cpus is not None else kc.reserved_cpu_set(num_cpus))
    kube, system = reserved_cpus_override(kube, system, len(reserved_cpus))
    validate_node_allocatable(cap, kube, system, hard)
    status_cap = {k: v for k, v in cap.items() if k != "pid"}  # pid is internal: not on the Node object
    reservation = node_allocatable_reservation(cap, kube, system, hard)
    allocatable = node_status_allocatable(status_cap, kube, system, hard)
    enforced = node_allocatable_enforced({k: v for k, v in cap.items() if k != "pods"}, kube, system)
    eviction = hard_eviction_reservation(hard, cap)
    rows = []
    for k in cap:
        rows.append({"resource": k, "capacity": str(cap[k]), "kube_reserved": str(kube[k]) if k in kube else None,
                     "system_reserved": str(system[k]) if k in system else None,
                     "eviction_hard": str(eviction[k]) if k in eviction else None,
                     "reservation": str(reservation[k]) if k in reservation else None,
                     "allocatable": str(allocatable[k]) if k in allocatable else None,
                     "enforced": str(enforced[k]) if k in enforced else None})
    if args.json:
        _common.print_json({"resources": rows,
                            "capacity": {k: str(v) for k, v in status_cap.items()},
                            "allocatable": {k: str(v) for k, v in allocatable.items()},
                            "kubepods_limits": {k: str(v) for k, v in enforced.items()},
                            "unknown": unknown})
        return 0
    _humanize(rows)
    w = stdout().write
    cols = ("resource", "capacity", "kube_reserved", "system_reserved", "eviction_hard", "allocatable", "enforced")
    heads = ("RESOURCE", "CAPACITY", "KUBE", "SYSTEM", "EVICTION", "ALLOCATABLE", "KUBEPODS")
    widths = [max(len(h), *(len(r[c] or "-") for r in rows)) for c, h in zip(cols, heads)]
    w("  ".join(h.ljust(n) for h, n in zip(heads, widths)).rstrip() + "\n")
    for r in rows:
        w("  ".join((r[c] or "-").ljust(n) for c, n in zip(cols, widths)).rstrip() + "\n")
    for k, why in unknown.items():
        w(f"{k.ljust(widths[0])}  unknown: {why}; give --fs-stats FILE or --capacity {k}=Q\n")
    w("\nALLOCATABLE = capacity - kube - system - eviction (memory also minus hugepages); "
      "KUBEPODS = limit on the kubepods cgroup (eviction part not subtracted). pid is internal to the node.\n"
      "--json gives the exact quantities the kubelet reports.\n")
    return 0
